// Actions through the API: every route of the spec, interface selection, override, cancel_after,
// the state machine, events, the change feed, disabled driver instances and restarts.
#include <algorithm>
#include <set>

#include "pipeline/action_service.hpp"
#include "support/action_fixture.hpp"

namespace fl::testing {
namespace {

using actions = action_fixture;

TEST_F(actions, create_packet_action_creates_the_packet_and_is_executed) {
  auto r = create_packet_action(device_, {{"opts", json::object{{"payload", "0a0B"},
                                                                {"encoding", "hex"},
                                                                {"packet_type", "cmd"},
                                                                {"meta", json::object{{"frame_port", 7}}}}}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.data().at("state"), "pending");
  EXPECT_EQ(r.data().at("device").at("id"), json::value(device_));
  EXPECT_EQ(r.data().at("interface").at("id"), json::value(iface_));
  const std::string id = r.id();
  ASSERT_TRUE(eventually([&] { return state_of(id) == "executed"; })) << state_of(id);
  auto shown = call("GET", "/api/v1/actions/" + id, key_);
  EXPECT_EQ(event_types(shown.data()), (std::vector<std::string>{"created_by_user", "packet_created"}));
  EXPECT_FALSE(shown.data().at("executed_at").is_null());
  auto packets = call("GET", "/api/v1/devices/" + device_ + "/packets", key_);
  ASSERT_EQ(packets.data().as_array().size(), 1u);
  const auto& p = packets.data().as_array()[0];
  EXPECT_EQ(p.at("payload"), "0A0B");
  EXPECT_EQ(p.at("packet_type"), "cmd");
  EXPECT_EQ(p.at("meta").at("frame_port"), 7);
  EXPECT_EQ(p.at("driver"), "manual");
  EXPECT_EQ(p.at("interface_id"), json::value(iface_));
  EXPECT_EQ(shown.data().at("events").as_array()[1].at("meta").at("packet_id"), p.at("id"));
}

TEST_F(actions, created_by_user_event_names_the_key) {
  auto r = create_packet_action(device_);
  ASSERT_EQ(r.status, 201) << r.text;
  const auto& first = r.data().at("events").as_array().at(0);
  EXPECT_EQ(first.at("type"), "created_by_user");
  EXPECT_EQ(first.at("state"), "info");
  EXPECT_EQ(first.at("meta").at("user_name"), "admin");
  EXPECT_TRUE(uuid::parse(first.at("meta").at("user_id").as_string()));
}

TEST_F(actions, every_create_path_makes_an_action) {
  const std::string i = "/api/v1/devices/" + device_ + "/interfaces/" + iface_ + "/actions";
  const json::object opts{{"payload", "00"}, {"encoding", "hex"}};
  std::vector<reply> made{
      call("POST", "/api/v1/actions", key_,
           json::object{{"type", "create_packet"}, {"opts", opts}, {"device_id", device_}, {"interface_id", iface_}}),
      call("POST", "/api/v1/actions", key_,
           json::object{{"action", json::object{{"type", "create_packet"}, {"opts", opts}, {"device_id", device_}}}}),
      call("POST", "/api/v1/devices/" + device_ + "/actions", key_,
           json::object{{"type", "create_packet"}, {"opts", opts}}),
      call("POST", "/api/v1/devices/d1/actions/create_packet", key_, json::object{{"opts", opts}}),
      call("POST", i, key_, json::object{{"type", "create_packet"}, {"opts", opts}}),
      call("POST", i + "/create_packet", key_, json::object{{"opts", opts}}),
      call("POST", "/api/v1/devices/by-eui/70b3d57ed0000001/actions", key_,
           json::object{{"type", "create_packet"}, {"opts", opts}}),
      call("POST", "/api/v1/devices/by-eui/70B3D57ED0000001/actions/create_packet", key_, json::object{{"opts", opts}}),
  };
  for (const auto& r : made) {
    ASSERT_EQ(r.status, 201) << r.text;
    EXPECT_EQ(r.data().at("interface_id"), json::value(iface_));
    EXPECT_EQ(r.data().at("type"), "create_packet");
  }
  EXPECT_EQ(call("GET", "/api/v1/actions?limit=100", key_).data().as_array().size(), made.size());
}

TEST_F(actions, post_actions_needs_a_device_id) {
  auto r = call("POST", "/api/v1/actions", key_, json::object{{"type", "create_packet"}});
  EXPECT_EQ(r.status, 422) << r.text;
  EXPECT_TRUE(r.envelope().at("errors").as_object().contains("device_id"));
}

TEST_F(actions, every_list_and_show_path_finds_the_action) {
  const std::string id = create_packet_action(device_).id();
  for (const std::string& path :
       std::vector<std::string>{"/api/v1/actions", "/api/v1/devices/" + device_ + "/actions",
                                "/api/v1/devices/by-eui/70b3d57ed0000001/actions",
                                "/api/v1/devices/" + device_ + "/interfaces/" + iface_ + "/actions"}) {
    auto list = call("GET", path, key_);
    ASSERT_EQ(list.status, 200) << path << " " << list.text;
    ASSERT_EQ(list.data().as_array().size(), 1u) << path;
    EXPECT_EQ(list.data().as_array()[0].at("id"), json::value(id));
    EXPECT_TRUE(list.data().as_array()[0].at("device").is_object());
  }
  for (const std::string& path :
       std::vector<std::string>{"/api/v1/actions/" + id, "/api/v1/devices/" + device_ + "/actions/" + id,
                                "/api/v1/devices/" + device_ + "/interfaces/" + iface_ + "/actions/" + id}) {
    auto shown = call("GET", path, key_);
    ASSERT_EQ(shown.status, 200) << path << " " << shown.text;
    EXPECT_EQ(shown.id(), id);
  }
}

TEST_F(actions, an_action_is_not_found_under_another_device) {
  const std::string other = make_device(key_, "d2", folder_);
  const std::string id = create_packet_action(device_).id();
  EXPECT_EQ(call("GET", "/api/v1/devices/" + other + "/actions/" + id, key_).status, 404);
  EXPECT_EQ(call("POST", "/api/v1/devices/" + other + "/actions/" + id + "/cancel", key_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + other + "/actions", key_).data().as_array().size(), 0u);
}

TEST_F(actions, lists_are_newest_first_and_page_without_gaps) {
  std::vector<std::string> ids;
  for (int i = 0; i < 5; ++i) ids.push_back(create_packet_action(device_).id());
  std::vector<std::string> seen;
  std::string after;
  for (int page = 0; page < 5; ++page) {
    auto r = call("GET", "/api/v1/actions?limit=2" + (after.empty() ? "" : "&retrieve_after=" + after), key_);
    ASSERT_EQ(r.status, 200) << r.text;
    for (const auto& a : r.data().as_array()) seen.emplace_back(a.at("id").as_string());
    if (!r.has_next()) break;
    after = std::string(r.envelope().at("retrieve_after_id").as_string());
  }
  EXPECT_EQ(seen, std::vector<std::string>(ids.rbegin(), ids.rend()));
}

TEST_F(actions, an_unknown_retrieve_after_is_400) {
  create_packet_action(device_);
  EXPECT_EQ(call("GET", "/api/v1/actions?retrieve_after=" + uuid::random().str(), key_).status, 400);
}

TEST_F(actions, ids_are_time_ordered_so_the_store_order_is_creation_order) {
  std::vector<std::string> ids;
  for (int i = 0; i < 20; ++i) ids.push_back(create_packet_action(device_).id());
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  auto asc = call("GET", "/api/v1/actions?limit=100&sort_direction=asc", key_);
  std::vector<std::string> listed;
  for (const auto& a : asc.data().as_array()) listed.emplace_back(a.at("id").as_string());
  EXPECT_EQ(listed, ids);
}

// Outside probe (2026-11-23): every list loaded all of a mandate's actions (100k: 2-21 s, 1.5 GB).
// A page now reads at most max_scanned records; a sparse list continues where the scan stopped.
TEST_F(actions, a_sparse_list_answers_a_continuation_instead_of_scanning_everything) {
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, manual_, json::object{});
  const std::string wanted = create_packet_action(d2).id();  // the oldest
  for (int i = 0; i < 6; ++i) create_packet_action(device_);
  pipeline::action_page_request request;
  request.keep = [&](const json::object& a) { return a.at("device_id") == json::value(d2); };
  request.limit = 10;
  request.max_scanned = 3;
  std::vector<std::string> found;
  int pages = 0;
  for (; pages < 10; ++pages) {
    auto page = app_->actions.page(*uuid::parse(mandate_), request);
    ASSERT_TRUE(page);
    for (const auto& a : page->items) found.emplace_back(a.at("id").as_string());
    if (!page->next) break;
    request.after = page->next;
  }
  EXPECT_EQ(found, std::vector<std::string>{wanted});
  EXPECT_GE(pages, 2);  // the first page stopped at the scan bound, empty, with a continuation
}

TEST_F(actions, lists_sort_by_executed_at_and_updated_at) {
  // The older action is executed last: sorted by executed_at it comes last, by inserted_at first.
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string older = create_packet_action(d2).id();
  const std::string newer = create_packet_action(device_).id();
  ASSERT_TRUE(eventually([&] { return state_of(newer) == "executed"; }));
  ASSERT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + disabled, superadmin_,
                 json::object{{"driver_instance", json::object{{"enabled", true}}}})
                .status,
            200);
  ASSERT_TRUE(eventually([&] { return state_of(older) == "executed"; }));
  auto ids = [&](const std::string& query) {
    std::vector<std::string> out;
    const auto listed = call("GET", "/api/v1/actions?" + query, key_);  // kept: the loop reads into it
    for (const auto& a : listed.data().as_array()) out.emplace_back(a.at("id").as_string());
    return out;
  };
  EXPECT_EQ(ids("sort=executed_at&sort_direction=asc"), (std::vector<std::string>{newer, older}));
  EXPECT_EQ(ids("sort=updated_at&sort_direction=desc"), (std::vector<std::string>{older, newer}));
  EXPECT_EQ(ids("sort_direction=asc"), (std::vector<std::string>{older, newer}));
  EXPECT_EQ(call("GET", "/api/v1/actions?sort=name", key_).status, 400);
}

TEST_F(actions, lists_filter_by_state) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string waiting = create_packet_action(d2).id();
  const std::string done = create_packet_action(device_).id();
  ASSERT_TRUE(eventually([&] { return state_of(done) == "executed"; }));
  auto pending = call("GET", "/api/v1/actions?state=pending", key_);
  ASSERT_EQ(pending.data().as_array().size(), 1u);
  EXPECT_EQ(pending.data().as_array()[0].at("id"), json::value(waiting));
}

TEST_F(actions, lists_take_a_filter_expression) {
  create_packet_action(device_, {{"opts", json::object{{"payload", "01"}, {"encoding", "hex"}}}});
  create_packet_action(device_, {{"opts", json::object{{"payload", "02"}, {"encoding", "hex"}}}});
  auto r = call("GET", "/api/v1/actions?filter=" + std::string("opts.payload%20%3D%3D%20%2202%22"), key_);
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_EQ(r.data().as_array().size(), 1u);
  EXPECT_EQ(r.data().as_array()[0].at("opts").at("payload"), "02");
  EXPECT_EQ(call("GET", "/api/v1/actions?filter=nonsense%20%3D%3D", key_).status, 422);
  EXPECT_EQ(call("GET", "/api/v1/actions?filter=colour%20%3D%3D%201", key_).status, 422);
}

TEST_F(actions, available_types_follow_the_interface_driver) {
  auto r = call("GET", "/api/v1/devices/" + device_ + "/interfaces/" + iface_ + "/actions/types", key_);
  ASSERT_EQ(r.status, 200) << r.text;
  ASSERT_EQ(r.data().as_array().size(), 1u);
  EXPECT_EQ(r.data().as_array()[0].at("type"), "create_packet");
  EXPECT_EQ(r.data().as_array()[0].at("display"), "Create packet");
  const std::string gw = make_instance(mandate_, "gateway_management", json::object{});
  const std::string gw_iface = make_interface(key_, device_, gw, json::object{});
  auto g = call("GET", "/api/v1/devices/" + device_ + "/interfaces/" + gw_iface + "/actions/types", key_);
  std::set<std::string> types;
  for (const auto& t : g.data().as_array()) types.emplace(t.at("type").as_string());
  EXPECT_EQ(types, (std::set<std::string>{"ping", "reboot", "force_stats", "get_supported_commands"}));
}

TEST_F(actions, an_unknown_type_is_422_naming_the_interfaces) {
  auto r = call("POST", "/api/v1/devices/" + device_ + "/actions/launch_rocket", key_, json::object{});
  EXPECT_EQ(r.status, 422) << r.text;
  EXPECT_NE(r.error().find(iface_), std::string::npos) << r.error();
  EXPECT_NE(r.error().find("launch_rocket"), std::string::npos) << r.error();
}

TEST_F(actions, several_candidate_interfaces_are_422_naming_them) {
  const std::string second = make_interface(key_, device_, manual_, json::object{});
  auto r = create_packet_action(device_);
  EXPECT_EQ(r.status, 422) << r.text;
  EXPECT_NE(r.error().find(iface_), std::string::npos) << r.error();
  EXPECT_NE(r.error().find(second), std::string::npos) << r.error();
  // Naming the interface settles it.
  auto named = call("POST", "/api/v1/devices/" + device_ + "/interfaces/" + second + "/actions/create_packet", key_,
                    json::object{{"opts", json::object{{"payload", "00"}, {"encoding", "hex"}}}});
  EXPECT_EQ(named.status, 201) << named.text;
  EXPECT_EQ(named.data().at("interface_id"), json::value(second));
}

TEST_F(actions, the_selector_excludes_interfaces_that_do_not_match_it) {
  make_interface(key_, device_, manual_, json::object{{"device_eui", "70B3D57ED0000002"}});
  auto r = call("POST", "/api/v1/devices/by-eui/70b3d57ed0000001/actions/create_packet", key_,
                json::object{{"opts", json::object{{"payload", "00"}, {"encoding", "hex"}}}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.data().at("interface_id"), json::value(iface_));
}

TEST_F(actions, a_device_without_interfaces_is_422) {
  const std::string bare = make_device(key_, "bare", folder_);
  auto r = create_packet_action(bare);
  EXPECT_EQ(r.status, 422) << r.text;
}

TEST_F(actions, invalid_opts_are_422_with_field_errors) {
  auto r = call("POST", "/api/v1/devices/" + device_ + "/actions/create_packet", key_,
                json::object{{"opts", json::object{{"payload", "xyz"}, {"encoding", "hex"}}}});
  ASSERT_EQ(r.status, 422) << r.text;
  EXPECT_TRUE(r.envelope().at("errors").as_object().contains("opts.payload")) << r.text;
  auto missing = call("POST", "/api/v1/devices/" + device_ + "/actions/create_packet", key_, json::object{});
  ASSERT_EQ(missing.status, 422) << missing.text;
  EXPECT_TRUE(missing.envelope().at("errors").as_object().contains("opts.encoding")) << missing.text;
  auto bad_after = create_packet_action(device_, {{"cancel_after", -5}});
  EXPECT_EQ(bad_after.status, 422) << bad_after.text;
}

TEST_F(actions, malformed_bodies_are_400) {
  EXPECT_EQ(call("POST", "/api/v1/devices/" + device_ + "/actions/create_packet", key_, std::string("{")).status, 400);
  EXPECT_EQ(call("POST", "/api/v1/actions", key_, std::string("[1]")).status, 400);
}

TEST_F(actions, a_disabled_instance_keeps_actions_pending_until_it_is_enabled) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string id = create_packet_action(d2).id();
  const std::string done = create_packet_action(device_).id();  // a later action elsewhere runs meanwhile
  ASSERT_TRUE(eventually([&] { return state_of(done) == "executed"; }));
  EXPECT_EQ(state_of(id), "pending");
  auto enable = call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + disabled, superadmin_,
                     json::object{{"driver_instance", json::object{{"enabled", true}}}});
  ASSERT_EQ(enable.status, 200) << enable.text;
  EXPECT_TRUE(eventually([&] { return state_of(id) == "executed"; })) << state_of(id);
}

TEST_F(actions, override_cancels_the_devices_earlier_pending_actions) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string first = create_packet_action(d2).id();
  const std::string second = create_packet_action(d2).id();
  const std::string elsewhere = create_packet_action(device_).id();
  auto last = create_packet_action(d2, {{"override", true}});
  ASSERT_EQ(last.status, 201) << last.text;
  EXPECT_EQ(last.data().at("override"), true);
  EXPECT_EQ(state_of(first), "cancelled");
  EXPECT_EQ(state_of(second), "cancelled");
  EXPECT_EQ(state_of(last.id()), "pending");
  EXPECT_NE(state_of(elsewhere), "cancelled");
  auto shown = call("GET", "/api/v1/actions/" + first, key_);
  EXPECT_EQ(event_types(shown.data()).back(), "cancelled_by_override");
}

TEST_F(actions, cancel_after_cancels_an_unfinished_action) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  auto r = create_packet_action(d2, {{"cancel_after", 50}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.data().at("cancel_after"), 50);
  const std::string id = r.id();
  ASSERT_TRUE(eventually([&] { return state_of(id) == "cancelled"; })) << state_of(id);
  EXPECT_EQ(event_types(call("GET", "/api/v1/actions/" + id, key_).data()).back(), "cancel_after_expired");
}

TEST_F(actions, cancel_after_leaves_a_finished_action_alone) {
  auto r = create_packet_action(device_, {{"cancel_after", 300}});
  const std::string id = r.id();
  ASSERT_TRUE(eventually([&] { return state_of(id) == "executed"; }));
  // polling a condition: the expiry timer has fired once none is armed any more
  ASSERT_TRUE(eventually([&] { return app_->timers.armed() == 0; }));
  EXPECT_EQ(state_of(id), "executed");
}

TEST_F(actions, cancelling_a_pending_action_answers_its_new_state) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string id = create_packet_action(d2).id();
  auto r = call("POST", "/api/v1/actions/" + id + "/cancel", key_);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.data().at("id"), json::value(id));
  EXPECT_EQ(r.data().at("state"), "cancelled");
  EXPECT_EQ(event_types(call("GET", "/api/v1/actions/" + id, key_).data()).back(), "cancelled_by_user");
}

TEST_F(actions, cancel_works_on_the_device_and_interface_paths) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  const std::string i2 = make_interface(key_, d2, disabled, json::object{});
  const std::string a = create_packet_action(d2).id();
  const std::string b = create_packet_action(d2).id();
  EXPECT_EQ(call("POST", "/api/v1/devices/" + d2 + "/actions/" + a + "/cancel", key_).status, 200);
  EXPECT_EQ(call("POST", "/api/v1/devices/" + d2 + "/interfaces/" + i2 + "/actions/" + b + "/cancel", key_).status,
            200);
  EXPECT_EQ(state_of(a), "cancelled");
  EXPECT_EQ(state_of(b), "cancelled");
}

// Outside probe (2026-11-23): a downlink cancelled while executing still went out, and nothing said so.
TEST_F(actions, a_drivers_answer_after_a_cancel_is_recorded_and_the_state_stays_cancelled) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string id = create_packet_action(d2).id();
  const auto mandate = *uuid::parse(mandate_);
  const auto action = *uuid::parse(id);
  ASSERT_TRUE(app_->actions.move(mandate, action, pipeline::action_state::executing));
  ASSERT_EQ(call("POST", "/api/v1/actions/" + id + "/cancel", key_).status, 200);
  auto late = app_->actions.move(mandate, action, pipeline::action_state::executed,
                                 pipeline::action_event{"sent_to_network_server", "executed", "sent", nullptr});
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().code, pipeline::action_errc::invalid_state);
  EXPECT_EQ(state_of(id), "cancelled");
  EXPECT_EQ(event_types(call("GET", "/api/v1/actions/" + id, key_).data()),
            (std::vector<std::string>{"created_by_user", "cancelled_by_user", "sent_to_network_server"}));
}

TEST_F(actions, cancelling_a_finished_action_is_409) {
  const std::string id = create_packet_action(device_).id();
  ASSERT_TRUE(eventually([&] { return state_of(id) == "executed"; }));
  auto r = call("POST", "/api/v1/actions/" + id + "/cancel", key_);
  EXPECT_EQ(r.status, 409) << r.text;
  EXPECT_EQ(state_of(id), "executed");
}

TEST_F(actions, cancelling_twice_is_409) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string id = create_packet_action(d2).id();
  EXPECT_EQ(call("POST", "/api/v1/actions/" + id + "/cancel", key_).status, 200);
  EXPECT_EQ(call("POST", "/api/v1/actions/" + id + "/cancel", key_).status, 409);
}

TEST(action_states, only_the_spec_moves_are_allowed) {
  using pipeline::action_state;
  using pipeline::may_move;
  const action_state all[] = {action_state::pending, action_state::executing, action_state::executed,
                              action_state::errored, action_state::cancelled};
  std::set<std::pair<action_state, action_state>> allowed{{action_state::pending, action_state::executing},
                                                          {action_state::pending, action_state::cancelled},
                                                          {action_state::executing, action_state::executed},
                                                          {action_state::executing, action_state::errored},
                                                          {action_state::executing, action_state::cancelled}};
  for (auto from : all)
    for (auto to : all) EXPECT_EQ(may_move(from, to), allowed.contains({from, to}));
}

TEST_F(actions, the_gateway_driver_times_out_as_errored) {
  const std::string gw = make_instance(mandate_, "gateway_management", json::object{{"answer_timeout_s", 1}});
  const std::string d2 = make_device(key_, "gw", folder_);
  make_interface(key_, d2, gw, json::object{});
  auto r = call("POST", "/api/v1/devices/" + d2 + "/actions/reboot", key_, json::object{});
  ASSERT_EQ(r.status, 201) << r.text;
  const std::string id = r.id();
  ASSERT_TRUE(eventually([&] { return state_of(id) == "errored"; })) << state_of(id);
  auto types = event_types(call("GET", "/api/v1/actions/" + id, key_).data());
  EXPECT_EQ(types, (std::vector<std::string>{"created_by_user", "waiting_for_gateway", "gateway_timeout"}));
}

TEST_F(actions, action_changes_are_published_to_the_feed) {
  const auto from = app_->feed->head();
  const std::string id = create_packet_action(device_).id();
  ASSERT_TRUE(eventually([&] { return state_of(id) == "executed"; }));
  auto got = app_->feed->read(from, 1000, std::chrono::milliseconds(0));
  std::vector<std::string> states;
  for (const auto& c : got.changes) {
    if (c->kind != pipeline::change_kind::action_changed || c->item.str() != id) continue;
    EXPECT_EQ(c->mandate.str(), mandate_);
    EXPECT_EQ(c->device->str(), device_);
    states.emplace_back(json::parse(c->body).at("state").as_string());
  }
  EXPECT_EQ(states, (std::vector<std::string>{"pending", "executing", "executed"}));
}

TEST_F(actions, read_only_keys_may_list_but_not_create_or_cancel) {
  const std::string reader = make_key(mandate_, "read_only");
  const std::string id = create_packet_action(device_).id();
  EXPECT_EQ(call("GET", "/api/v1/actions", reader).status, 200);
  EXPECT_EQ(call("POST", "/api/v1/devices/" + device_ + "/actions/create_packet", reader,
                 json::object{{"opts", json::object{{"payload", "00"}, {"encoding", "hex"}}}})
                .status,
            403);
  EXPECT_EQ(call("POST", "/api/v1/actions/" + id + "/cancel", reader).status, 403);
}

TEST_F(actions, another_mandate_sees_none_of_them) {
  const std::string id = create_packet_action(device_).id();
  const std::string other = make_mandate("other");
  const std::string other_key = make_key(other, "admin");
  EXPECT_EQ(call("GET", "/api/v1/actions/" + id, other_key).status, 404);
  EXPECT_EQ(call("POST", "/api/v1/actions/" + id + "/cancel", other_key).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/actions", other_key).data().as_array().size(), 0u);
  // Its own device id cannot be used to reach ours either.
  auto forged = call("POST", "/api/v1/actions", other_key,
                     json::object{{"type", "create_packet"},
                                  {"device_id", device_},
                                  {"interface_id", iface_},
                                  {"opts", json::object{{"payload", "00"}, {"encoding", "hex"}}}});
  EXPECT_EQ(forged.status, 404) << forged.text;
}

TEST_F(actions, an_interface_of_another_device_is_404) {
  const std::string d2 = make_device(key_, "d2", folder_);
  auto r = call("POST", "/api/v1/actions", key_,
                json::object{{"type", "create_packet"},
                             {"device_id", d2},
                             {"interface_id", iface_},
                             {"opts", json::object{{"payload", "00"}, {"encoding", "hex"}}}});
  EXPECT_EQ(r.status, 404) << r.text;
}

// Outside probe (2026-11-23): rules about one device (override, device delete, dispatch after an
// instance change) read the whole mandate's actions, under the catalog's writer lock that every
// mandate shares. They now read the device's membership lists; these must follow every state.
TEST_F(actions, the_pending_list_follows_the_states) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const auto mandate = *uuid::parse(mandate_);
  const auto device = *uuid::parse(d2);
  auto pending = [&] {
    auto m = records_->members(storage::member_list::device_pending, mandate, device);
    return m ? m->size() : 999u;
  };
  const std::string a = create_packet_action(d2).id();
  const std::string b = create_packet_action(d2).id();
  EXPECT_EQ(pending(), 2u);
  ASSERT_EQ(call("POST", "/api/v1/actions/" + a + "/cancel", key_).status, 200);
  EXPECT_EQ(pending(), 1u);
  const std::string c = create_packet_action(d2, {{"override", true}}).id();
  EXPECT_EQ(state_of(b), "cancelled");
  EXPECT_EQ(pending(), 1u);  // c
  ASSERT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + disabled, superadmin_,
                 json::object{{"driver_instance", json::object{{"enabled", true}}}})
                .status,
            200);
  ASSERT_TRUE(eventually([&] { return state_of(c) == "executed"; })) << state_of(c);
  EXPECT_EQ(pending(), 0u);
}

TEST_F(actions, deleting_a_device_leaves_none_of_its_list_entries) {
  create_packet_action(device_);
  ASSERT_EQ(call("POST", "/api/v1/devices/" + device_ + "/actions/schedules", key_,
                 json::object{{"type", "create_packet"},
                              {"opts", json::object{{"payload", "00"}, {"encoding", "hex"}}},
                              {"schedule", "0 3 * * *"},
                              {"schedule_tz", "UTC"}})
                .status,
            201);
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + device_, key_).status, 200);
  for (auto list : {storage::member_list::device_actions, storage::member_list::device_pending,
                    storage::member_list::device_schedules}) {
    auto m = records_->members(list, *uuid::parse(mandate_));
    ASSERT_TRUE(m);
    EXPECT_TRUE(m->empty()) << static_cast<int>(list);
  }
  EXPECT_EQ(call("GET", "/api/v1/actions/schedules", key_).data().as_array().size(), 0u);
}

TEST_F(actions, deleting_the_device_deletes_its_actions) {
  const std::string id = create_packet_action(device_).id();
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + device_, key_).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/actions/" + id, key_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/actions", key_).data().as_array().size(), 0u);
}

TEST_F(actions, an_action_executing_at_a_crash_is_errored_as_interrupted_on_restart) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string id = create_packet_action(d2).id();
  // As if the server died between handing it to a driver and its answer.
  ASSERT_TRUE(app_->actions.move(*uuid::parse(mandate_), *uuid::parse(id), pipeline::action_state::executing));
  restart();
  ASSERT_TRUE(eventually([&] { return state_of(id) == "errored"; })) << state_of(id);
  EXPECT_EQ(event_types(call("GET", "/api/v1/actions/" + id, key_).data()).back(), "interrupted");
}

TEST_F(actions, a_pending_action_runs_after_a_restart) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  const std::string id = create_packet_action(d2).id();
  app_->drivers.stop();  // nothing runs it before the restart
  ASSERT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_ + "/driver_instances/" + disabled, superadmin_,
                 json::object{{"driver_instance", json::object{{"enabled", true}}}})
                .status,
            200);
  EXPECT_EQ(state_of(id), "pending");
  restart();
  EXPECT_TRUE(eventually([&] { return state_of(id) == "executed"; })) << state_of(id);
}

TEST_F(actions, an_expired_cancel_after_is_applied_after_a_restart) {
  const std::string disabled = make_instance(mandate_, "manual", json::object{}, false);
  const std::string d2 = make_device(key_, "d2", folder_);
  make_interface(key_, d2, disabled, json::object{});
  app_->timers.stop();  // the expiry cannot fire before the restart
  const std::string id = create_packet_action(d2, {{"cancel_after", 1}}).id();
  EXPECT_EQ(state_of(id), "pending");
  restart();
  EXPECT_TRUE(eventually([&] { return state_of(id) == "cancelled"; })) << state_of(id);
}

}  // namespace
}  // namespace fl::testing
