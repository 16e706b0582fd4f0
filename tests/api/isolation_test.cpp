// Nothing of one mandate is visible or changeable with another mandate's key. The test walks the
// route table itself, so a route added later is covered without touching this file.
#include "api/routes.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

class isolation : public api_fixture {
 protected:
  void SetUp() override {
    image_config_.dir = image_dir_.path();  // images are stored, so their routes have something to leak
    api_fixture::SetUp();
    mandate_a_ = make_mandate("Victim", json::array{"api_packets_writeable"});
    key_a_ = make_key(mandate_a_, "admin");
    instance_a_ = make_driver_instance(mandate_a_);
    folder_a_ = make_folder(key_a_, "Secret");
    child_a_ = make_folder(key_a_, "Secret / Inner");
    device_a_ = make_device(key_a_, "victim-device", folder_a_);
    auto iface = call("POST", "/api/v1/devices/" + device_a_ + "/interfaces", key_a_,
                      json::object{{"interface", json::object{{"driver_instance_id", instance_a_},
                                                              {"opts", json::object{{"device_eui", "AABBCCDD"}}}}}});
    interface_a_ = iface.id();
    parser_a_ =
        call("POST", "/admin/v1/mandates/" + mandate_a_ + "/parsers", superadmin_,
             json::object{
                 {"parser",
                  json::object{
                      {"name", "secret-parser"},
                      {"code",
                       "defmodule Parser do\n  use Platform.Parsing.Behaviour\n  def parse(_, _), do: []\nend\n"}}}})
            .id();
    packet_a_ =
        call("POST", "/api/v1/devices/" + device_a_ + "/packets", key_a_,
             json::object{{"packet", json::object{{"payload_encoding", "utf8"}, {"payload", "secret-payload"}}}})
            .id();

    const auto b = make_mandate("Attacker", json::array{"api_packets_writeable"});
    key_b_ = make_key(b, "admin");
    make_device(key_b_, "attacker-device", make_folder(key_b_, "Mine"));

    // A 1x1 PNG as A's device image.
    api::http_request upload;
    upload.method = "POST";
    upload.path = "/api/v1/devices/" + device_a_ + "/images";
    upload.api_key_header = key_a_;
    upload.content_type = "multipart/form-data; boundary=b";
    upload.body =
        std::string("--b\r\nContent-Disposition: form-data; name=\"file\"; filename=\"secret-image.png\"\r\n\r\n") +
        std::string(
            "\x89PNG\r\n\x1a\n\0\0\0\x0dIHDR\0\0\0\x01\0\0\0\x01\x08\x04\0\0\0\xb5\x1c\x0c\x02\0\0\0"
            "\x0bIDAT\x78\xda\x63\x64\x60\0\0\0\x06\0\x02\x30\x81\xd0\x2f\0\0\0\0IEND\xae\x42\x60\x82",
            68) +
        "\r\n--b--\r\n";
    auto image = send(upload);
    ASSERT_EQ(image.status, 201) << image.text;
    image_a_ = image.id();
  }

  // Everything of mandate A as its own admin sees it.
  std::string snapshot() const {
    std::string all;
    for (const char* path : {"/api/v1/tags?limit=100", "/api/v1/devices?limit=100", "/api/v1/drivers/instances",
                             "/api/v1/parsers?limit=100"})
      all += call("GET", path, key_a_).text;
    all += call("GET", "/api/v1/devices/" + device_a_ + "/interfaces", key_a_).text;
    all += call("GET", "/api/v1/devices/" + device_a_ + "/packets/" + packet_a_, key_a_).text;
    all += call("GET", "/api/v1/devices/" + device_a_ + "/images", key_a_).text;
    all += std::to_string(call("GET", "/api/v1/images/" + image_a_ + "/original", key_a_).text.size());
    return all;
  }

  std::string fill(std::string_view pattern) const {
    std::string path;
    std::size_t start = 0;
    while (start <= pattern.size()) {
      const auto slash = pattern.find('/', start);
      std::string_view part =
          pattern.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start);
      std::string seg(part);
      if (part == ":device")
        seg = device_a_;
      else if (part == ":tag")
        seg = folder_a_;
      else if (part == ":interface")
        seg = interface_a_;
      else if (part == ":instance")
        seg = instance_a_;
      else if (part == ":parser")
        seg = parser_a_;
      else if (part == ":packet")
        seg = packet_a_;
      else if (part == ":mandate_id")
        seg = mandate_a_;
      else if (part == ":image")
        seg = image_a_;
      else if (part == ":version")
        seg = "original";
      else if (part == "by-:selector")
        seg = "by-id";
      else if (part == ":identifier")
        seg = device_a_;
      else if (part.starts_with(':'))
        seg = uuid::random().str();
      path += "/" + seg;
      if (slash == std::string_view::npos) break;
      start = slash + 1;
    }
    return path;
  }

  // A body that points at A's objects wherever a body can name one.
  json::object hostile_body() const {
    json::object fields{{"name", "pwned"},
                        {"parent_id", folder_a_},
                        {"driver_instance_id", instance_a_},
                        {"tags", json::array{json::object{{"id", folder_a_}}}},
                        {"payload_encoding", "utf8"},
                        {"payload", "x"},
                        {"interface_id", interface_a_}};
    return {{"tag", fields}, {"device", fields}, {"interface", fields}, {"packet", fields}, {"name", "pwned"}};
  }

  std::vector<std::string> secrets() const {
    return {device_a_,       folder_a_, child_a_,        interface_a_, instance_a_,      parser_a_, key_a_,
            "victim-device", "Secret",  "secret-parser", packet_a_,    "secret-payload", image_a_,  "secret-image"};
  }

  std::string mandate_a_, key_a_, instance_a_, folder_a_, child_a_, device_a_, interface_a_, parser_a_, packet_a_,
      image_a_, key_b_;
  temp_dir image_dir_;
};

TEST_F(isolation, every_route_with_a_foreign_key_and_foreign_ids_reveals_and_changes_nothing) {
  const std::string before = snapshot();
  int routes = 0;
  for (const auto& r : api::api_routes()) {
    if (r.level == api::access::open) continue;  // public documents, the same for every caller
    const std::string path = "/api/v1" + fill(r.pattern);
    auto res = call(std::string(r.method), path, key_b_, to_json(hostile_body()));
    ++routes;
    for (const auto& secret : secrets()) {
      EXPECT_EQ(res.text.find(secret), std::string::npos)
          << r.method << " " << path << " leaked " << secret << ": " << res.text;
    }
    const bool names_an_object =
        r.pattern.find(":device") != std::string_view::npos || r.pattern.find(":tag") != std::string_view::npos ||
        r.pattern.find(":interface") != std::string_view::npos ||
        r.pattern.find(":instance") != std::string_view::npos || r.pattern.find(":parser") != std::string_view::npos ||
        r.pattern.find(":packet") != std::string_view::npos ||
        r.pattern.find(":mandate_id") != std::string_view::npos || r.pattern.find(":image") != std::string_view::npos;
    if (names_an_object) {
      EXPECT_EQ(res.status, 404) << r.method << " " << path << ": " << res.text;
    }
  }
  EXPECT_GT(routes, 20);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(isolation, slugs_do_not_cross_mandates) {
  EXPECT_EQ(call("GET", "/api/v1/devices/victim-device", key_b_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/tags/secret", key_b_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/devices/by-eui/AABBCCDD", key_b_).data().as_array().size(), 0u);
  // B may use the same names and slugs without touching A.
  EXPECT_EQ(
      call("POST", "/api/v1/tags", key_b_, json::object{{"tag", json::object{{"name", "Secret"}}}}).data().at("slug"),
      "secret");
  EXPECT_EQ(call("GET", "/api/v1/tags/secret", key_a_).id(), folder_a_);
}

TEST_F(isolation, a_device_cannot_be_put_into_a_foreign_folder) {
  auto r = call(
      "POST", "/api/v1/devices", key_b_,
      json::object{{"device", json::object{{"name", "x"}, {"tags", json::array{json::object{{"id", folder_a_}}}}}}});
  EXPECT_EQ(r.status, 422);
  auto nested = call("POST", "/api/v1/tags", key_b_,
                     json::object{{"tag", json::object{{"name", "x"}, {"parent_id", folder_a_}}}});
  EXPECT_EQ(nested.status, 422);
}

}  // namespace fl::testing
