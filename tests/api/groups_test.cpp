// Groups and member keys (issue 11): a member key may do exactly what its groups' rules grant, on
// every route; lists leave out what it may not read; key, group and mandate writes take effect on
// the next request (the principal cache is invalidated).
#include <algorithm>
#include <map>

#include "api/routes.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

namespace {

std::vector<std::string> names(const reply& r) {
  std::vector<std::string> out;
  for (const auto& item : r.data().as_array()) out.emplace_back(item.at("name").as_string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

class groups : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    admin_ = make_key(mandate_, "admin");
    open_folder_ = make_folder(admin_, "open");
    secret_folder_ = make_folder(admin_, "secret");
    open_device_ = make_device(admin_, "open-1", open_folder_);
    secret_device_ = make_device(admin_, "secret-1", secret_folder_);
    group_ = make_group({rule("device", "^open", true, true), rule("tag", "^open", true)});
    member_ = member_key({group_});
  }
  std::string make_group(std::initializer_list<json::object> rules) const {
    return api_fixture::make_group(mandate_, rules);
  }
  std::string member_key(std::initializer_list<std::string> group_ids) const {
    return make_member_key(mandate_, group_ids);
  }
  // Both devices get an interface of a manual driver instance, so actions can be made for them.
  void connect_both_devices() const {
    const auto instance = make_driver_instance(mandate_);
    for (const auto& device : {open_device_, secret_device_}) {
      auto r = call("POST", "/api/v1/devices/" + device + "/interfaces", admin_,
                    json::object{{"interface", json::object{{"driver_instance_id", instance}}}});
      ASSERT_EQ(r.status, 201) << r.text;
    }
  }
  // A stream as the server hands it out, to be read piece by piece (call() reads it whole).
  std::shared_ptr<api::body_stream> open_stream(const std::string& path, const std::string& key) const {
    auto res = router_->handle(api::http_request{.method = "GET", .path = path, .api_key_header = key});
    EXPECT_EQ(res.status, 200) << res.body;
    return res.stream;
  }
  // The stored replay of a websocket opened with ?after=, read item by item.
  std::shared_ptr<api::replay_source> open_replay(const std::string& path, const std::string& key) const {
    auto res = router_->handle(api::http_request{.method = "GET",
                                                 .path = path,
                                                 .query = "after=2000-01-01T00:00:00Z",
                                                 .api_key_header = key,
                                                 .websocket_upgrade = true,
                                                 .websocket_version = "13",
                                                 .websocket_key = "dGhlIHNhbXBsZSBub25jZQ=="});
    EXPECT_EQ(res.status, 101) << res.body;
    return res.upgrade ? res.upgrade->replay : nullptr;
  }
  // Lines of the rest of a stream, once it ended.
  static std::size_t lines_to_the_end(api::body_stream& stream) {
    std::size_t lines = 0;
    for (std::string piece = stream.next(); !piece.empty(); piece = stream.next())
      lines += static_cast<std::size_t>(std::count(piece.begin(), piece.end(), '\n'));
    return lines;
  }
  void delete_key_named(const std::string& name) const {
    const auto listed = call("GET", "/admin/v1/mandates/" + mandate_ + "/api_keys", superadmin_);
    std::string id;
    for (const auto& k : listed.data().as_array())
      if (k.at("name") == name) id = std::string(k.at("id").as_string());
    ASSERT_EQ(call("DELETE", "/admin/v1/mandates/" + mandate_ + "/api_keys/" + id, superadmin_).status, 200);
  }
  void post_packets(const std::string& device, int count) const {
    for (int i = 0; i < count; ++i) {
      auto r = call("POST", "/api/v1/devices/" + device + "/packets", admin_,
                    json::object{{"packet", json::object{{"payload_encoding", "none"}}}});
      ASSERT_EQ(r.status, 200) << r.text;
    }
  }
  std::string mandate_, admin_, open_folder_, secret_folder_, open_device_, secret_device_, group_, member_;
};

// ---- each route, allowed and denied ----

struct route_case {
  const char* name;
  const char* method;
  const char* path;  // {open} / {secret}: the devices; {open_tag} / {secret_tag}: the folders
  const char* body;
  int member_status;  // what the member gets
};

class member_routes : public groups, public ::testing::WithParamInterface<route_case> {
 protected:
  std::string target(std::string path) const {
    const auto put = [&](const std::string& from, const std::string& to) {
      for (auto at = path.find(from); at != std::string::npos; at = path.find(from)) path.replace(at, from.size(), to);
    };
    put("{open_tag}", open_folder_);
    put("{secret_tag}", secret_folder_);
    put("{open}", open_device_);
    put("{secret}", secret_device_);
    return path;
  }
};

TEST_P(member_routes, answer_as_the_rules_say) {
  const auto& c = GetParam();
  auto r = call(c.method, target(c.path), member_, target(c.body));
  EXPECT_EQ(r.status, c.member_status) << c.method << " " << c.path << ": " << r.text;
  // The same request with the mandate's admin key is not refused: the member's answer is its rules'.
  auto admin = call(c.method, target(c.path), admin_, target(c.body));
  EXPECT_NE(admin.status, 403) << admin.text;
}

constexpr const char* patch_open = R"({"device":{"name":"open-renamed"}})";
constexpr const char* new_device = R"({"device":{"name":"open-2","tags":[{"id":"{open_tag}"}]}})";
constexpr const char* new_tag = R"({"tag":{"name":"open-2"}})";
constexpr const char* packet = R"({"packet":{"payload_encoding":"none"}})";
constexpr const char* iface = R"({"interface":{"name":"i"}})";

INSTANTIATE_TEST_SUITE_P(
    groups, member_routes,
    ::testing::Values(
        route_case{"show_a_readable_device", "GET", "/api/v1/devices/{open}", "", 200},
        route_case{"show_another_device", "GET", "/api/v1/devices/{secret}", "", 403},
        route_case{"edit_an_updatable_device", "PATCH", "/api/v1/devices/{open}", patch_open, 200},
        route_case{"edit_another_device", "PATCH", "/api/v1/devices/{secret}", patch_open, 403},
        route_case{"rename_a_device_out_of_reach", "PATCH", "/api/v1/devices/{open}", R"({"device":{"name":"x"}})",
                   403},
        route_case{"delete_without_delete_right", "DELETE", "/api/v1/devices/{open}", "", 403},
        route_case{"create_without_create_right", "POST", "/api/v1/devices", new_device, 403},
        route_case{"packets_of_a_readable_device", "GET", "/api/v1/devices/{open}/packets", "", 200},
        route_case{"packets_of_another_device", "GET", "/api/v1/devices/{secret}/packets", "", 403},
        route_case{"readings_of_another_device", "GET", "/api/v1/devices/{secret}/readings", "", 403},
        route_case{"stream_of_another_device", "GET", "/api/v1/devices/{secret}/packets/stream", "", 403},
        route_case{"post_a_packet_to_an_updatable_device", "POST", "/api/v1/devices/{open}/packets", packet, 200},
        route_case{"post_a_packet_to_another_device", "POST", "/api/v1/devices/{secret}/packets", packet, 403},
        route_case{"interfaces_of_another_device", "GET", "/api/v1/devices/{secret}/interfaces", "", 403},
        route_case{"add_an_interface_to_another_device", "POST", "/api/v1/devices/{secret}/interfaces", iface, 403},
        route_case{"reparse_another_device", "POST", "/api/v1/devices/{secret}/reparse", "{}", 403},
        route_case{"socket_of_another_device", "GET", "/api/v1/devices/{secret}/packets/socket", "", 403},
        route_case{"show_a_readable_folder", "GET", "/api/v1/tags/{open_tag}", "", 200},
        route_case{"show_another_folder", "GET", "/api/v1/tags/{secret_tag}", "", 403},
        route_case{"devices_of_another_folder", "GET", "/api/v1/tags/{secret_tag}/devices", "", 403},
        route_case{"packets_of_another_folder", "GET", "/api/v1/tags/{secret_tag}/packets", "", 403},
        route_case{"socket_of_another_folder", "GET", "/api/v1/tags/{secret_tag}/readings/socket", "", 403},
        route_case{"edit_a_folder_without_update_right", "PATCH", "/api/v1/tags/{open_tag}", new_tag, 403},
        route_case{"delete_a_folder_without_delete_right", "DELETE", "/api/v1/tags/{open_tag}", "", 403},
        route_case{"create_a_folder_without_create_right", "POST", "/api/v1/tags", new_tag, 403},
        route_case{"mkdir_is_not_for_members", "POST", "/api/v1/tags/mkdir", R"({"name":"open-x"})", 403},
        route_case{"actions_of_a_readable_device", "GET", "/api/v1/devices/{open}/actions", "", 200},
        route_case{"actions_of_another_device", "GET", "/api/v1/devices/{secret}/actions", "", 403},
        route_case{"an_action_on_another_device", "POST", "/api/v1/devices/{secret}/actions",
                   R"({"action":{"type":"x"}})", 403},
        route_case{"schedules_of_another_device", "GET", "/api/v1/devices/{secret}/actions/schedules", "", 403},
        route_case{"actions_by_a_selector_leave_out_the_others", "GET", "/api/v1/devices/by-name/secret-1/actions", "",
                   200},
        route_case{"the_mandates_actions_leave_out_the_others", "GET", "/api/v1/actions", "", 200},
        route_case{"the_mandates_schedules_leave_out_the_others", "GET", "/api/v1/actions/schedules", "", 200},
        route_case{"an_action_for_another_device_through_the_mandate_route", "POST", "/api/v1/actions",
                   R"({"action":{"type":"create_packet","device_id":"{secret}"}})", 403},
        route_case{"mkdir_without_create_right", "POST", "/api/v1/tags/mkdir", R"({"name":"open / sub"})", 403},
        route_case{"mkdir_naming_a_folder_it_may_not_read", "POST", "/api/v1/tags/mkdir", R"({"name":"secret"})", 403},
        route_case{"images_of_a_readable_device", "GET", "/api/v1/devices/{open}/images", "", 200},
        route_case{"images_of_another_device", "GET", "/api/v1/devices/{secret}/images", "", 403}),
    [](const ::testing::TestParamInfo<route_case>& test) { return std::string(test.param.name); });

// ---- streams and replays outlive their request: they stop what may no longer be read ----

// 600 packets: a stream holds at most one chunk (256 per device) read before a change.
constexpr int stream_packets = 600;

TEST_F(groups, a_stream_ends_once_its_key_is_deleted) {
  post_packets(open_device_, stream_packets);
  const auto reader = make_key(mandate_, "read_only");
  auto stream = open_stream("/api/v1/devices/" + open_device_ + "/packets/stream", reader);
  ASSERT_TRUE(stream);
  std::string first = stream->next();
  delete_key_named("read_only");
  const auto total = std::count(first.begin(), first.end(), '\n') + lines_to_the_end(*stream);
  EXPECT_LT(total, stream_packets);
}

TEST_F(groups, a_stream_opened_with_a_token_ends_once_the_tokens_key_is_deleted) {
  post_packets(open_device_, stream_packets);
  const auto reader = make_key(mandate_, "read_only");
  auto minted = call("POST", "/api/v1/auth/token", reader);
  ASSERT_EQ(minted.status, 200) << minted.text;
  auto stream = open_stream("/api/v1/devices/" + open_device_ + "/packets/stream",
                            std::string(minted.data().at("token").as_string()));
  ASSERT_TRUE(stream);
  std::string first = stream->next();
  delete_key_named("read_only");
  const auto total = std::count(first.begin(), first.end(), '\n') + lines_to_the_end(*stream);
  EXPECT_LT(total, stream_packets);
}

TEST_F(groups, a_members_stream_ends_once_the_device_is_renamed_out_of_reach) {
  post_packets(open_device_, stream_packets);
  auto stream = open_stream("/api/v1/devices/" + open_device_ + "/packets/stream", member_);
  ASSERT_TRUE(stream);
  std::string first = stream->next();
  ASSERT_EQ(call("PATCH", "/api/v1/devices/" + open_device_, admin_,
                 json::object{{"device", json::object{{"name", "hidden-1"}}}})
                .status,
            200);
  const auto total = std::count(first.begin(), first.end(), '\n') + lines_to_the_end(*stream);
  EXPECT_LT(total, stream_packets);
}

TEST_F(groups, a_members_stream_ends_once_its_rules_no_longer_cover_the_device) {
  post_packets(open_device_, stream_packets);
  auto stream = open_stream("/api/v1/tags/" + open_folder_ + "/packets/stream", member_);
  ASSERT_TRUE(stream);
  std::string first = stream->next();
  ASSERT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_ + "/groups/" + group_, superadmin_,
                 json::object{{"group", json::object{{"rules", json::array{rule("tag", "^open", true)}}}}})
                .status,
            200);
  const auto total = std::count(first.begin(), first.end(), '\n') + lines_to_the_end(*stream);
  EXPECT_LT(total, stream_packets);
}

TEST_F(groups, a_members_replay_stops_once_the_device_is_renamed_out_of_reach) {
  post_packets(open_device_, 100);
  auto replay = open_replay("/api/v1/tags/" + open_folder_ + "/packets/socket", member_);
  ASSERT_TRUE(replay);
  auto first = replay->next(1, 1 << 20);
  ASSERT_TRUE(first && first->size() == 1u);
  ASSERT_EQ(call("PATCH", "/api/v1/devices/" + open_device_, admin_,
                 json::object{{"device", json::object{{"name", "hidden-1"}}}})
                .status,
            200);
  std::size_t total = 1;
  for (auto more = replay->next(100, 1 << 20); more && !more->empty(); more = replay->next(100, 1 << 20))
    total += more->size();
  EXPECT_LE(total, 16u);  // at most the one chunk read before the rename
}

// ---- folders: rights come before anything that depends on which folders exist ----

TEST_F(groups, creating_a_folder_it_may_not_create_answers_alike_whether_or_not_the_name_exists) {
  const auto maker = member_key({make_group({rule("tag", "^open", true, true, true)})});
  make_folder(admin_, "secret / inner");
  const auto create = [&](const std::string& name) {
    return call("POST", "/api/v1/tags", maker, json::object{{"tag", json::object{{"name", name}}}});
  };
  for (const auto& [existing, missing] : std::vector<std::pair<std::string, std::string>>{
           {"secret", "nope"}, {"secret / x", "nope / x"}, {"secret / inner", "nope / inner"}}) {
    const auto a = create(existing);
    const auto b = create(missing);
    EXPECT_EQ(a.status, 403) << existing << ": " << a.text;
    EXPECT_EQ(a.text, b.text) << existing;
  }
  const auto mkdir = [&](const std::string& name) {
    return call("POST", "/api/v1/tags/mkdir", maker, json::object{{"name", name}});
  };
  EXPECT_EQ(mkdir("secret").status, 403);
  EXPECT_EQ(mkdir("secret").text, mkdir("nope").text);
  EXPECT_EQ(mkdir("secret / inner").text, mkdir("nope / inner").text);
  // Inline, while creating a device.
  const auto device_maker =
      member_key({make_group({rule("device", "^open", true, true, true), rule("tag", "^open", true, true, true)})});
  const auto inline_create = [&](const std::string& name) {
    return call(
        "POST", "/api/v1/devices", device_maker,
        json::object{
            {"device", json::object{{"name", "open-7"},
                                    {"tags", json::array{json::object{{"action", "create"}, {"name", name}}}}}}});
  };
  EXPECT_EQ(inline_create("secret / inner").status, 403);
  EXPECT_EQ(inline_create("secret / inner").text, inline_create("nope / inner").text);
}

TEST_F(groups, renaming_a_folder_to_a_name_it_may_not_use_answers_alike_whether_or_not_it_exists) {
  const auto editor = member_key({make_group({rule("tag", "^open", true, true, true)})});
  make_folder(admin_, "secret / inner");
  const auto sub = make_folder(admin_, "open / sub");
  const auto rename = [&](const std::string& name) {
    return call("PATCH", "/api/v1/tags/" + sub, editor, json::object{{"tag", json::object{{"name", name}}}});
  };
  EXPECT_EQ(rename("secret / inner").status, 403);
  EXPECT_EQ(rename("secret / inner").text, rename("nope / inner").text);
  EXPECT_EQ(rename("secret / x").text, rename("nope / x").text);
}

TEST_F(groups, renaming_a_folder_needs_the_right_on_every_subfolder_it_renames) {
  const auto payroll = make_folder(admin_, "open / payroll");
  const auto editor =
      member_key({make_group({rule("tag", "^open$", true, true), rule("tag", "^archive", true, true)})});
  ASSERT_EQ(call("GET", "/api/v1/tags/" + payroll, editor).status, 403);
  auto renamed = call("PATCH", "/api/v1/tags/" + open_folder_, editor,
                      json::object{{"tag", json::object{{"name", "archive-open"}}}});
  EXPECT_EQ(renamed.status, 403) << renamed.text;
  EXPECT_EQ(call("GET", "/api/v1/tags/" + payroll, editor).status, 403);
  EXPECT_EQ(call("GET", "/api/v1/tags/" + payroll, admin_).data().at("name"), "open / payroll");
  // Moving it by parent_id is the same rename.
  const auto archive = make_folder(admin_, "archive");
  auto moved = call("PATCH", "/api/v1/tags/" + open_folder_, editor,
                    json::object{{"tag", json::object{{"parent_id", archive}}}});
  EXPECT_EQ(moved.status, 403) << moved.text;
}

TEST_F(groups, deleting_a_folder_needs_the_right_to_change_the_devices_in_it) {
  const auto trap = make_folder(admin_, "open / trap");
  ASSERT_EQ(call("PATCH", "/api/v1/devices/" + secret_device_, admin_,
                 json::object{{"device", json::object{{"tags", json::array{json::object{{"id", trap}}}}}}})
                .status,
            200);
  const auto remover = member_key({make_group({rule("tag", "^open", true, true, true, true)})});
  auto r = call("DELETE", "/api/v1/tags/" + trap, remover);
  EXPECT_EQ(r.status, 403) << r.text;
  EXPECT_EQ(call("GET", "/api/v1/devices/" + secret_device_, admin_).data().at("tags").as_array().size(), 1u);
  // An empty folder goes.
  const auto empty = make_folder(admin_, "open / empty");
  EXPECT_EQ(call("DELETE", "/api/v1/tags/" + empty, remover).status, 204);
}

// ---- lists leave out what may not be read ----

TEST_F(groups, a_readable_device_shows_only_the_folders_the_member_may_read) {
  ASSERT_EQ(call("PATCH", "/api/v1/devices/" + open_device_, admin_,
                 json::object{{"device", json::object{{"tags", json::array{json::object{{"id", open_folder_}},
                                                                           json::object{{"id", secret_folder_}}}}}}})
                .status,
            200);
  const auto folder_ids = [](const json::value& device) {
    std::vector<std::string> ids;
    for (const auto& t : device.at("tags").as_array()) ids.emplace_back(t.at("id").as_string());
    return ids;
  };
  EXPECT_EQ(folder_ids(call("GET", "/api/v1/devices/" + open_device_, member_).data()),
            std::vector<std::string>{open_folder_});
  EXPECT_EQ(folder_ids(call("GET", "/api/v1/devices", member_).data().as_array().at(0)),
            std::vector<std::string>{open_folder_});
  EXPECT_EQ(folder_ids(call("GET", "/api/v1/devices/" + open_device_, admin_).data()).size(), 2u);
}

TEST_F(groups, mandate_wide_action_routes_reach_only_readable_devices) {
  connect_both_devices();
  std::map<std::string, std::string> action_of;
  for (const auto& device : {open_device_, secret_device_}) {
    auto made = call("POST", "/api/v1/devices/" + device + "/actions/create_packet", admin_,
                     json::object{{"opts", json::object{{"payload", "01"}, {"encoding", "hex"}}}});
    ASSERT_EQ(made.status, 201) << made.text;
    action_of[device] = made.id();
  }
  auto listed = call("GET", "/api/v1/actions", member_);
  ASSERT_EQ(listed.status, 200) << listed.text;
  ASSERT_EQ(listed.data().as_array().size(), 1u);
  EXPECT_EQ(listed.data().as_array()[0].at("id"), json::value(action_of[open_device_]));
  EXPECT_EQ(call("GET", "/api/v1/actions/" + action_of[open_device_], member_).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/actions/" + action_of[secret_device_], member_).status, 403);
  EXPECT_EQ(call("POST", "/api/v1/actions/" + action_of[secret_device_] + "/cancel", member_).status, 403);
  EXPECT_EQ(call("GET", "/api/v1/actions/" + action_of[secret_device_], admin_).data().at("state"), "pending");
  // A cursor naming an action the member may not read is one that names nothing (no existence leak),
  // on the mandate's list and on a device's.
  const auto made_up = call("GET", "/api/v1/actions?retrieve_after=" + uuid::random().str(), member_);
  EXPECT_EQ(made_up.status, 400);
  for (const std::string& path : {std::string("/api/v1/actions"), "/api/v1/devices/" + open_device_ + "/actions"}) {
    auto cursor = call("GET", path + "?retrieve_after=" + action_of[secret_device_], member_);
    EXPECT_EQ(cursor.status, 400) << path << ": " << cursor.text;
    EXPECT_EQ(cursor.text, made_up.text) << path;
  }
}

TEST_F(groups, mandate_wide_schedule_routes_reach_only_readable_devices) {
  connect_both_devices();
  std::map<std::string, std::string> schedule_of;
  for (const auto& device : {open_device_, secret_device_}) {
    auto made = call("POST", "/api/v1/devices/" + device + "/actions/schedules", admin_,
                     json::object{{"type", "create_packet"},
                                  {"opts", json::object{{"payload", "01"}, {"encoding", "hex"}}},
                                  {"schedule", "0 * * * *"},
                                  {"schedule_tz", "UTC"}});
    ASSERT_EQ(made.status, 201) << made.text;
    schedule_of[device] = made.id();
  }
  auto listed = call("GET", "/api/v1/actions/schedules", member_);
  ASSERT_EQ(listed.status, 200) << listed.text;
  ASSERT_EQ(listed.data().as_array().size(), 1u);
  EXPECT_EQ(listed.data().as_array()[0].at("id"), json::value(schedule_of[open_device_]));
  EXPECT_EQ(call("GET", "/api/v1/actions/schedules/" + schedule_of[secret_device_], member_).status, 403);
  EXPECT_EQ(call("DELETE", "/api/v1/actions/schedules/" + schedule_of[secret_device_], member_).status, 403);
  EXPECT_EQ(call("GET", "/api/v1/actions/schedules/" + schedule_of[secret_device_], admin_).status, 200);
  // The member may change the open device, so it may delete that device's schedule.
  EXPECT_EQ(call("DELETE", "/api/v1/actions/schedules/" + schedule_of[open_device_], member_).status, 200);
}

TEST_F(groups, mkdir_makes_only_folders_the_rules_let_the_member_create) {
  const auto maker = member_key({make_group({rule("tag", "^open", true, false, true)})});
  auto made = call("POST", "/api/v1/tags/mkdir", maker, json::object{{"name", "open / a / b"}});
  EXPECT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(call("POST", "/api/v1/tags/mkdir", maker, json::object{{"name", "open / a / b"}}).status, 200);
  // "secret" exists but may not be read; "elsewhere / x" would be made outside the rules.
  EXPECT_EQ(call("POST", "/api/v1/tags/mkdir", maker, json::object{{"name", "secret / x"}}).status, 403);
  EXPECT_EQ(call("POST", "/api/v1/tags/mkdir", maker, json::object{{"name", "elsewhere / x"}}).status, 403);
  EXPECT_EQ(names(call("GET", "/api/v1/tags", admin_)),
            (std::vector<std::string>{"open", "open / a", "open / a / b", "secret"}));
}

TEST_F(groups, the_device_list_holds_only_readable_devices) {
  EXPECT_EQ(names(call("GET", "/api/v1/devices", member_)), std::vector<std::string>{"open-1"});
  EXPECT_EQ(names(call("GET", "/api/v1/devices", admin_)), (std::vector<std::string>{"open-1", "secret-1"}));
}

TEST_F(groups, a_selector_finds_nothing_the_member_may_not_read) {
  auto r = call("GET", "/api/v1/devices/by-name/secret-1", member_);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.data().as_array().empty());
}

TEST_F(groups, the_folder_list_holds_only_readable_folders) {
  auto r = call("GET", "/api/v1/tags", member_);
  ASSERT_EQ(r.status, 200);
  ASSERT_EQ(r.data().as_array().size(), 1u);
  EXPECT_EQ(r.data().as_array()[0].at("id"), open_folder_);
}

TEST_F(groups, a_readable_folder_lists_only_readable_devices) {
  // The secret device joins the open folder: still left out for the member.
  ASSERT_EQ(call("PATCH", "/api/v1/devices/" + secret_device_, admin_,
                 json::object{{"device", json::object{{"tags", json::array{json::object{{"id", open_folder_}},
                                                                           json::object{{"id", secret_folder_}}}}}}})
                .status,
            200);
  EXPECT_EQ(names(call("GET", "/api/v1/tags/" + open_folder_ + "/devices", member_)),
            std::vector<std::string>{"open-1"});
}

TEST_F(groups, parsers_and_drivers_need_their_own_rules) {
  auto parsers = call("GET", "/api/v1/parsers", member_);
  EXPECT_EQ(parsers.status, 200);
  EXPECT_TRUE(parsers.data().as_array().empty());
  auto drivers = call("GET", "/api/v1/drivers", member_);
  EXPECT_EQ(drivers.status, 200);
  EXPECT_TRUE(drivers.data().as_array().empty());
  EXPECT_EQ(call("GET", "/api/v1/drivers/manual", member_).status, 403);
  const auto reader = member_key({make_group({rule("driver", "^manual$", true)})});
  auto some = call("GET", "/api/v1/drivers", reader);
  ASSERT_EQ(some.data().as_array().size(), 1u);
  EXPECT_EQ(some.data().as_array()[0].at("driver"), "manual");
  EXPECT_EQ(call("GET", "/api/v1/drivers/manual", reader).status, 200);
}

TEST_F(groups, a_member_without_groups_sees_nothing_and_changes_nothing) {
  const auto nobody = member_key({});
  EXPECT_TRUE(call("GET", "/api/v1/devices", nobody).data().as_array().empty());
  EXPECT_EQ(call("GET", "/api/v1/devices/" + open_device_, nobody).status, 403);
  EXPECT_EQ(call("PATCH", "/api/v1/devices/" + open_device_, nobody, std::string(patch_open)).status, 403);
}

TEST_F(groups, create_and_delete_rights_work_on_matching_names) {
  const auto maker =
      member_key({make_group({rule("device", "^lab-", true, false, true, true), rule("tag", "^open", true)})});
  const auto device = [&](const std::string& name, const std::string& folder) {
    return json::object{{"device", json::object{{"name", name}, {"tags", json::array{json::object{{"id", folder}}}}}}};
  };
  EXPECT_EQ(call("POST", "/api/v1/devices", maker, device("lab-1", open_folder_)).status, 201);
  EXPECT_EQ(call("POST", "/api/v1/devices", maker, device("prod-1", open_folder_)).status, 403);
  EXPECT_EQ(call("POST", "/api/v1/devices", maker, device("lab-2", secret_folder_)).status, 403)
      << "a folder the member may not read";
  EXPECT_EQ(call("POST", "/api/v1/devices", maker,
                 json::object{{"device", json::object{{"name", "lab-3"},
                                                      {"tags", json::array{json::object{{"action", "create"},
                                                                                        {"name", "open-new"}}}}}}})
                .status,
            403)
      << "creating a folder inline needs the tag create right";
  EXPECT_EQ(call("DELETE", "/api/v1/devices/lab-1", maker).status, 200);
  EXPECT_EQ(call("DELETE", "/api/v1/devices/" + open_device_, maker).status, 403);
}

// ---- found by an outside probe, each its own case ----

TEST_F(groups, a_folder_rule_matches_the_full_name_the_api_shows) {
  auto child = call("POST", "/api/v1/tags", admin_,
                    json::object{{"tag", json::object{{"name", "open-plans"}, {"parent_id", secret_folder_}}}});
  ASSERT_EQ(child.status, 201) << child.text;
  EXPECT_EQ(child.data().at("name"), "secret / open-plans");
  EXPECT_EQ(call("GET", "/api/v1/tags/" + child.id(), member_).status, 403) << "^open must not match the last segment";
  const auto by_path = member_key({make_group({rule("tag", "^secret / open-plans$", true)})});
  EXPECT_EQ(call("GET", "/api/v1/tags/" + child.id(), by_path).status, 200);
}

TEST_F(groups, a_member_cannot_create_a_folder_under_one_it_cannot_see) {
  const auto maker = member_key({make_group({rule("tag", "^open", true, true, true)})});
  EXPECT_EQ(call("POST", "/api/v1/tags", maker,
                 json::object{{"tag", json::object{{"name", "open-child"}, {"parent_id", secret_folder_}}}})
                .status,
            403);
  EXPECT_EQ(
      call("POST", "/api/v1/tags", maker, json::object{{"tag", json::object{{"name", "secret / open-c2"}}}}).status,
      403);
  EXPECT_EQ(call("POST", "/api/v1/tags", maker, json::object{{"tag", json::object{{"name", "open-top"}}}}).status, 201);
}

TEST_F(groups, a_member_cannot_move_a_folder_under_one_it_cannot_see) {
  const auto mover = member_key({make_group({rule("tag", "^open", true, true)})});
  EXPECT_EQ(call("PATCH", "/api/v1/tags/" + open_folder_, mover,
                 json::object{{"tag", json::object{{"parent_id", secret_folder_}}}})
                .status,
            403);
  EXPECT_EQ(call("GET", "/api/v1/tags/" + open_folder_, admin_).data().at("name"), "open");
}

TEST_F(groups, a_member_cannot_take_a_device_out_of_a_folder_it_cannot_read) {
  // open-1 is in both folders; the member may read only "open".
  ASSERT_EQ(call("PATCH", "/api/v1/devices/" + open_device_, admin_,
                 json::object{{"device", json::object{{"tags", json::array{json::object{{"id", open_folder_}},
                                                                           json::object{{"id", secret_folder_}}}}}}})
                .status,
            200);
  EXPECT_EQ(call("PATCH", "/api/v1/devices/" + open_device_, member_,
                 json::object{{"device", json::object{{"tags", json::array{json::object{{"id", open_folder_}}}}}}})
                .status,
            403);
}

TEST_F(groups, a_member_cannot_give_a_device_a_parser_it_may_not_read) {
  auto parser =
      call("POST", "/admin/v1/mandates/" + mandate_ + "/parsers", superadmin_,
           json::object{
               {"parser", json::object{{"name", "hidden"},
                                       {"code",
                                        "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(_, _), do: "
                                        "[]\nend\n"}}}});
  ASSERT_EQ(parser.status, 201) << parser.text;
  EXPECT_EQ(call("PATCH", "/api/v1/devices/" + open_device_, member_,
                 json::object{{"device", json::object{{"parser_id", parser.id()}}}})
                .status,
            403);
  const auto allowed =
      member_key({make_group({rule("device", "^open", true, true), rule("parser", "^hidden$", true)})});
  EXPECT_EQ(call("PATCH", "/api/v1/devices/" + open_device_, allowed,
                 json::object{{"device", json::object{{"parser_id", parser.id()}}}})
                .status,
            200);
}

TEST_F(groups, a_member_cannot_connect_a_device_to_an_instance_it_may_not_read) {
  const auto instance = make_driver_instance(mandate_);
  EXPECT_EQ(call("POST", "/api/v1/devices/" + open_device_ + "/interfaces", member_,
                 json::object{{"interface", json::object{{"driver_instance_id", instance}, {"opts", json::object{}}}}})
                .status,
            403);
}

TEST_F(groups, a_group_named_twice_is_refused_on_the_key) {
  auto r =
      call("POST", "/admin/v1/mandates/" + mandate_ + "/api_keys", superadmin_,
           json::object{{"api_key", json::object{{"name", "m"},
                                                 {"role", "member"},
                                                 {"groups", json::array{json::value(group_), json::value(group_)}}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.text.find("twice"), std::string::npos);
}

// ---- writes take effect at once (the principal cache) ----

TEST_F(groups, a_changed_rule_applies_to_the_next_request) {
  ASSERT_EQ(call("GET", "/api/v1/devices/" + open_device_, member_).status, 200);
  ASSERT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_ + "/groups/" + group_, superadmin_,
                 json::object{{"group", json::object{{"rules", json::array{rule("device", "^secret", true)}}}}})
                .status,
            200);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + open_device_, member_).status, 403);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + secret_device_, member_).status, 200);
}

TEST_F(groups, a_deleted_group_grants_nothing_from_the_next_request) {
  ASSERT_EQ(call("GET", "/api/v1/devices/" + open_device_, member_).status, 200);
  ASSERT_EQ(call("DELETE", "/admin/v1/mandates/" + mandate_ + "/groups/" + group_, superadmin_).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + open_device_, member_).status, 403);
}

TEST_F(groups, a_deleted_key_is_refused_from_the_next_request) {
  auto keys = call("GET", "/admin/v1/mandates/" + mandate_ + "/api_keys", superadmin_);
  ASSERT_EQ(call("GET", "/api/v1/devices", member_).status, 200);  // cached now
  for (const auto& k : keys.data().as_array()) {
    if (k.at("name") != "member") continue;
    ASSERT_EQ(call("DELETE", "/admin/v1/mandates/" + mandate_ + "/api_keys/" + std::string(k.at("id").as_string()),
                   superadmin_)
                  .status,
              200);
  }
  EXPECT_EQ(call("GET", "/api/v1/devices", member_).status, 401);
}

TEST_F(groups, a_role_change_applies_to_the_next_request) {
  const auto key_doc = call("POST", "/admin/v1/mandates/" + mandate_ + "/api_keys", superadmin_,
                            json::object{{"api_key", json::object{{"name", "k"}, {"role", "admin"}}}});
  const std::string key(key_doc.data().at("key").as_string());
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + open_device_, key).status, 200);
  ASSERT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_ + "/api_keys/" + key_doc.id(), superadmin_,
                 json::object{{"api_key", json::object{{"role", "read_only"}}}})
                .status,
            200);
  EXPECT_EQ(call("DELETE", "/api/v1/devices/" + secret_device_, key).status, 403);
}

TEST_F(groups, resolving_a_key_twice_reads_the_store_once) {
  app_->principals.invalidate();
  ASSERT_EQ(call("GET", "/api/v1/devices", member_).status, 200);
  EXPECT_EQ(app_->principals.size(), 1u);
  ASSERT_EQ(call("GET", "/api/v1/devices", member_).status, 200);
  EXPECT_EQ(app_->principals.size(), 1u);
  EXPECT_EQ(call("GET", "/api/v1/devices", "fl_not_a_key").status, 401);
  EXPECT_EQ(app_->principals.size(), 1u) << "unknown keys are not cached";
}

// ---- managing groups ----

TEST_F(groups, a_key_may_only_name_groups_of_its_mandate) {
  const auto other = make_mandate("Other");
  auto foreign = call("POST", "/admin/v1/mandates/" + other + "/groups", superadmin_,
                      json::object{{"group", json::object{{"name", "f"}}}});
  ASSERT_EQ(foreign.status, 201);
  auto r = call("POST", "/admin/v1/mandates/" + mandate_ + "/api_keys", superadmin_,
                json::object{{"api_key", json::object{{"name", "m"},
                                                      {"role", "member"},
                                                      {"groups", json::array{json::value(foreign.id())}}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.text.find("groups"), std::string::npos);
}

TEST_F(groups, a_rule_with_a_bad_regex_is_refused_naming_it) {
  auto r =
      call("POST", "/admin/v1/mandates/" + mandate_ + "/groups", superadmin_,
           json::object{{"group", json::object{{"name", "g"}, {"rules", json::array{rule("device", "(", true)}}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.text.find("rules[0].regex"), std::string::npos) << r.text;
}

TEST_F(groups, members_read_only_their_own_groups) {
  const auto other_group = make_group({});
  auto mine = call("GET", "/api/v1/groups", member_);
  ASSERT_EQ(mine.status, 200);
  ASSERT_EQ(mine.data().as_array().size(), 1u);
  EXPECT_EQ(mine.data().as_array()[0].at("id"), group_);
  // Another group of the mandate answers exactly as an id that names nothing: no existence leak.
  const auto other = call("GET", "/api/v1/groups/" + other_group, member_);
  const auto made_up = call("GET", "/api/v1/groups/" + uuid::random().str(), member_);
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(other.text, made_up.text);
  EXPECT_EQ(call("GET", "/api/v1/groups", admin_).data().as_array().size(), 2u);
}

TEST_F(groups, another_mandates_groups_are_not_found) {
  const auto other = make_mandate("Other");
  const auto other_admin = make_key(other, "admin");
  EXPECT_EQ(call("GET", "/api/v1/groups/" + group_, other_admin).status, 404);
  EXPECT_TRUE(call("GET", "/api/v1/groups", other_admin).data().as_array().empty());
}

// ---- every route of the table: a member without rules never gets data ----

TEST_F(groups, no_route_gives_a_member_without_rules_anything) {
  const auto nobody = member_key({});
  for (const auto& r : api::api_routes()) {
    if (r.level == api::access::webhook || r.level == api::access::open) continue;
    std::string path(r.pattern);
    const auto put = [&](const std::string& from, const std::string& to) {
      for (auto at = path.find(from); at != std::string::npos; at = path.find(from)) path.replace(at, from.size(), to);
    };
    put(":device", open_device_);
    put(":tag", open_folder_);
    put("by-:selector/:identifier", "by-name/open-1");
    put(":mandate_id", mandate_);
    put(":group", group_);
    for (const char* var : {":interface", ":packet", ":action", ":schedule", ":type", ":parser", ":instance", ":driver",
                            ":image", ":version"})
      put(var, uuid::random().str());
    auto answer = call(std::string(r.method), "/api/v1/" + path, nobody, std::string("{}"));
    // Refused, or turned away for its input before anything was read or changed.
    // (426: a websocket route asked without the upgrade, answered only after its checks.)
    const bool refused = answer.status == 403 || answer.status == 404 || answer.status == 400 || answer.status == 422 ||
                         answer.status == 426;
    const bool empty_list =
        answer.status == 200 && ((answer.body.is_object() && answer.body.as_object().contains("body") &&
                                  answer.body.at("body").is_array() && answer.body.at("body").as_array().empty()) ||
                                 (answer.body.is_null() && answer.text.empty()));  // an empty NDJSON stream
    const bool own_mandate = std::string(r.pattern).starts_with("mandates");       // its own mandate record
    // A token acts as its key (so it may do nothing more): any key may get one.
    if (std::string_view(r.pattern) == "auth/token") continue;
    EXPECT_TRUE(refused || empty_list || own_mandate)
        << r.method << " " << r.pattern << " -> " << answer.status << " " << answer.text;
  }
}

}  // namespace fl::testing
