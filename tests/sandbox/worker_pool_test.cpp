// The pool end to end: real sandboxed BEAMs parsing real parsers.
#include "sandbox/worker_pool.hpp"

#include <unistd.h>

#include <atomic>
#include <boost/json/parse.hpp>

#include "sandbox_fixture.hpp"

namespace fl::testing {

using sandbox::outcome_kind;

const char* const temperature_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(<<t::signed-16, h>>, %{meta: %{frame_port: 1}} = meta) do
    Logger.info("decoding #{byte_size(<<t::16, h>>)} bytes")
    {%{temperature: t / 10, humidity: h}, measured_at: meta.transceived_at, location: {13.4, 52.5}}
  end
  def parse(_, _), do: []
end
)";

TEST(worker_pool, parses_a_batch_in_one_round_trip) {
  auto& pool = shared_pool();
  std::vector<sandbox::packet_input> packets = {binary_packet(std::string("\x00\xEB\x3C", 3), {{"frame_port", 1}}),
                                                binary_packet("zz", {{"frame_port", 2}})};
  auto out = pool.parse("m1", {temperature_parser}, {.timeout_ms = 2000}, {}, packets);
  ASSERT_EQ(out.size(), 2u);
  ASSERT_EQ(out[0].kind, outcome_kind::ok) << out[0].message;
  ASSERT_EQ(out[0].readings.size(), 1u);
  EXPECT_EQ(out[0].readings[0].data.at("temperature").as_double(), 23.5);
  EXPECT_EQ(out[0].readings[0].data.at("humidity").as_int64(), 60);
  EXPECT_EQ(out[0].readings[0].measured_at, 1'700'000'000'000'000);
  ASSERT_TRUE(out[0].readings[0].location);
  EXPECT_EQ(out[0].readings[0].location->first, 13.4);
  ASSERT_EQ(out[0].logs.size(), 1u);
  EXPECT_NE(out[0].logs[0].find("decoding 3 bytes"), std::string::npos);
  EXPECT_EQ(out[1].kind, outcome_kind::ok);
  EXPECT_TRUE(out[1].readings.empty());
}

TEST(worker_pool, check_names_line_and_call) {
  auto result = shared_pool().check(
      "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(_, _), do: "
      "File.read!(\"/etc/passwd\")\nend\n");
  EXPECT_FALSE(result.ok);
  ASSERT_FALSE(result.problems.empty());
  bool named = false;
  for (const auto& [line, message] : result.problems) {
    named = named || (line == 3 && message.find("File.read!") != std::string::npos);
  }
  EXPECT_TRUE(named);
  EXPECT_TRUE(shared_pool().check(temperature_parser).ok);
}

const char* const atom_counting_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, meta), do: %{atom_keys: meta.meta |> Map.keys() |> Enum.count(&is_atom/1)}
end
)";

// A packet whose meta has `keys` identifier-like keys never seen before.
sandbox::packet_input packet_with_new_keys(std::size_t keys) {
  static std::atomic<int> round{0};
  const std::string prefix = "k" + std::to_string(::getpid()) + "r" + std::to_string(round++) + "_";
  boost::json::object meta;
  for (std::size_t i = 0; i < keys; ++i) meta[prefix + std::to_string(i)] = 1;
  return binary_packet("x", std::move(meta));
}

TEST(worker_pool, meta_keys_become_atoms_only_up_to_a_budget_per_call) {
  auto out = shared_pool().parse("atoms", {atom_counting_parser}, {.timeout_ms = 5000}, {},
                                 std::vector{packet_with_new_keys(15'000)});
  ASSERT_EQ(out.at(0).kind, outcome_kind::ok) << out[0].message;
  EXPECT_EQ(out[0].readings.at(0).data.at("atom_keys").as_int64(), 10'000);  // the rest stayed strings
}

TEST(worker_pool, a_worker_over_its_memory_bound_is_replaced_after_the_call_that_compiled) {
  sandbox::pool_config config;
  config.recycle_memory_bytes = 1;  // every worker is over it once its memory total reaches the host
  sandbox::worker_pool pool(config);
  for (int call = 0; call < 3; ++call) {
    auto out = pool.parse("memory", {temperature_parser}, {}, {}, std::vector{binary_packet("x")});
    ASSERT_EQ(out.size(), 1u);
  }
  EXPECT_EQ(pool.workers_started(), 3u);  // each call compiled on a fresh worker, reported, was replaced
}

TEST(worker_pool, a_worker_whose_atom_table_grew_is_replaced_long_before_it_fills) {
  sandbox::pool_config config;
  config.recycle_atoms = 200'000;  // of the VM's 1,048,576
  sandbox::worker_pool pool(config);
  std::size_t calls = 0;
  while (pool.workers_started() < 2 && calls < 40) {
    auto out = pool.parse("atoms", {atom_counting_parser}, {.timeout_ms = 5000}, {},
                          std::vector{packet_with_new_keys(10'000)});
    ASSERT_EQ(out.at(0).kind, outcome_kind::ok) << out[0].message;
    ++calls;
  }
  EXPECT_EQ(pool.workers_started(), 2u) << "after " << calls << " calls of 10,000 new atoms each";
}

const char* const spinning_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_payload, _meta), do: spin(0)
  defp spin(n), do: spin(n + 1)
end
)";

TEST(worker_pool, a_call_starts_no_packet_after_its_budget_ran_out) {
  std::vector<sandbox::packet_input> batch(10, binary_packet("x"));
  auto out = shared_pool().parse("budget", {spinning_parser}, {.timeout_ms = 100, .budget_ms = 250}, {}, batch);
  ASSERT_GE(out.size(), 1u);
  EXPECT_LE(out.size(), 5u);  // 100 ms each: the budget ends the call after about three
  for (const auto& o : out) EXPECT_EQ(o.kind, outcome_kind::timeout) << o.message;
  auto all = shared_pool().parse("budget", {spinning_parser}, {.timeout_ms = 20}, {},
                                 std::span(batch.data(), 4));  // no budget: every packet
  EXPECT_EQ(all.size(), 4u);
}

namespace {

const char* const preloading_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def preloads, do: [device: []]
  def parse(_payload, meta) do
    {lon, lat} = meta.device.location.coordinates
    %{name: meta.device.name, lon: lon, lat: lat, mode: get(meta, [:device, :meta, :mode]),
      last_v: meta.device.fields["status"]["last_v"]}
  end
end
)";

const char* const not_preloading_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def preloads, do: []
  def parse(_payload, meta), do: %{has_device: Map.has_key?(meta, :device)}
end
)";

// preloads/0 is parser code: it runs under the packet's deadline like parse/2.
const char* const spinning_preloads_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def preloads, do: spin(0)
  defp spin(n), do: spin(n + 1)
  def parse(_payload, _meta), do: %{ok: true}
end
)";

sandbox::parse_context with_device() {
  sandbox::parse_context context;
  context.device = boost::json::parse(R"({"id":"d-1","name":"Meter 7","slug":"meter-7","meta":{"mode":"eco"},
      "location":{"type":"Point","coordinates":[13.4,52.5]},"fields":{"status":{"last_v":4}}})");
  return context;
}

}  // namespace

// The data of the one reading `parser` makes of one packet with `context`; null when it made none.
boost::json::value one_reading(const char* parser, const sandbox::parse_context& context) {
  auto out = shared_pool().parse("preloads", {parser}, {.timeout_ms = 5000}, context, std::vector{binary_packet("x")});
  if (out.size() != 1 || out[0].kind != outcome_kind::ok || out[0].readings.size() != 1) {
    ADD_FAILURE() << (out.empty() ? std::string("no outcome") : out[0].message);
    return nullptr;
  }
  return out[0].readings[0].data;
}

TEST(worker_pool, meta_device_is_there_for_a_parser_whose_preloads_ask_for_it) {
  EXPECT_EQ(one_reading(preloading_parser, with_device()),
            boost::json::parse(R"({"name":"Meter 7","lon":13.4,"lat":52.5,"mode":"eco","last_v":4})"));
}

TEST(worker_pool, meta_device_is_left_out_when_preloads_do_not_name_it) {
  EXPECT_EQ(one_reading(not_preloading_parser, with_device()), boost::json::parse(R"({"has_device":false})"));
}

// A tenant controls its device's meta: its keys become atoms under the same per-call budget as a
// packet's meta keys (atoms are never collected), the rest stay strings.
const char* const device_atom_counting_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def preloads, do: [device: []]
  def parse(_payload, meta), do: %{atom_keys: meta.device.meta |> Map.keys() |> Enum.count(&is_atom/1)}
end
)";

TEST(worker_pool, a_device_meta_flood_makes_atoms_only_up_to_the_budget_per_call) {
  sandbox::parse_context context = with_device();
  auto& meta = context.device.as_object()["meta"].emplace_object();
  const std::string prefix = "dev" + std::to_string(::getpid()) + "_";
  for (int i = 0; i < 15'000; ++i) meta[prefix + std::to_string(i)] = 1;
  EXPECT_EQ(one_reading(device_atom_counting_parser, context), boost::json::parse(R"({"atom_keys":10000})"));
}

TEST(worker_pool, preloads_that_never_return_time_out_like_a_parse) {
  auto out = shared_pool().parse("preloads", {spinning_preloads_parser}, {.timeout_ms = 50}, with_device(),
                                 std::vector{binary_packet("x"), binary_packet("y")});
  ASSERT_EQ(out.size(), 2u);
  for (const auto& o : out) EXPECT_EQ(o.kind, outcome_kind::timeout) << o.message;
  // The worker lives on: the next call parses.
  auto next = shared_pool().parse("preloads", {not_preloading_parser}, {.timeout_ms = 2000}, with_device(),
                                  std::vector{binary_packet("x")});
  ASSERT_EQ(next.size(), 1u);
  EXPECT_EQ(next[0].kind, outcome_kind::ok) << next[0].message;
}

// preloads/0 that raises, or answers something that is not a list: the packet fails as a parse
// error (raise) or gets no device (anything else); the worker is not disturbed either way.
const char* const raising_preloads_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def preloads, do: raise("no preloads today")
  def parse(_payload, _meta), do: %{ok: true}
end
)";

const char* const odd_preloads_parser = R"(
defmodule Parser do
  use Platform.Parsing.Behaviour
  def preloads, do: %{device: true}
  def parse(_payload, meta), do: %{has_device: Map.has_key?(meta, :device)}
end
)";

TEST(worker_pool, preloads_that_raise_fail_the_packet_as_a_parse_error) {
  auto out = shared_pool().parse("preloads", {raising_preloads_parser}, {.timeout_ms = 2000}, with_device(),
                                 std::vector{binary_packet("x")});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, outcome_kind::parse_error);
  EXPECT_NE(out[0].message.find("no preloads today"), std::string::npos) << out[0].message;
  EXPECT_EQ(one_reading(odd_preloads_parser, with_device()), boost::json::parse(R"({"has_device":false})"));
}

}  // namespace fl::testing
