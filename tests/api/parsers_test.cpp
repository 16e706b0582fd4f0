// Parsers in the API: stored only after the sandbox's allow-list check; read-only for mandates.
#include <future>

#include "support/api_fixture.hpp"

namespace fl::testing {

const char* const good_code = R"(defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(<<v>>, _meta), do: %{v: v}
  def parse(_, _), do: []
end
)";

const char* const evil_code = R"(defmodule Parser do
  use Platform.Parsing.Behaviour
  def parse(_, _), do: System.cmd("id", [])
end
)";

class parsers : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M");
    key_ = make_key(mandate_, "read_only");
    admin_ = make_key(mandate_, "admin");
  }
  reply create(const json::object& parser) const {
    return call("POST", "/admin/v1/mandates/" + mandate_ + "/parsers", superadmin_, json::object{{"parser", parser}});
  }
  std::string mandate_, key_, admin_;
};

TEST_F(parsers, a_checked_parser_is_stored_and_readable_by_the_mandate) {
  auto created = create({{"name", "counter"}, {"language", "ex"}, {"code", good_code}});
  ASSERT_EQ(created.status, 201) << created.text;
  EXPECT_EQ(created.data().at("mandate_id"), mandate_);
  auto listed = call("GET", "/api/v1/parsers", key_);
  ASSERT_EQ(listed.status, 200);
  ASSERT_EQ(listed.data().as_array().size(), 1u);
  EXPECT_EQ(listed.data().as_array()[0].at("code"), std::string(good_code));
  EXPECT_EQ(call("GET", "/api/v1/parsers/" + created.id(), key_).data().at("name"), "counter");
  EXPECT_EQ(call("POST", "/api/v1/parsers", admin_, json::object{{"parser", json::object{{"name", "x"}}}}).status, 405);
}

TEST_F(parsers, a_rejected_parser_is_not_stored_and_the_error_names_line_and_call) {
  auto rejected = create({{"name", "evil"}, {"code", evil_code}});
  ASSERT_EQ(rejected.status, 422) << rejected.text;
  const auto& code_errors = rejected.envelope().at("errors").at("code").as_array();
  bool named = false;
  for (const auto& e : code_errors) named = named || std::string(e.as_string()).find("line 3: call to System.cmd") == 0;
  EXPECT_TRUE(named) << rejected.text;
  EXPECT_EQ(call("GET", "/api/v1/parsers", key_).data().as_array().size(), 0u);
  EXPECT_EQ(create({{"name", "x"}, {"code", "defmodule Parser do"}}).status, 422);  // syntax error
  EXPECT_EQ(create({{"name", "x"}, {"language", "py"}, {"code", good_code}}).status, 422);
  EXPECT_EQ(create({{"name", "x"}}).status, 422);  // code required
}

TEST_F(parsers, warnings_come_with_the_stored_parser_and_a_typo_is_an_unknown_module_once) {
  const std::string warned = "defmodule Parser do\n  def parse(p, _meta) do\n    x = 1\n    p\n  end\nend\n";
  auto created = create({{"name", "warned"}, {"code", warned}});
  ASSERT_EQ(created.status, 201) << created.text;
  const auto& warnings = created.data().at("warnings").as_array();
  ASSERT_EQ(warnings.size(), 2u) << created.text;
  EXPECT_EQ(std::string(warnings[0].as_string()).find("line 1: Parser does not `use Platform.Parsing.Behaviour`"), 0u);
  EXPECT_EQ(std::string(warnings[1].as_string()).find("line 3: variable \"x\" is unused"), 0u);
  // Not stored: they belong to that check.
  EXPECT_FALSE(call("GET", "/api/v1/parsers/" + created.id(), key_).data().as_object().contains("warnings"));
  EXPECT_FALSE(create({{"name", "clean"}, {"code", good_code}}).data().as_object().contains("warnings"));

  const std::string typo =
      "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(p, _), do: Strng.upcase(p)\nend\n";
  auto rejected = create({{"name", "typo"}, {"code", typo}});
  ASSERT_EQ(rejected.status, 422) << rejected.text;
  const auto& code_errors = rejected.envelope().at("errors").at("code").as_array();
  ASSERT_EQ(code_errors.size(), 1u) << rejected.text;
  EXPECT_EQ(std::string(code_errors[0].as_string()).find("line 3: unknown module Strng"), 0u) << rejected.text;
}

TEST_F(parsers, replacing_code_is_checked_too) {
  auto created = create({{"name", "p"}, {"code", good_code}});
  const std::string path = "/admin/v1/mandates/" + mandate_ + "/parsers/" + created.id();
  EXPECT_EQ(call("PATCH", path, superadmin_, json::object{{"parser", json::object{{"code", evil_code}}}}).status, 422);
  EXPECT_EQ(call("GET", path, superadmin_).data().at("code"), std::string(good_code));
  auto renamed = call("PUT", path, superadmin_, json::object{{"parser", json::object{{"name", "renamed"}}}});
  ASSERT_EQ(renamed.status, 200) << renamed.text;
  EXPECT_EQ(renamed.data().at("name"), "renamed");
}

TEST_F(parsers, devices_carry_parser_id_and_a_used_parser_cannot_be_deleted) {
  auto parser = create({{"name", "p"}, {"code", good_code}}).id();
  const auto folder = make_folder(admin_, "F");
  auto device = call("POST", "/api/v1/devices", admin_,
                     json::object{{"device", json::object{{"name", "d"},
                                                          {"parser_id", parser},
                                                          {"tags", json::array{json::object{{"id", folder}}}}}}});
  ASSERT_EQ(device.status, 201) << device.text;
  EXPECT_EQ(device.data().at("parser_id"), parser);
  const std::string path = "/admin/v1/mandates/" + mandate_ + "/parsers/" + parser;
  EXPECT_EQ(call("DELETE", path, superadmin_).status, 409);
  EXPECT_EQ(call("PATCH", "/api/v1/devices/" + device.id(), admin_,
                 json::object{{"device", json::object{{"parser_id", nullptr}}}})
                .status,
            200);
  EXPECT_EQ(call("DELETE", path, superadmin_).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/parsers/" + parser, key_).status, 404);
}

// Compile-time code that never ends: the check runs for the whole compile limit (10 s), then fails.
const char* const endless_compile = R"(defmodule Parser do
  use Platform.Parsing.Behaviour
  @forever Stream.iterate(0, &(&1 + 1)) |> Enum.reduce(0, fn x, acc -> acc + x end)
  def parse(_, _), do: %{sum: @forever}
end
)";

TEST_F(parsers, a_mandate_checks_one_parser_at_a_time_and_never_holds_up_another_mandate) {
  auto slow = std::async(std::launch::async, [&] {
    return create({{"name", "slow"}, {"language", "ex"}, {"code", endless_compile}});
  });
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!app_->parsers.checking(mandate_) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // polling a condition
  ASSERT_TRUE(app_->parsers.checking(mandate_));
  // While it runs, a second check of the same mandate is refused at once: it would otherwise hold a
  // request thread for as long.
  auto second = create({{"name", "second"}, {"language", "ex"}, {"code", good_code}});
  EXPECT_EQ(second.status, 429) << second.text;
  // Another mandate's check runs meanwhile, in a worker of its own.
  const auto other = make_mandate("Other");
  auto theirs =
      call("POST", "/admin/v1/mandates/" + other + "/parsers", superadmin_,
           json::object{{"parser", json::object{{"name", "quick"}, {"language", "ex"}, {"code", good_code}}}});
  EXPECT_EQ(theirs.status, 201) << theirs.text;
  EXPECT_NE(slow.wait_for(std::chrono::milliseconds(0)), std::future_status::ready)
      << "the endless check should still be running";
  const auto ended = slow.get();
  EXPECT_EQ(ended.status, 422) << ended.text;
  EXPECT_NE(ended.text.find("compiling failed"), std::string::npos) << ended.text;
}

}  // namespace fl::testing
