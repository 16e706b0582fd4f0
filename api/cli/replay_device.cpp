#include "api/cli/replay_device.hpp"

#include <boost/json.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "api/cli/progress.hpp"
#include "core/json_out.hpp"
#include "pipeline/parse_limits.hpp"
#include "pipeline/parse_records.hpp"
#include "sandbox/worker_pool.hpp"
#include "storage/packets.hpp"
#include "storage/readings.hpp"
#include "storage/records.hpp"

namespace fl::cli {

namespace json = boost::json;

namespace {

constexpr std::size_t batch_size = 100;
constexpr std::size_t history_size = 50;

// What a reading says, without the fields every parse renews (id, inserted_at, ...).
json::value content(const json::object& reading) {
  json::object out;
  for (const char* key : {"measured_at", "location", "data"})
    out[key] = reading.contains(key) ? reading.at(key) : json::value(nullptr);
  return out;
}

// True when both hold the same readings, in any order.
bool same_readings(const std::vector<json::value>& a, std::vector<json::value> b) {
  if (a.size() != b.size()) return false;
  for (const auto& x : a) {
    auto it = std::find(b.begin(), b.end(), x);
    if (it == b.end()) return false;
    b.erase(it);
  }
  return true;
}

struct located_device {
  uuid mandate;
  uuid device;
};

located_device find_device(const storage::records& records, const std::string& id_text) {
  auto id = uuid::parse(id_text);
  if (!id) throw std::runtime_error("--device must be a device id");
  auto mandates = records.list(storage::record_kind::mandate, uuid::nil());
  if (!mandates) throw std::runtime_error(mandates.error().message);
  for (const auto& m : *mandates) {
    const uuid mandate = *uuid::parse(m.at("id").as_string());
    auto found = records.get({storage::record_kind::device, mandate, *id});
    if (!found) throw std::runtime_error(found.error().message);
    if (*found) return {mandate, *id};
  }
  throw std::runtime_error("no device " + id_text + " in this data directory");
}

}  // namespace

int replay_device_command(const std::string& parser_file, const std::string& device_id, const std::string& data_dir,
                          bool diff, std::optional<int> timeout_ms, const outcome_printer& print) {
  std::ifstream in(parser_file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + parser_file);
  std::stringstream text;
  text << in.rdbuf();
  const sandbox::parser_code code{text.str()};

  auto db = storage::database::open({.dir = data_dir, .read_only = true});
  if (!db) throw std::runtime_error(db.error().message);
  storage::records records(**db);
  storage::packets packets(**db);
  storage::readings readings(**db);
  const auto [mandate, device] = find_device(records, device_id);
  auto generation = readings.generation(mandate, device);
  if (!generation) throw std::runtime_error(generation.error().message);
  // The limit the server applies to this mandate's parsers, unless the command line overrides it.
  sandbox::parse_limits limits;
  limits.timeout_ms = timeout_ms.value_or(pipeline::mandate_parse_timeout(records, mandate));

  sandbox::pool_config config;
  config.max_workers = 2;
  config.max_workers_per_mandate = 2;
  sandbox::worker_pool pool(std::move(config));

  std::size_t total = 0, unchanged = 0, changed = 0, failed = 0, errors = 0;
  progress replayed("replay", "packets");
  // History newest first, from this replay's own results; the device as the server would send it.
  sandbox::parse_context context;
  auto& history = context.last_readings;
  if (pipeline::may_preload(code.source)) {
    auto doc = records.get({storage::record_kind::device, mandate, device});
    auto profiles = pipeline::profile_set::load(records, mandate);
    if (!doc || !*doc || !profiles) throw std::runtime_error("cannot read the device " + device.str());
    context.device = pipeline::parser_device_view(**doc, *profiles);
  }
  storage::scan_options chunk{.descending = false, .limit = batch_size, .cache = storage::cache_use::bypass};
  while (true) {
    auto items = packets.page(mandate, device, chunk);
    if (!items) throw std::runtime_error(items.error().message);
    if (items->empty()) break;
    chunk.after = std::pair{items->back().t, items->back().id};
    std::vector<sandbox::packet_input> inputs;
    std::vector<const storage::ordered_item*> sources;
    for (const auto& item : *items) {
      if (!pipeline::wants_parsing(item.doc)) continue;
      if (auto input = pipeline::parser_input(item.doc)) {
        inputs.push_back(std::move(*input));
        sources.push_back(&item);
      }
    }
    auto outcomes = pool.parse("replay", code, limits, context, inputs);
    total += inputs.size();
    replayed.clear();
    if (!diff) errors += static_cast<std::size_t>(print(inputs, outcomes));
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
      const auto made =
          pipeline::readings_of(outcomes[i], {device, sources[i]->id, uuid::nil(), inputs[i].transceived_at, 0});
      for (const auto& r : made) history.insert(history.begin(), {r.doc.at("data"), r.measured_at});
      if (history.size() > history_size) history.resize(history_size);
      if (!diff) continue;
      auto stored = readings.of_packet(mandate, device, *generation, sources[i]->id);
      if (!stored) throw std::runtime_error(stored.error().message);
      std::vector<json::value> before, after;
      for (const auto& r : *stored) before.push_back(content(r));
      for (const auto& r : made) after.push_back(content(r.doc));
      const bool ok = outcomes[i].kind == sandbox::outcome_kind::ok;
      if (ok && same_readings(before, after)) {
        ++unchanged;
        continue;
      }
      ok ? ++changed : ++failed;
      std::printf("packet %s (%s)\n", sources[i]->id.str().c_str(), format_iso(sources[i]->t).c_str());
      if (!ok)
        std::printf("! %s: %s\n", std::string(sandbox::outcome_name(outcomes[i].kind)).c_str(),
                    outcomes[i].message.c_str());
      for (const auto& r : before) std::printf("- %s\n", to_json(r).c_str());
      for (const auto& r : after) std::printf("+ %s\n", to_json(r).c_str());
    }
    std::fflush(stdout);
    replayed.update(total);
    if (items->size() < batch_size) break;
  }
  replayed.dismiss();
  std::fflush(stdout);
  if (diff) {
    std::fprintf(stderr, "%zu packets: %zu unchanged, %zu would change, %zu would fail\n", total, unchanged, changed,
                 failed);
  } else {
    std::fprintf(stderr, "%zu packets, %zu errors\n", total, errors);
  }
  return 0;
}

}  // namespace fl::cli
