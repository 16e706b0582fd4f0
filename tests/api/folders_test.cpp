// Folders (`tags`): nesting by name, slugs, hues, selectors, rename cascade, deletion rules.
#include "support/api_fixture.hpp"

namespace fl::testing {

class folders : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    key_ = make_key(make_mandate("M"), "admin");
  }
  reply create(const json::object& tag) const { return call("POST", "/api/v1/tags", key_, json::object{{"tag", tag}}); }
  std::string key_;
};

TEST_F(folders, nested_names_need_their_parent_and_record_the_path) {
  auto orphan = create({{"name", "A / B"}});
  EXPECT_EQ(orphan.status, 422);
  const auto a = make_folder(key_, "A");
  auto b = create({{"name", "A / B"}});
  ASSERT_EQ(b.status, 201);
  EXPECT_EQ(b.data().at("parent_id"), a);
  EXPECT_EQ(b.data().at("path"), (json::array{json::value(a), json::value(b.id())}));
  // The same child via parent_id and a bare leaf name.
  auto c = create({{"name", "C"}, {"parent_id", b.id()}});
  ASSERT_EQ(c.status, 201);
  EXPECT_EQ(c.data().at("name"), "A / B / C");
  // Siblings are unique.
  EXPECT_EQ(create({{"name", "A / B"}}).status, 422);
  EXPECT_EQ(create({{"name", "B"}, {"parent_id", a}}).status, 422);
}

TEST_F(folders, a_full_name_longer_than_1000_bytes_is_refused_however_it_would_come_about) {
  const std::string long_leaf(400, 'x');
  const auto a = create({{"name", long_leaf}});
  ASSERT_EQ(a.status, 201);
  const auto b = create({{"name", long_leaf}, {"parent_id", a.id()}});
  ASSERT_EQ(b.status, 201) << b.text;  // 803 bytes with the separator
  // Nested once more through parent_id: 1,206 bytes, more than a name a client could send.
  auto deeper = create({{"name", long_leaf}, {"parent_id", b.id()}});
  EXPECT_EQ(deeper.status, 422) << deeper.text;
  EXPECT_NE(deeper.text.find("full folder name"), std::string::npos) << deeper.text;
  // Renaming the top folder would lengthen its child's full name past the limit.
  auto renamed = call("PATCH", "/api/v1/tags/" + a.id(), key_,
                      json::object{{"tag", json::object{{"name", std::string(700, 'y')}}}});
  EXPECT_EQ(renamed.status, 422) << renamed.text;
  // Moving the child under another long folder too.
  const auto c = create({{"name", std::string(700, 'z')}});
  ASSERT_EQ(c.status, 201);
  auto moved =
      call("PATCH", "/api/v1/tags/" + b.id(), key_, json::object{{"tag", json::object{{"parent_id", c.id()}}}});
  EXPECT_EQ(moved.status, 422) << moved.text;
  EXPECT_EQ(call("GET", "/api/v1/tags/" + b.id(), key_).data().at("name"), long_leaf + " / " + long_leaf);
}

TEST_F(folders, always_present_fields_are_there) {
  auto f = create({{"name", "A"}});
  for (const char* field : {"profile_data", "fields", "stats", "group_interface_id", "default_devices_view_id",
                            "default_packets_view_id", "default_readings_view_id", "description", "mandate_id",
                            "default_layers_id", "default_graph_preset_id", "inserted_at", "updated_at"}) {
    EXPECT_TRUE(f.data().as_object().contains(field)) << field;
  }
}

TEST_F(folders, color_hue_defaults_from_name_and_is_range_checked) {
  auto a = create({{"name", "Kitchen"}});
  auto again = call("GET", "/api/v1/tags/" + a.id(), key_);
  EXPECT_EQ(a.data().at("color_hue"), again.data().at("color_hue"));
  EXPECT_GE(a.data().at("color_hue").as_int64(), 0);
  EXPECT_LE(a.data().at("color_hue").as_int64(), 359);
  EXPECT_EQ(create({{"name", "H"}, {"color_hue", 359}}).status, 201);
  EXPECT_EQ(create({{"name", "I"}, {"color_hue", 360}}).status, 422);
  EXPECT_EQ(create({{"name", "J"}, {"color_hue", -1}}).status, 422);
  EXPECT_EQ(create({{"name", "K"}, {"color_hue", "red"}}).status, 422);
}

TEST_F(folders, slugs_follow_the_rules_and_stay_unique) {
  EXPECT_EQ(create({{"name", "Übergröße Halle"}}).data().at("slug"), "uebergroesse-halle");
  make_folder(key_, "Hall");
  auto hall = create({{"name", "Hall"}, {"parent_id", make_folder(key_, "X")}});
  EXPECT_EQ(hall.data().at("slug"), "x-hall");
  EXPECT_EQ(create({{"name", "x hall"}}).data().at("slug"), "x-hall-2");
  EXPECT_EQ(create({{"name", "Y"}, {"slug", "hall"}}).status, 422);
  EXPECT_EQ(call("GET", "/api/v1/tags/x-hall", key_).id(), hall.id());
}

TEST_F(folders, renaming_a_folder_renames_its_children) {
  const auto a = make_folder(key_, "A");
  const auto b = make_folder(key_, "A / B");
  const auto c = make_folder(key_, "A / B / C");
  auto renamed = call("PATCH", "/api/v1/tags/" + a, key_, json::object{{"tag", json::object{{"name", "Z"}}}});
  ASSERT_EQ(renamed.status, 200) << renamed.text;
  EXPECT_EQ(renamed.data().at("name"), "Z");
  EXPECT_EQ(call("GET", "/api/v1/tags/" + b, key_).data().at("name"), "Z / B");
  EXPECT_EQ(call("GET", "/api/v1/tags/" + c, key_).data().at("name"), "Z / B / C");
  auto by_name = call("GET", "/api/v1/tags/by-name/Z%20%2F%20B%20%2F%20C", key_);
  ASSERT_EQ(by_name.data().as_array().size(), 1u);
  EXPECT_EQ(by_name.data().as_array()[0].at("id"), c);
}

TEST_F(folders, moving_follows_parent_id_and_refuses_cycles) {
  const auto a = make_folder(key_, "A");
  const auto b = make_folder(key_, "A / B");
  const auto other = make_folder(key_, "Other");
  auto moved = call("PUT", "/api/v1/tags/" + b, key_, json::object{{"tag", json::object{{"parent_id", other}}}});
  ASSERT_EQ(moved.status, 200) << moved.text;
  EXPECT_EQ(moved.data().at("name"), "Other / B");
  auto cycle = call("PATCH", "/api/v1/tags/" + other, key_, json::object{{"tag", json::object{{"parent_id", b}}}});
  EXPECT_EQ(cycle.status, 422);
  auto top = call("PATCH", "/api/v1/tags/" + b, key_, json::object{{"tag", json::object{{"parent_id", nullptr}}}});
  EXPECT_EQ(top.data().at("name"), "B");
  EXPECT_EQ(top.data().at("path").as_array().size(), 1u);
  (void)a;
}

TEST_F(folders, delete_answers_204_and_refuses_folders_with_children) {
  const auto a = make_folder(key_, "A");
  const auto b = make_folder(key_, "A / B");
  auto refused = call("DELETE", "/api/v1/tags/" + a, key_);
  EXPECT_EQ(refused.status, 409);
  auto gone = call("DELETE", "/api/v1/tags/" + b, key_);
  EXPECT_EQ(gone.status, 204);
  EXPECT_TRUE(gone.text.empty());
  EXPECT_EQ(call("GET", "/api/v1/tags/" + b, key_).status, 404);
  EXPECT_EQ(call("DELETE", "/api/v1/tags/" + a, key_).status, 204);
}

TEST_F(folders, deleting_a_folder_keeps_its_devices) {
  const auto a = make_folder(key_, "A");
  const auto b = make_folder(key_, "B");
  auto d = call(
      "POST", "/api/v1/devices", key_,
      json::object{{"device", json::object{{"name", "d"},
                                           {"tags", json::array{json::object{{"id", a}}, json::object{{"id", b}}}}}}});
  ASSERT_EQ(d.status, 201);
  EXPECT_EQ(call("DELETE", "/api/v1/tags/" + a, key_).status, 204);
  auto device = call("GET", "/api/v1/devices/" + d.id(), key_);
  ASSERT_EQ(device.data().at("tags").as_array().size(), 1u);
  EXPECT_EQ(device.data().at("tags").as_array()[0].at("id"), b);
}

TEST_F(folders, mkdir_creates_the_missing_chain_and_returns_the_last) {
  make_folder(key_, "A");
  auto made = call("POST", "/api/v1/tags/mkdir", key_, json::object{{"name", "A / B / C"}});
  ASSERT_EQ(made.status, 201) << made.text;
  EXPECT_EQ(made.data().at("name"), "A / B / C");
  auto again = call("POST", "/api/v1/tags/mkdir", key_, json::object{{"name", "A / B / C"}});
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(again.id(), made.id());
  EXPECT_EQ(call("GET", "/api/v1/tags", key_).data().as_array().size(), 3u);
  EXPECT_EQ(call("POST", "/api/v1/tags/mkdir", key_, json::object{{"name", "A /  / C"}}).status, 422);
}

TEST_F(folders, selectors_find_by_id_slug_name_and_parent) {
  const auto a = make_folder(key_, "A");
  const auto b = make_folder(key_, "A / B");
  const auto c = make_folder(key_, "C");
  auto ids = [&](const std::string& path) {
    std::set<std::string> out;
    auto r = call("GET", path, key_);
    EXPECT_EQ(r.status, 200) << path << r.text;
    for (const auto& f : r.data().as_array()) out.insert(std::string(f.at("id").as_string()));
    return out;
  };
  EXPECT_EQ(ids("/api/v1/tags/by-id/" + b), std::set<std::string>{b});
  EXPECT_EQ(ids("/api/v1/tags/by-slug/a-b"), std::set<std::string>{b});
  EXPECT_EQ(ids("/api/v1/tags/by-name/C/"), std::set<std::string>{c});
  EXPECT_EQ(ids("/api/v1/tags/by-parent-id/" + a), std::set<std::string>{b});
  EXPECT_EQ(ids("/api/v1/tags/by-parent-id/null"), (std::set<std::string>{a, c}));
  EXPECT_EQ(ids("/api/v1/tags/by-slug/nothing"), std::set<std::string>{});
}

}  // namespace fl::testing
