// Profiles (issue 11): managed through /admin/v1, their values in `fields` on devices and folders,
// checked on every write (422 naming the field), shown as `profile_data` with `with_profile=1`.
#include "pipeline/profiles.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

class profiles : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M");
    key_ = make_key(mandate_, "admin");
    folder_ = make_folder(key_, "Site");
    auto p = create_profile(mandate_, sensor_profile());
    ASSERT_EQ(p.status, 201) << p.text;
    profile_ = p.id();
  }
  static json::object sensor_profile() {
    return {{"name", "Sensor"},
            {"slug", "sensor"},
            {"fields", json::array{json::object{{"name", "level"},
                                                {"display", "Level"},
                                                {"type", "integer"},
                                                {"required", true},
                                                {"min", 0},
                                                {"max", 100}},
                                   json::object{{"name", "code"}, {"type", "string"}, {"format", "[A-Z]{2}"}}}}};
  }
  reply create_profile(const std::string& mandate, const json::object& profile) const {
    return call("POST", "/admin/v1/mandates/" + mandate + "/profiles", superadmin_, json::object{{"profile", profile}});
  }
  std::string profiles_path(const std::string& rest = "") const {
    return "/admin/v1/mandates/" + mandate_ + "/profiles" + rest;
  }
  reply create_device(const json::object& fields, const std::string& key = {}) const {
    return call("POST", "/api/v1/devices", key.empty() ? key_ : key,
                json::object{{"device", json::object{{"name", "d"},
                                                     {"tags", json::array{json::object{{"id", folder_}}}},
                                                     {"fields", fields}}}});
  }
  static bool names_error(const reply& r, std::string_view field) {
    const auto* errors = r.envelope().if_contains("errors");
    return errors && errors->is_object() && errors->as_object().contains(field);
  }

  std::string mandate_, key_, folder_, profile_;
};

// ---- admin CRUD ----

TEST_F(profiles, create_answers_the_record_in_api_shape) {
  auto r = call("GET", profiles_path("/" + profile_), superadmin_);
  ASSERT_EQ(r.status, 200) << r.text;
  const auto& p = r.data().as_object();
  for (const char* key : {"id", "slug", "name", "mandate_id", "limit_to", "fields", "inserted_at", "updated_at"})
    EXPECT_TRUE(p.contains(key)) << key;
  EXPECT_EQ(p.at("mandate_id"), mandate_);
  EXPECT_TRUE(p.at("limit_to").is_null());
  const auto& level = p.at("fields").as_array()[0].as_object();
  for (const char* key : {"id", "name", "display", "type", "required", "min", "max", "format"})
    EXPECT_TRUE(level.contains(key)) << key;
  EXPECT_EQ(level.at("max"), 100);
}

TEST_F(profiles, list_edit_and_delete) {
  ASSERT_EQ(create_profile(mandate_, {{"name", "Other Thing"}}).status, 201);
  auto list = call("GET", profiles_path(), superadmin_);
  ASSERT_EQ(list.status, 200);
  EXPECT_EQ(list.data().as_array().size(), 2u);
  auto edited = call("PATCH", profiles_path("/" + profile_), superadmin_,
                     json::object{{"profile", json::object{{"name", "Renamed"}, {"limit_to", "device"}}}});
  ASSERT_EQ(edited.status, 200) << edited.text;
  EXPECT_EQ(edited.data().at("name"), "Renamed");
  EXPECT_EQ(edited.data().at("slug"), "sensor");
  EXPECT_EQ(edited.data().at("limit_to"), "device");
  EXPECT_EQ(call("DELETE", profiles_path("/" + profile_), superadmin_).status, 200);
  EXPECT_EQ(call("GET", profiles_path("/" + profile_), superadmin_).status, 404);
}

TEST_F(profiles, the_slug_defaults_from_the_name) {
  auto r = create_profile(mandate_, {{"name", "Other Thing"}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.data().at("slug"), "other-thing");
}

TEST_F(profiles, a_taken_slug_is_refused) {
  auto r = create_profile(mandate_, {{"name", "x"}, {"slug", "sensor"}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "slug")) << r.text;
  auto other = create_profile(mandate_, {{"name", "y"}});
  ASSERT_EQ(other.status, 201);
  auto renamed = call("PUT", profiles_path("/" + other.id()), superadmin_,
                      json::object{{"profile", json::object{{"slug", "sensor"}}}});
  EXPECT_EQ(renamed.status, 422);
}

TEST_F(profiles, at_most_100_profiles_per_mandate) {
  for (std::size_t i = 1; i < pipeline::max_profiles_per_mandate; ++i)
    ASSERT_EQ(create_profile(mandate_, {{"name", "p" + std::to_string(i)}}).status, 201) << i;
  auto r = create_profile(mandate_, {{"name", "one too many"}});
  EXPECT_EQ(r.status, 422);
  EXPECT_NE(r.error().find("at most 100 profiles"), std::string::npos) << r.text;
}

TEST_F(profiles, a_changed_slug_keeps_the_values) {
  auto d = create_device(json::object{{"sensor", json::object{{"level", 9}}}});
  ASSERT_EQ(d.status, 201) << d.text;
  auto edited = call("PATCH", profiles_path("/" + profile_), superadmin_,
                     json::object{{"profile", json::object{{"slug", "probe"}}}});
  ASSERT_EQ(edited.status, 200) << edited.text;
  EXPECT_EQ(call("GET", "/api/v1/devices/" + d.id(), key_).data().at("fields"),
            json::parse(R"({"probe":{"level":9}})"));
  // The old slug is free again, the new one taken.
  EXPECT_EQ(create_profile(mandate_, {{"name", "x"}, {"slug", "probe"}}).status, 422);
  EXPECT_EQ(create_profile(mandate_, {{"name", "x"}, {"slug", "sensor"}}).status, 201);
}

TEST_F(profiles, the_same_slug_in_another_mandate_is_fine) {
  EXPECT_EQ(create_profile(make_mandate("N"), sensor_profile()).status, 201);
}

TEST_F(profiles, a_bad_definition_is_422_naming_the_field) {
  auto r = create_profile(mandate_,
                          {{"name", "bad"}, {"fields", json::array{json::object{{"name", "a"}, {"type", "date"}}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields[0].type")) << r.text;
}

TEST_F(profiles, a_bad_limit_to_is_422) {
  EXPECT_EQ(create_profile(mandate_, {{"name", "bad"}, {"limit_to", "folder"}}).status, 422);
}

TEST_F(profiles, mandate_keys_may_not_use_the_admin_routes) {
  EXPECT_EQ(call("GET", profiles_path(), key_).status, 403);
  EXPECT_EQ(call("POST", profiles_path(), key_, json::object{{"profile", json::object{{"name", "z"}}}}).status, 403);
}

TEST_F(profiles, an_unknown_mandate_or_profile_is_404) {
  EXPECT_EQ(call("GET", "/admin/v1/mandates/" + uuid::random().str() + "/profiles", superadmin_).status, 404);
  EXPECT_EQ(call("GET", profiles_path("/" + uuid::random().str()), superadmin_).status, 404);
  // Another mandate's profile is not found under this one.
  auto other = create_profile(make_mandate("N"), sensor_profile());
  EXPECT_EQ(call("GET", profiles_path("/" + other.id()), superadmin_).status, 404);
}

// ---- devices ----

TEST_F(profiles, devices_show_empty_profile_data_and_fields_by_default) {
  auto d = create_device(json::object{});
  ASSERT_EQ(d.status, 201) << d.text;
  EXPECT_EQ(d.data().at("profile_data"), json::array{});
  EXPECT_EQ(d.data().at("fields"), json::object{});
  EXPECT_FALSE(d.data().as_object().contains("profile_values"));
}

TEST_F(profiles, device_fields_are_stored_and_shown) {
  auto d = create_device(json::object{{"sensor", json::object{{"level", 40}, {"code", "AB"}}}});
  ASSERT_EQ(d.status, 201) << d.text;
  EXPECT_EQ(d.data().at("fields"), json::parse(R"({"sensor":{"level":40,"code":"AB"}})"));
  EXPECT_EQ(d.data().at("profile_data"), json::array{});  // only with with_profile
  auto shown = call("GET", "/api/v1/devices/" + d.id(), key_);
  EXPECT_EQ(shown.data().at("fields").at("sensor").at("level"), 40);
}

TEST_F(profiles, with_profile_shows_profile_data_on_device_show_and_lists) {
  auto d = create_device(json::object{{"sensor", json::object{{"level", 40}}}});
  ASSERT_EQ(d.status, 201) << d.text;
  for (const std::string& path :
       std::vector<std::string>{"/api/v1/devices/" + d.id() + "?with_profile=1", "/api/v1/devices?with_profile=true",
                                "/api/v1/tags/" + folder_ + "/devices?with_profile=1"}) {
    auto r = call("GET", path, key_);
    ASSERT_EQ(r.status, 200) << path << r.text;
    const auto& device = r.data().is_array() ? r.data().as_array()[0].as_object() : r.data().as_object();
    const auto& entries = device.at("profile_data").as_array();
    ASSERT_EQ(entries.size(), 1u) << path;
    const auto& e = entries[0].as_object();
    EXPECT_EQ(e.at("profile_id"), profile_);
    EXPECT_EQ(e.at("device_id"), d.id());
    EXPECT_EQ(e.at("data"), json::parse(R"({"level":40})"));
    EXPECT_EQ(e.at("profile").at("slug"), "sensor");
    EXPECT_EQ(e.at("profile").at("fields").as_array().size(), 2u);
    EXPECT_TRUE(e.at("inserted_at").is_string());
    EXPECT_TRUE(e.at("updated_at").is_string());
  }
}

TEST_F(profiles, an_invalid_device_value_is_422_naming_the_field) {
  auto r = create_device(json::object{{"sensor", json::object{{"level", 101}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields.sensor.level")) << r.text;
  EXPECT_EQ(call("GET", "/api/v1/devices", key_).data().as_array().size(), 0u);
}

TEST_F(profiles, a_missing_required_device_value_is_422) {
  auto r = create_device(json::object{{"sensor", json::object{{"code", "AB"}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields.sensor.level")) << r.text;
}

TEST_F(profiles, a_device_edit_with_a_bad_format_is_422_and_changes_nothing) {
  auto d = create_device(json::object{{"sensor", json::object{{"level", 1}}}});
  ASSERT_EQ(d.status, 201) << d.text;
  auto r =
      call("PATCH", "/api/v1/devices/" + d.id(), key_,
           json::object{{"device", json::object{{"fields", json::object{{"sensor", json::object{{"code", "a"}}}}}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields.sensor.code")) << r.text;
  EXPECT_EQ(call("GET", "/api/v1/devices/" + d.id(), key_).data().at("fields"),
            json::parse(R"({"sensor":{"level":1}})"));
}

TEST_F(profiles, a_device_edit_merges_and_null_clears) {
  auto d = create_device(json::object{{"sensor", json::object{{"level", 1}, {"code", "AB"}}}});
  ASSERT_EQ(d.status, 201) << d.text;
  auto r =
      call("PUT", "/api/v1/devices/" + d.id(), key_,
           json::object{{"device", json::object{{"fields", json::parse(R"({"sensor":{"level":2,"code":null}})")}}}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.data().at("fields"), json::parse(R"({"sensor":{"level":2}})"));
}

TEST_F(profiles, an_unknown_profile_slug_on_a_device_is_422) {
  auto r = create_device(json::object{{"nope", json::object{{"a", 1}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields.nope")) << r.text;
}

TEST_F(profiles, a_device_cannot_use_another_mandates_profile) {
  const auto other = make_mandate("N");
  ASSERT_EQ(create_profile(other, {{"name", "Theirs"}, {"slug", "theirs"}}).status, 201);
  auto r = create_device(json::object{{"theirs", json::object{}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields.theirs")) << r.text;
}

TEST_F(profiles, a_folder_only_profile_is_refused_on_a_device) {
  ASSERT_EQ(create_profile(mandate_, {{"name", "Place"}, {"limit_to", "tag"}}).status, 201);
  auto r = create_device(json::object{{"place", json::object{}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields.place")) << r.text;
}

TEST_F(profiles, a_deleted_profiles_values_are_no_longer_shown) {
  auto d = create_device(json::object{{"sensor", json::object{{"level", 1}}}});
  ASSERT_EQ(d.status, 201) << d.text;
  ASSERT_EQ(call("DELETE", profiles_path("/" + profile_), superadmin_).status, 200);
  auto shown = call("GET", "/api/v1/devices/" + d.id() + "?with_profile=1", key_);
  EXPECT_EQ(shown.data().at("fields"), json::object{});
  EXPECT_EQ(shown.data().at("profile_data"), json::array{});
  // A new profile with the same slug starts empty.
  ASSERT_EQ(create_profile(mandate_, sensor_profile()).status, 201);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + d.id(), key_).data().at("fields"), json::object{});
}

// ---- folders ----

TEST_F(profiles, folders_show_empty_profile_data_and_fields_by_default) {
  auto f = call("GET", "/api/v1/tags/" + folder_ + "?with_profile=1", key_);
  ASSERT_EQ(f.status, 200) << f.text;
  EXPECT_EQ(f.data().at("profile_data"), json::array{});
  EXPECT_EQ(f.data().at("fields"), json::object{});
}

TEST_F(profiles, folder_fields_are_written_and_shown_with_profile_on_list_and_show) {
  auto r = call("PATCH", "/api/v1/tags/" + folder_, key_,
                json::object{{"tag", json::object{{"fields", json::parse(R"({"sensor":{"level":7}})")}}}});
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.data().at("fields"), json::parse(R"({"sensor":{"level":7}})"));
  EXPECT_EQ(r.data().at("profile_data"), json::array{});
  for (const std::string& path :
       std::vector<std::string>{"/api/v1/tags?with_profile=1", "/api/v1/tags/" + folder_ + "?with_profile=true"}) {
    auto listed = call("GET", path, key_);
    ASSERT_EQ(listed.status, 200) << listed.text;
    const auto& folder = listed.data().is_array() ? listed.data().as_array()[0].as_object() : listed.data().as_object();
    const auto& entries = folder.at("profile_data").as_array();
    ASSERT_EQ(entries.size(), 1u) << path;
    EXPECT_EQ(entries[0].at("tag_id"), folder_);
    EXPECT_TRUE(entries[0].at("device_id").is_null());
    EXPECT_EQ(entries[0].at("data"), json::parse(R"({"level":7})"));
    EXPECT_EQ(entries[0].at("profile").at("id"), profile_);
  }
}

TEST_F(profiles, an_invalid_folder_value_is_422_naming_the_field) {
  auto r =
      call("POST", "/api/v1/tags", key_,
           json::object{{"tag", json::object{{"name", "New"}, {"fields", json::parse(R"({"sensor":{"level":-1}})")}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields.sensor.level")) << r.text;
  EXPECT_EQ(call("GET", "/api/v1/tags", key_).data().as_array().size(), 1u);  // only "Site"
}

TEST_F(profiles, a_folder_create_stores_valid_fields) {
  auto r =
      call("POST", "/api/v1/tags", key_,
           json::object{{"tag", json::object{{"name", "New"}, {"fields", json::parse(R"({"sensor":{"level":3}})")}}}});
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(call("GET", "/api/v1/tags/" + r.id(), key_).data().at("fields"), json::parse(R"({"sensor":{"level":3}})"));
}

TEST_F(profiles, a_device_only_profile_is_refused_on_a_folder) {
  ASSERT_EQ(create_profile(mandate_, {{"name", "Gadget"}, {"limit_to", "device"}}).status, 201);
  auto r = call("PATCH", "/api/v1/tags/" + folder_, key_,
                json::object{{"tag", json::object{{"fields", json::parse(R"({"gadget":{}})")}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_TRUE(names_error(r, "fields.gadget")) << r.text;
}

TEST_F(profiles, deleting_the_mandate_removes_its_profiles) {
  const auto other = make_mandate("N");
  auto p = create_profile(other, sensor_profile());
  ASSERT_EQ(p.status, 201);
  ASSERT_EQ(call("DELETE", "/admin/v1/mandates/" + other, superadmin_).status, 200);
  auto left = records_->count(storage::record_kind::profile, *uuid::parse(other));
  ASSERT_TRUE(left.has_value());
  EXPECT_EQ(*left, 0u);
  auto slug = records_->find_slug(storage::record_kind::profile, *uuid::parse(other), "sensor");
  ASSERT_TRUE(slug.has_value());
  EXPECT_FALSE(slug->has_value());
}

}  // namespace fl::testing
