// GET /healthz and GET /readyz through the real router, storage and sandbox: no key needed, and
// readiness waits for a parser worker to have started (api/resources/health.*, pipeline/readiness.*).
#include <gtest/gtest.h>

#include "sandbox/worker_pool.hpp"
#include "support/api_fixture.hpp"

namespace fl::testing {

using namespace std::chrono_literals;

class server_health : public api_fixture {};

TEST_F(server_health, healthz_answers_ok_without_a_key) {
  const auto r = call("GET", "/healthz", "");
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.text, R"({"status":"ok"})");
  EXPECT_EQ(r.header("cache-control"), "no-store");
  EXPECT_EQ(r.header("x-ratelimit-limit"), "");  // no key, no bucket
}

TEST_F(server_health, probes_take_no_key_and_ignore_a_wrong_one) {
  EXPECT_EQ(call("GET", "/healthz", "fl_not_a_key").status, 200);
  EXPECT_EQ(call("POST", "/healthz", "").status, 405);
  EXPECT_EQ(call("GET", "/healthz/more", "").status, 404);
  EXPECT_EQ(call("GET", "/nothing", "").status, 404);
}

TEST_F(server_health, readyz_is_503_naming_the_sandbox_until_a_worker_has_started_then_200) {
  auto r = call("GET", "/readyz", "");
  EXPECT_EQ(r.status, 503) << r.text;
  EXPECT_EQ(r.body.at("status"), "not_ready");
  EXPECT_NE(std::string(r.body.at("not_ready").at("sandbox").as_string()).find("not been started"), std::string::npos)
      << r.text;
  EXPECT_FALSE(r.body.at("not_ready").as_object().contains("storage")) << r.text;

  app_->parsing.warm_up();
  ASSERT_TRUE(app_->parsing.wait_warmed(60s));
  r = call("GET", "/readyz", "");
  EXPECT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.text, R"({"status":"ready"})");
  EXPECT_EQ(app_->parsing.sandbox_pool().live_workers(), 0u);  // the probe's worker was stopped
}

TEST_F(server_health, readyz_names_why_parser_workers_cannot_start) {
  parse_config_.runtime_ebin = dir_.path() / "no-runtime-here";
  open();
  app_->parsing.warm_up();
  ASSERT_TRUE(app_->parsing.wait_warmed(60s));
  const auto r = call("GET", "/readyz", "");
  EXPECT_EQ(r.status, 503) << r.text;
  const std::string reason(r.body.at("not_ready").at("sandbox").as_string());
  EXPECT_NE(reason.find("parser workers cannot start"), std::string::npos) << reason;
  EXPECT_EQ(reason.find("no-runtime-here"), std::string::npos) << reason;  // paths only in the log
  // The domain knows the details (serve logs them).
  const auto status = app_->parsing.sandbox_status();
  EXPECT_NE(status.problem.find("parser runtime not found in"), std::string::npos) << status.problem;
  EXPECT_NE(status.problem.find("no-runtime-here"), std::string::npos) << status.problem;
  EXPECT_EQ(call("GET", "/healthz", "").status, 200);  // alive, only not ready
}

}  // namespace fl::testing
