// Devices and their interfaces.
#include "support/api_fixture.hpp"

namespace fl::testing {

class devices : public api_fixture {
 protected:
  void SetUp() override {
    api_fixture::SetUp();
    mandate_ = make_mandate("M");
    key_ = make_key(mandate_, "admin");
    folder_ = make_folder(key_, "Site");
    instance_ = make_driver_instance(mandate_);
  }
  reply create(const json::object& device) const {
    return call("POST", "/api/v1/devices", key_, json::object{{"device", device}});
  }
  json::array tag(const std::string& id) const { return json::array{json::object{{"id", id}}}; }

  std::string mandate_, key_, folder_, instance_;
};

TEST_F(devices, create_needs_at_least_one_tag) {
  EXPECT_EQ(create({{"name", "d"}}).status, 422);
  EXPECT_EQ(create({{"name", "d"}, {"tags", json::array{}}}).status, 422);
  EXPECT_EQ(create({{"name", "d"}, {"tags", "Site"}}).status, 422);
  EXPECT_EQ(call("GET", "/api/v1/devices", key_).data().as_array().size(), 0u);
}

TEST_F(devices, create_mixes_existing_and_new_folders) {
  auto r =
      create({{"name", "Sensor 1"},
              {"type", "sensor"},
              {"tags", json::array{json::object{{"id", folder_}},
                                   json::object{{"action", "create"}, {"name", "Site / Roof"}, {"color_hue", 120}}}}});
  ASSERT_EQ(r.status, 201) << r.text;
  const auto& tags = r.data().at("tags").as_array();
  ASSERT_EQ(tags.size(), 2u);
  EXPECT_EQ(tags[0].at("id"), folder_);
  EXPECT_EQ(tags[1].at("name"), "Site / Roof");
  EXPECT_EQ(tags[1].at("color_hue"), 120);
  EXPECT_EQ(call("GET", "/api/v1/tags/by-name/Site%20%2F%20Roof", key_).data().as_array().size(), 1u);
}

TEST_F(devices, a_failing_device_create_creates_no_folder) {
  auto r = create({{"name", "d"},
                   {"tags", json::array{json::object{{"action", "create"}, {"name", "New"}},
                                        json::object{{"id", uuid::random().str()}}}}});
  EXPECT_EQ(r.status, 422);
  EXPECT_EQ(call("GET", "/api/v1/tags", key_).data().as_array().size(), 1u);  // only "Site"
  auto bad_type = create(
      {{"name", "d"}, {"type", "toaster"}, {"tags", json::array{json::object{{"action", "create"}, {"name", "New"}}}}});
  EXPECT_EQ(bad_type.status, 422);
  EXPECT_EQ(call("GET", "/api/v1/tags", key_).data().as_array().size(), 1u);
}

TEST_F(devices, defaults_and_always_present_fields) {
  auto r = create({{"name", "Plain"}, {"tags", tag(folder_)}});
  const auto& d = r.data().as_object();
  EXPECT_EQ(d.at("type"), "generic");
  EXPECT_EQ(d.at("slug"), "plain");
  EXPECT_EQ(d.at("mandate_id"), mandate_);
  EXPECT_EQ(d.at("last_readings"), json::array{});
  EXPECT_EQ(d.at("profile_data"), json::array{});
  EXPECT_EQ(d.at("fields"), json::object{});
  for (const char* null_field : {"stats", "deleted_at", "default_packets_view_id", "default_readings_view_id",
                                 "location", "parser_id", "template_id"}) {
    EXPECT_TRUE(d.at(null_field).is_null()) << null_field;
  }
  EXPECT_FALSE(d.contains("tag_ids"));
}

TEST_F(devices, ascii_names_slug_to_their_lowercase_and_slugs_are_unique) {
  EXPECT_EQ(create({{"name", "ABC123"}, {"tags", tag(folder_)}}).data().at("slug"), "abc123");
  EXPECT_EQ(create({{"name", "abc123"}, {"tags", tag(folder_)}}).data().at("slug"), "abc123-2");
  EXPECT_EQ(call("GET", "/api/v1/devices/abc123", key_).data().at("name"), "ABC123");
}

TEST_F(devices, location_is_geojson_longitude_first) {
  auto r = create({{"name", "g"},
                   {"tags", tag(folder_)},
                   {"location", json::object{{"type", "Point"}, {"coordinates", json::array{13.4, 52.5}}}}});
  ASSERT_EQ(r.status, 201);
  EXPECT_EQ(r.text.find("\"coordinates\":[13.4,52.5]") != std::string::npos, true) << r.text;
  EXPECT_EQ(create({{"name", "g"},
                    {"tags", tag(folder_)},
                    {"location", json::object{{"type", "Point"}, {"coordinates", json::array{200, 0}}}}})
                .status,
            422);
  EXPECT_EQ(create({{"name", "g"}, {"tags", tag(folder_)}, {"location", json::object{{"lat", 1}}}}).status, 422);
}

TEST_F(devices, edit_with_put_and_patch) {
  const auto id = make_device(key_, "Old", folder_);
  auto patched = call("PATCH", "/api/v1/devices/" + id, key_,
                      json::object{{"device", json::object{{"name", "New Name"}, {"meta", json::object{{"k", 1}}}}}});
  ASSERT_EQ(patched.status, 200) << patched.text;
  EXPECT_EQ(patched.data().at("name"), "New Name");
  EXPECT_EQ(patched.data().at("slug"), "new-name");
  EXPECT_EQ(patched.data().at("meta").at("k"), 1);
  EXPECT_EQ(call("GET", "/api/v1/devices/old", key_).status, 404);
  auto other = make_folder(key_, "Other");
  auto put =
      call("PUT", "/api/v1/devices/new-name", key_, json::object{{"device", json::object{{"tags", tag(other)}}}});
  ASSERT_EQ(put.status, 200);
  EXPECT_EQ(put.data().at("tags").as_array()[0].at("id"), other);
  EXPECT_EQ(
      call("PATCH", "/api/v1/devices/" + id, key_, json::object{{"device", json::object{{"tags", json::array{}}}}})
          .status,
      422);
  EXPECT_EQ(call("PATCH", "/api/v1/devices/" + id, key_,
                 json::object{{"device", json::object{{"parser_id", uuid::random().str()}}}})
                .status,
            422);
}

TEST_F(devices, delete_returns_the_device_and_removes_its_interfaces) {
  const auto id = make_device(key_, "d", folder_);
  auto iface = call("POST", "/api/v1/devices/" + id + "/interfaces", key_,
                    json::object{{"interface", json::object{{"driver_instance_id", instance_}}}});
  ASSERT_EQ(iface.status, 201);
  auto gone = call("DELETE", "/api/v1/devices/" + id, key_);
  ASSERT_EQ(gone.status, 200);
  EXPECT_EQ(gone.id(), id);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + id, key_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + id + "/interfaces/" + iface.id(), key_).status, 404);
  // Its slug is free again.
  EXPECT_EQ(create({{"name", "d"}, {"tags", tag(folder_)}}).data().at("slug"), "d");
}

TEST_F(devices, selectors_match_interfaces_case_insensitively) {
  const auto a = make_device(key_, "A", folder_);
  const auto b = make_device(key_, "B", folder_);
  for (const auto& [device, eui] : {std::pair{a, "70B3D57ED0001234"}, std::pair{b, "70b3d57ed0009999"}}) {
    ASSERT_EQ(
        call("POST", "/api/v1/devices/" + device + "/interfaces", key_,
             json::object{{"interface",
                           json::object{{"driver_instance_id", instance_},
                                        {"opts", json::object{{"device_eui", eui}, {"device_address", "26011F00"}}}}}})
            .status,
        201);
  }
  auto by_eui = call("GET", "/api/v1/devices/by-eui/70b3d57ed0001234", key_);
  ASSERT_EQ(by_eui.data().as_array().size(), 1u);
  EXPECT_EQ(by_eui.data().as_array()[0].at("id"), a);
  EXPECT_EQ(by_eui.data().as_array()[0].at("interfaces").as_array().size(), 1u);
  EXPECT_EQ(call("GET", "/api/v1/devices/by-address/26011f00", key_).data().as_array().size(), 2u);
  EXPECT_EQ(call("GET", "/api/v1/devices/by-name/B", key_).data().as_array()[0].at("id"), b);
  EXPECT_EQ(call("GET", "/api/v1/devices/by-slug/a", key_).data().as_array()[0].at("id"), a);
  EXPECT_EQ(call("GET", "/api/v1/devices/by-id/" + b, key_).data().as_array()[0].at("id"), b);
  EXPECT_EQ(call("GET", "/api/v1/devices/by-colour/red", key_).status, 404);
}

TEST_F(devices, folder_device_list_holds_only_its_devices) {
  const auto other = make_folder(key_, "Other");
  const auto in = make_device(key_, "in", folder_);
  make_device(key_, "out", other);
  auto listed = call("GET", "/api/v1/tags/" + folder_ + "/devices?last_readings=3&with_profile=1", key_);
  ASSERT_EQ(listed.status, 200) << listed.text;
  ASSERT_EQ(listed.data().as_array().size(), 1u);
  EXPECT_EQ(listed.data().as_array()[0].at("id"), in);
  EXPECT_EQ(call("GET", "/api/v1/devices?last_readings=21", key_).status, 400);
  EXPECT_EQ(call("GET", "/api/v1/devices?with_profile=maybe", key_).status, 400);
}

TEST_F(devices, interfaces_full_crud) {
  const auto device = make_device(key_, "d", folder_);
  const std::string base = "/api/v1/devices/" + device + "/interfaces";
  auto created = call("POST", base, key_,
                      json::object{{"interface", json::object{{"driver_instance_id", instance_},
                                                              {"name", "radio"},
                                                              {"opts", json::object{{"eui", "AB"}}}}}});
  ASSERT_EQ(created.status, 201) << created.text;
  EXPECT_EQ(created.data().at("device_id"), device);
  EXPECT_EQ(created.data().at("enabled"), true);
  EXPECT_TRUE(created.data().at("deleted_at").is_null());
  EXPECT_EQ(call("GET", base + "/" + created.id(), key_).data().at("name"), "radio");
  auto edited =
      call("PATCH", base + "/" + created.id(), key_, json::object{{"interface", json::object{{"enabled", false}}}});
  EXPECT_EQ(edited.data().at("enabled"), false);
  EXPECT_EQ(edited.data().at("opts").at("eui"), "AB");
  auto list = call("GET", base, key_);
  ASSERT_EQ(list.data().as_array().size(), 1u);
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device, key_).data().at("interfaces").as_array().size(), 1u);
  EXPECT_EQ(call("DELETE", base + "/" + created.id(), key_).status, 200);
  EXPECT_EQ(call("GET", base, key_).data().as_array().size(), 0u);
}

TEST_F(devices, interface_needs_a_driver_instance_of_the_same_mandate) {
  const auto device = make_device(key_, "d", folder_);
  const std::string base = "/api/v1/devices/" + device + "/interfaces";
  EXPECT_EQ(call("POST", base, key_, json::object{{"interface", json::object{{"opts", json::object{}}}}}).status, 422);
  const auto foreign = make_driver_instance(make_mandate("Other"));
  EXPECT_EQ(call("POST", base, key_, json::object{{"interface", json::object{{"driver_instance_id", foreign}}}}).status,
            422);
  EXPECT_EQ(call("POST", base, key_, json::object{{"interface", json::object{{"driver_instance_id", "nope"}}}}).status,
            422);
  EXPECT_EQ(call("GET", base, key_).data().as_array().size(), 0u);
}

}  // namespace fl::testing
