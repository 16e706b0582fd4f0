// Keys, roles and what each may do.
#include "support/api_fixture.hpp"

namespace fl::testing {

class auth : public api_fixture {};

TEST_F(auth, missing_or_unknown_key_is_401_with_json_error) {
  auto missing = call("GET", "/api/v1/devices", "");
  EXPECT_EQ(missing.status, 401);
  EXPECT_FALSE(missing.envelope().at("ok").as_bool());
  EXPECT_FALSE(missing.error().empty());
  EXPECT_EQ(call("GET", "/api/v1/devices", "fl_" + std::string(64, '0')).status, 401);
  EXPECT_EQ(call("GET", "/api/v1/devices", "garbage").status, 401);
}

TEST_F(auth, key_works_in_header_and_in_auth_parameter) {
  const auto m = make_mandate("A");
  const auto key = make_key(m, "admin");
  EXPECT_EQ(call("GET", "/api/v1/devices", key, std::string{}, true).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/devices", key, std::string{}, false).status, 200);
  // Clients send empty pairs around auth=.
  EXPECT_EQ(call("GET", "/api/v1/devices?&auth=" + key + "&&limit=2", "").status, 200);
}

TEST_F(auth, keys_are_stored_hashed_never_in_clear) {
  const auto m = make_mandate("A");
  const auto key = make_key(m, "admin");
  auto listed = call("GET", "/admin/v1/mandates/" + m + "/api_keys", superadmin_);
  ASSERT_EQ(listed.status, 200);
  EXPECT_EQ(listed.text.find(key), std::string::npos);
  EXPECT_EQ(listed.text.find("\"hash\""), std::string::npos);
  EXPECT_FALSE(listed.data().as_array()[0].as_object().contains("key"));
  // Not in the database files either.
  db_.reset();
  records_.reset();
  router_.reset();
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_.path())) {
    if (!entry.is_regular_file() || entry.path().filename() == "superadmin.key") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::string content((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(content.find(key.substr(3)), std::string::npos) << entry.path();
    EXPECT_EQ(content.find(superadmin_.substr(3)), std::string::npos) << entry.path();
  }
}

TEST_F(auth, superadmin_key_file_is_private_and_bootstrap_happens_once) {
  const auto path = dir_.path() / "superadmin.key";
  EXPECT_EQ(std::filesystem::status(path).permissions() & std::filesystem::perms::all,
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(superadmin_.size(), 67u);
  const auto before = superadmin_;
  open();  // restart
  EXPECT_EQ(superadmin_, before);
  EXPECT_EQ(call("GET", "/admin/v1/mandates", superadmin_).status, 200);
}

TEST_F(auth, read_only_key_reads_but_cannot_write) {
  const auto m = make_mandate("A");
  const auto admin = make_key(m, "admin");
  const auto ro = make_key(m, "read_only");
  const auto folder = make_folder(admin, "F");
  EXPECT_EQ(call("GET", "/api/v1/tags/" + folder, ro).status, 200);
  EXPECT_EQ(call("POST", "/api/v1/tags", ro, json::object{{"tag", json::object{{"name", "X"}}}}).status, 403);
  EXPECT_EQ(call("DELETE", "/api/v1/tags/" + folder, ro).status, 403);
  EXPECT_EQ(call("PATCH", "/api/v1/tags/" + folder, ro, json::object{{"tag", json::object{{"name", "Y"}}}}).status,
            403);
  EXPECT_EQ(call("GET", "/api/v1/tags/" + folder, admin).data().at("name"), "F");
}

TEST_F(auth, member_key_without_groups_sees_nothing_and_gets_403_on_a_device) {
  const auto m = make_mandate("A");
  const auto admin = make_key(m, "admin");
  const auto device = make_device(admin, "d", make_folder(admin, "F"));
  const auto member = make_key(m, "member");
  auto list = call("GET", "/api/v1/devices", member);
  EXPECT_EQ(list.status, 200);
  EXPECT_TRUE(list.data().as_array().empty());
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device, member).status, 403);
}

TEST_F(auth, admin_api_needs_superadmin) {
  const auto m = make_mandate("A");
  const auto admin = make_key(m, "admin");
  EXPECT_EQ(call("GET", "/admin/v1/mandates", admin).status, 403);
  EXPECT_EQ(call("POST", "/admin/v1/mandates/" + m + "/api_keys", admin,
                 json::object{{"api_key", json::object{{"name", "x"}, {"role", "admin"}}}})
                .status,
            403);
}

TEST_F(auth, all_mandate_keys_cannot_use_resource_routes) {
  make_mandate("A");
  auto billing = call("POST", "/admin/v1/api_keys", superadmin_,
                      json::object{{"api_key", json::object{{"name", "b"}, {"role", "billing"}}}});
  ASSERT_EQ(billing.status, 201);
  const std::string key(billing.data().at("key").as_string());
  EXPECT_EQ(call("GET", "/api/v1/devices", key).status, 403);
  EXPECT_EQ(call("GET", "/api/v1/devices", superadmin_).status, 403);
  // Billing gets the all-mandates list as a bare array.
  auto mandates = call("GET", "/api/v1/mandates", key);
  ASSERT_EQ(mandates.status, 200);
  ASSERT_TRUE(mandates.body.is_array());
  EXPECT_EQ(mandates.body.as_array().size(), 1u);
}

TEST_F(auth, mandate_visibility_follows_the_key) {
  const auto a = make_mandate("A");
  const auto b = make_mandate("B");
  const auto admin_a = make_key(a, "admin");
  auto own = call("GET", "/api/v1/mandates", admin_a);
  ASSERT_EQ(own.status, 200);
  ASSERT_EQ(own.data().as_array().size(), 1u);
  EXPECT_EQ(own.data().as_array()[0].at("id"), a);
  EXPECT_EQ(call("GET", "/api/v1/mandates/" + a, admin_a).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/mandates/" + b, admin_a).status, 404);
  auto all = call("GET", "/api/v1/mandates/", superadmin_);
  ASSERT_EQ(all.status, 200);
  EXPECT_EQ(all.data().as_array().size(), 2u);
}

TEST_F(auth, deleted_key_stops_working_at_once) {
  const auto m = make_mandate("A");
  auto created = call("POST", "/admin/v1/mandates/" + m + "/api_keys", superadmin_,
                      json::object{{"api_key", json::object{{"name", "k"}, {"role", "admin"}}}});
  const std::string key(created.data().at("key").as_string());
  EXPECT_EQ(call("GET", "/api/v1/devices", key).status, 200);
  EXPECT_EQ(call("DELETE", "/admin/v1/mandates/" + m + "/api_keys/" + created.id(), superadmin_).status, 200);
  EXPECT_EQ(call("GET", "/api/v1/devices", key).status, 401);
}

}  // namespace fl::testing
