#pragma once
// One worker pool shared by a test binary (starting BEAMs costs ~0.5 s each), plus helpers to load
// parser sources from tests/sandbox/ and to build packets.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <sstream>

#include "sandbox/worker_pool.hpp"
#include "support/source_path.hpp"

namespace fl::testing {

inline sandbox::worker_pool& shared_pool() {
  static std::unique_ptr<sandbox::worker_pool> pool = [] {
    sandbox::pool_config config;
    config.max_workers = 4;
    config.max_workers_per_mandate = 1;
    return std::make_unique<sandbox::worker_pool>(config);
  }();
  return *pool;
}

inline std::string read_source(const std::string& relative) {
  std::ifstream in(source_path(relative));
  EXPECT_TRUE(in) << relative;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline sandbox::packet_input binary_packet(std::string bytes, boost::json::object meta = {}) {
  sandbox::packet_input p;
  p.id = "00000000-0000-4000-8000-000000000001";
  p.device_id = "00000000-0000-4000-8000-000000000002";
  p.payload_encoding = "binary";
  p.binary_payload = std::move(bytes);
  p.meta = std::move(meta);
  p.transceived_at = 1'700'000'000'000'000;
  return p;
}

}  // namespace fl::testing
