// The /admin/v1 surface: mandates, their keys and limits, all-mandate keys, driver instances.
#include "support/api_fixture.hpp"

namespace fl::testing {

class admin : public api_fixture {};

TEST_F(admin, creates_a_mandate_with_defaults_and_features) {
  auto r = call("POST", "/admin/v1/mandates", superadmin_,
                json::object{{"mandate", json::object{{"name", "Grüne Wiese"},
                                                      {"features", json::array{"api_packets_writeable"}}}}});
  ASSERT_EQ(r.status, 201) << r.text;
  const auto& m = r.data().as_object();
  EXPECT_EQ(m.at("slug"), "gruene-wiese");
  EXPECT_EQ(m.at("features").as_array().size(), 1u);
  EXPECT_EQ(m.at("default_language"), "en");
  EXPECT_EQ(m.at("allow_registration"), false);
  EXPECT_TRUE(m.at("limit_max_api_keys").is_int64());
  EXPECT_EQ(call("GET", "/admin/v1/mandates/" + r.id(), superadmin_).data().at("name"), "Grüne Wiese");
}

TEST_F(admin, rejects_bad_mandate_fields) {
  for (const char* body :
       {R"({"mandate":{}})", R"({"mandate":{"name":5}})", R"({"mandate":{"name":"x","features":["fly"]}})",
        R"({"mandate":{"name":"x","limit_max_api_keys":-1}})", R"({"mandate":{"name":"x","slug":"Not A Slug"}})",
        R"({"name":"x"})"}) {
    auto r = call("POST", "/admin/v1/mandates", superadmin_, std::string(body));
    EXPECT_EQ(r.status, 422) << body << " -> " << r.text;
  }
  EXPECT_EQ(call("GET", "/admin/v1/mandates", superadmin_).data().as_array().size(), 0u);
}

TEST_F(admin, mandate_slugs_stay_unique) {
  make_mandate("Acme");
  auto second =
      call("POST", "/admin/v1/mandates", superadmin_, json::object{{"mandate", json::object{{"name", "ACME"}}}});
  EXPECT_EQ(second.data().at("slug"), "acme-2");
  auto taken = call("POST", "/admin/v1/mandates", superadmin_,
                    json::object{{"mandate", json::object{{"name", "x"}, {"slug", "acme"}}}});
  EXPECT_EQ(taken.status, 422);
}

TEST_F(admin, enforces_limit_max_api_keys) {
  auto r = call("POST", "/admin/v1/mandates", superadmin_,
                json::object{{"mandate", json::object{{"name", "Small"}, {"limit_max_api_keys", 2}}}});
  const auto m = r.id();
  make_key(m, "admin");
  make_key(m, "read_only");
  auto third = call("POST", "/admin/v1/mandates/" + m + "/api_keys", superadmin_,
                    json::object{{"api_key", json::object{{"name", "x"}, {"role", "admin"}}}});
  EXPECT_EQ(third.status, 422);
  EXPECT_NE(third.error().find("limit_max_api_keys"), std::string::npos);
  EXPECT_EQ(call("GET", "/admin/v1/mandates/" + m + "/api_keys", superadmin_).data().as_array().size(), 2u);
  // Raising the limit allows one more.
  EXPECT_EQ(call("PATCH", "/admin/v1/mandates/" + m, superadmin_,
                 json::object{{"mandate", json::object{{"limit_max_api_keys", 3}}}})
                .status,
            200);
  make_key(m, "admin");
}

TEST_F(admin, key_roles_depend_on_binding) {
  const auto m = make_mandate("A");
  EXPECT_EQ(call("POST", "/admin/v1/mandates/" + m + "/api_keys", superadmin_,
                 json::object{{"api_key", json::object{{"name", "x"}, {"role", "billing"}}}})
                .status,
            422);
  EXPECT_EQ(call("POST", "/admin/v1/api_keys", superadmin_,
                 json::object{{"api_key", json::object{{"name", "x"}, {"role", "admin"}}}})
                .status,
            422);
  auto key = call("POST", "/admin/v1/api_keys", superadmin_,
                  json::object{{"api_key", json::object{{"name", "x"}, {"role", "superadmin"}}}});
  ASSERT_EQ(key.status, 201);
  EXPECT_TRUE(key.data().at("mandate_id").is_null());
  EXPECT_EQ(call("GET", "/admin/v1/mandates", std::string(key.data().at("key").as_string())).status, 200);
}

TEST_F(admin, edits_a_key_without_changing_its_secret) {
  const auto m = make_mandate("A");
  auto created = call("POST", "/admin/v1/mandates/" + m + "/api_keys", superadmin_,
                      json::object{{"api_key", json::object{{"name", "k"}, {"role", "admin"}}}});
  const std::string secret(created.data().at("key").as_string());
  auto edited = call("PATCH", "/admin/v1/mandates/" + m + "/api_keys/" + created.id(), superadmin_,
                     json::object{{"api_key", json::object{{"role", "read_only"}, {"rate_limit", 100}}}});
  ASSERT_EQ(edited.status, 200) << edited.text;
  EXPECT_EQ(edited.data().at("role"), "read_only");
  EXPECT_EQ(edited.data().at("rate_limit"), 100);
  EXPECT_EQ(call("GET", "/api/v1/devices", secret).status, 200);
  EXPECT_EQ(call("POST", "/api/v1/tags", secret, json::object{{"tag", json::object{{"name", "x"}}}}).status, 403);
}

TEST_F(admin, deleting_a_mandate_removes_its_data_and_keys_only) {
  const auto a = make_mandate("A");
  const auto b = make_mandate("B");
  const auto key_a = make_key(a, "admin");
  const auto key_b = make_key(b, "admin");
  make_device(key_a, "d", make_folder(key_a, "F"));
  make_device(key_b, "d", make_folder(key_b, "F"));
  EXPECT_EQ(call("DELETE", "/admin/v1/mandates/" + a, superadmin_).status, 200);
  EXPECT_EQ(call("GET", "/admin/v1/mandates/" + a, superadmin_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/devices", key_a).status, 401);
  EXPECT_EQ(call("GET", "/api/v1/devices", key_b).data().as_array().size(), 1u);
  EXPECT_EQ(call("GET", "/api/v1/tags", key_b).data().as_array().size(), 1u);
}

TEST_F(admin, driver_instances_are_managed_here_and_read_there) {
  const auto m = make_mandate("A");
  const auto key = make_key(m, "admin");
  auto bad = call("POST", "/admin/v1/mandates/" + m + "/driver_instances", superadmin_,
                  json::object{{"driver_instance", json::object{{"name", "x"}, {"driver", "warp_drive"}}}});
  EXPECT_EQ(bad.status, 422);
  const auto di = make_driver_instance(m);
  auto listed = call("GET", "/api/v1/drivers/instances", key);
  ASSERT_EQ(listed.status, 200);
  EXPECT_FALSE(listed.has_next());
  ASSERT_EQ(listed.data().as_array().size(), 1u);
  EXPECT_EQ(listed.data().as_array()[0].at("owner_id"), m);
  EXPECT_EQ(call("GET", "/api/v1/drivers/instances/" + di, key).data().at("driver"), "manual");
  // Disabled through PATCH.
  auto off = call("PATCH", "/admin/v1/mandates/" + m + "/driver_instances/" + di, superadmin_,
                  json::object{{"driver_instance", json::object{{"enabled", false}}}});
  EXPECT_EQ(off.data().at("enabled"), false);
  // In use by an interface: refuse deletion.
  const auto device = make_device(key, "d", make_folder(key, "F"));
  ASSERT_EQ(call("POST", "/api/v1/devices/" + device + "/interfaces", key,
                 json::object{{"interface", json::object{{"driver_instance_id", di}}}})
                .status,
            201);
  EXPECT_EQ(call("DELETE", "/admin/v1/mandates/" + m + "/driver_instances/" + di, superadmin_).status, 409);
}

TEST_F(admin, driver_catalogue_lists_the_built_in_drivers) {
  const auto key = make_key(make_mandate("A"), "read_only");
  auto drivers = call("GET", "/api/v1/drivers", key);
  ASSERT_EQ(drivers.status, 200);
  EXPECT_FALSE(drivers.has_next());
  std::set<std::string> names;
  for (const auto& d : drivers.data().as_array()) names.insert(std::string(d.at("driver").as_string()));
  // lorawan_network_server was removed: it did not work, and only working drivers are listed.
  EXPECT_EQ(names, (std::set<std::string>{"manual", "mqtt_client", "http_network_server", "gateway_management"}));
  EXPECT_EQ(call("GET", "/api/v1/drivers/mqtt_client", key).data().at("name"), "MQTT client");
  EXPECT_EQ(call("GET", "/api/v1/drivers/nope", key).status, 404);
}

TEST_F(admin, everything_survives_a_restart) {
  const auto m = make_mandate("A");
  const auto key = make_key(m, "admin");
  const auto folder = make_folder(key, "F");
  const auto device = make_device(key, "d", folder);
  open();  // close and reopen the database
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device, key).data().at("tags").as_array()[0].at("id"), folder);
  EXPECT_EQ(call("GET", "/admin/v1/mandates/" + m, superadmin_).status, 200);
}

}  // namespace fl::testing
