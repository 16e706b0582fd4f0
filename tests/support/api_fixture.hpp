#pragma once
// A real router over a real RocksDB in a temp dir, driven in memory: requests go through the same
// routing, auth and handlers as over HTTP. Mandates and keys are made through /admin/v1 with the
// bootstrap superadmin key, as an operator would.
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <concepts>
#include <fstream>
#include <future>
#include <memory>
#include <string>

#include "api/bootstrap.hpp"
#include "api/router.hpp"
#include "core/json_in.hpp"
#include "core/json_out.hpp"
#include "storage/database.hpp"
#include "storage/records.hpp"
#include "support/temp_dir.hpp"

// Test convenience: Boost.JSON compares values with string views but not with std::string.
namespace boost::json {
// Constrained to exactly std::string so literals keep using Boost's own overloads.
template <class S>
requires std::same_as<S, std::string>
bool operator==(const value& v, const S& s) {
  return v.is_string() && v.get_string() == s;
}
}  // namespace boost::json

namespace fl::testing {

namespace json = boost::json;

struct reply {
  int status = 0;
  json::value body;  // the parsed response (null for an empty body)
  std::string text;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string content_type;

  [[nodiscard]] std::string header(std::string_view name) const {
    for (const auto& [k, v] : headers)
      if (k == name) return v;
    return {};
  }
  [[nodiscard]] const json::object& envelope() const { return body.as_object(); }
  [[nodiscard]] const json::value& data() const { return body.as_object().at("body"); }
  [[nodiscard]] std::string id() const { return std::string(data().at("id").as_string()); }
  [[nodiscard]] std::string error() const {
    const auto* e = body.is_object() ? body.as_object().if_contains("error") : nullptr;
    return e && e->is_string() ? std::string(e->as_string()) : std::string();
  }
  [[nodiscard]] bool has_next() const { return body.as_object().contains("retrieve_after_id"); }
};

class api_fixture : public ::testing::Test {
 protected:
  void SetUp() override { open(); }

  void open() {
    router_.reset();
    app_.reset();
    records_.reset();
    db_.reset();
    auto db = storage::database::open({.dir = dir_.path()});
    ASSERT_TRUE(db) << db.error().message;
    db_ = std::move(*db);
    records_ = std::make_unique<storage::records>(*db_);
    api::ensure_superadmin_key(*records_, dir_.path());
    std::ifstream in(dir_.path() / "superadmin.key");
    std::getline(in, superadmin_);
    app_ = std::make_unique<api::app_context>(*records_, api::rate_policy{}, parse_config_, reparse_config_,
                                              image_config_, api::ensure_token_secret(dir_.path()));
    router_ = std::make_unique<api::router>(*app_);
  }

  reply call(const std::string& method, const std::string& target, const std::string& key, const std::string& body = {},
             bool key_in_header = true) const {
    api::http_request req;
    req.method = method;
    const auto q = target.find('?');
    req.path = target.substr(0, q);
    req.query = q == std::string::npos ? "" : target.substr(q + 1);
    if (key_in_header) {
      req.api_key_header = key;
    } else {
      req.query += (req.query.empty() ? "" : "&") + std::string("auth=") + key;
    }
    req.body = body;
    return send(req);
  }
  // Any request, as built by the caller (content type, binary body); a body that is not JSON (an
  // image file) is kept in `text` only.
  reply send(const api::http_request& req) const {
    auto res = router_->handle(req);
    if (res.after_durable) {  // as the server does: the answer waits for the write to be durable
      std::promise<bool> durable;
      res.after_durable([&durable](bool ok) { durable.set_value(ok); });
      if (!durable.get_future().get()) res = api::error_response({503, "not durable"});
    }
    reply r;
    r.status = res.status;
    r.text = res.body;
    r.headers = res.headers;
    r.content_type = res.content_type;
    if (res.stream) {  // NDJSON: the lines are kept in `text`; `body` stays null
      for (std::string piece = res.stream->next(); !piece.empty(); piece = res.stream->next()) r.text += piece;
      return r;
    }
    if (!res.body.empty() && res.content_type == "application/json") {
      boost::system::error_code ec;
      r.body = fl::parse_written_json(res.body, ec);
      EXPECT_FALSE(ec) << "response is not JSON: " << res.body;
    }
    return r;
  }
  reply call(const std::string& method, const std::string& target, const std::string& key,
             const json::value& body) const {
    return call(method, target, key, to_json(body));
  }

  // A mandate made through the admin API; returns its id.
  std::string make_mandate(const std::string& name, json::array features = {}) const {
    auto r = call("POST", "/admin/v1/mandates", superadmin_,
                  json::object{{"mandate", json::object{{"name", name}, {"features", features}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return r.id();
  }
  // A key of `mandate` with `role`; returns the secret. Limited generously: tests make many calls.
  std::string make_key(const std::string& mandate, const std::string& role) const {
    auto r = call("POST", "/admin/v1/mandates/" + mandate + "/api_keys", superadmin_,
                  json::object{{"api_key", json::object{{"name", role}, {"role", role}, {"rate_limit", 1000000}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return std::string(r.data().at("key").as_string());
  }
  // A group rule: what a member key of the group may do on resources of `type` whose fields match `regex`.
  static json::object rule(std::string_view type, std::string_view regex, bool read, bool update = false,
                           bool create = false, bool remove = false) {
    return {{"type", type},     {"regex", regex},   {"read", read},
            {"update", update}, {"create", create}, {"delete", remove}};
  }
  std::string make_group(const std::string& mandate, std::initializer_list<json::object> rules) const {
    json::array list;
    for (const auto& r : rules) list.push_back(r);
    auto r = call("POST", "/admin/v1/mandates/" + mandate + "/groups", superadmin_,
                  json::object{{"group", json::object{{"name", "g"}, {"rules", std::move(list)}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return r.id();
  }
  std::string make_member_key(const std::string& mandate, std::initializer_list<std::string> group_ids) const {
    json::array ids;
    for (const auto& g : group_ids) ids.emplace_back(g);
    auto r = call("POST", "/admin/v1/mandates/" + mandate + "/api_keys", superadmin_,
                  json::object{{"api_key", json::object{{"name", "member"},
                                                        {"role", "member"},
                                                        {"groups", std::move(ids)},
                                                        {"rate_limit", 1000000}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return std::string(r.data().at("key").as_string());
  }
  std::string make_driver_instance(const std::string& mandate) const {
    auto r = call("POST", "/admin/v1/mandates/" + mandate + "/driver_instances", superadmin_,
                  json::object{{"driver_instance", json::object{{"name", "manual"}, {"driver", "manual"}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return r.id();
  }
  std::string make_folder(const std::string& key, const std::string& name) const {
    auto r = call("POST", "/api/v1/tags", key, json::object{{"tag", json::object{{"name", name}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return r.id();
  }
  std::string make_device(const std::string& key, const std::string& name, const std::string& folder) const {
    auto r = call(
        "POST", "/api/v1/devices", key,
        json::object{{"device", json::object{{"name", name}, {"tags", json::array{json::object{{"id", folder}}}}}}});
    EXPECT_EQ(r.status, 201) << r.text;
    return r.id();
  }

  temp_dir dir_;
  std::unique_ptr<storage::database> db_;
  std::unique_ptr<storage::records> records_;
  pipeline::parse_service_config parse_config_;  // tests of the pipeline tune these before open()
  pipeline::reparse_config reparse_config_;
  pipeline::image_config image_config_;  // no image directory unless a test sets one before open()
  std::unique_ptr<api::app_context> app_;
  std::unique_ptr<api::router> router_;
  std::string superadmin_;
};

}  // namespace fl::testing
