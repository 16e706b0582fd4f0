// A stream of a million readings from the real server: every line arrives, chunked, and the
// server's memory does not grow with the result.
#include <gtest/gtest.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cstdlib>
#include <string>
#include <vector>

#include "api/http/client.hpp"
#include "api/http/ndjson_reader.hpp"
#include "core/json_out.hpp"
#include "pipeline/parse_records.hpp"
#include "storage/readings.hpp"
#include "storage/records.hpp"
#include "support/eventually.hpp"
#include "support/prometheus_text.hpp"
#include "support/server_process.hpp"
#include "support/temp_dir.hpp"

namespace fl::testing {

namespace json = boost::json;

namespace {

// Writes `count` readings for the device straight into the data directory (the server is stopped).
void seed_readings(const std::filesystem::path& data, const uuid& mandate, const uuid& device, int count) {
  auto db = storage::database::open({.dir = data});
  ASSERT_TRUE(db) << db.error().message;
  storage::readings readings(**db);
  const micros start = 1'700'000'000'000'000;
  for (int done = 0; done < count;) {
    auto batch = (*db)->batch();
    for (int i = 0; i < 20'000 && done < count; ++i, ++done) {
      storage::new_reading r{uuid::random(), uuid::random(), start + done * 1'000'000LL, start, {}};
      r.doc = pipeline::reading_document(r, device, std::nullopt, nullptr,
                                         json::object{{"temperature", 20.5}, {"humidity", done % 100}});
      readings.put(batch, mandate, device, 0, r);
    }
    ASSERT_TRUE((*db)->write(batch, storage::durability::buffered));
  }
}

// AddressSanitizer holds freed memory back (256 MiB by default) to catch use after free, so an
// instrumented server's resident size grows with what it has freed. The server started here gets
// a small quarantine so that the bound below measures what it holds, not what it has let go.
void hold_little_freed_memory_in_children() {
#if defined(__SANITIZE_ADDRESS__)
  const char* given = std::getenv("ASAN_OPTIONS");
  const std::string options = std::string(given ? given : "") + ":quarantine_size_mb=4";
  ::setenv("ASAN_OPTIONS", options.c_str(), 1);
#endif
}

// True once RocksDB has nothing left to flush or compact: reopening a freshly seeded directory
// starts compactions whose buffers and new tables would otherwise be counted as the stream's.
bool storage_settled(api::http_client& client) {
  auto scraped = client.request("GET", "/metrics");
  if (scraped.status != 200) return false;
  const auto& text = scraped.body;
  return sample_value(text, "fieldline_rocksdb_running_compactions") == 0.0 &&
         sample_value(text, "fieldline_rocksdb_running_flushes") == 0.0 &&
         sample_value(text, "fieldline_rocksdb_pending_compaction_bytes") == 0.0;
}

}  // namespace

TEST(stream_memory, a_million_readings_stream_without_the_server_growing) {
  constexpr int count = 1'000'000;
  temp_dir dir;
  std::string key, mandate, device;
  {
    auto server = start_server(dir.path());
    ASSERT_GT(server->port, 0);
    const std::string superadmin = superadmin_key(dir.path());
    api::http_client client("127.0.0.1", server->port);
    const std::vector<std::pair<std::string, std::string>> admin{{"x-api-key", superadmin}};
    mandate = created_id(client.request("POST", "/admin/v1/mandates", R"({"mandate":{"name":"Big"}})", admin));
    auto made = client.request("POST", "/admin/v1/mandates/" + mandate + "/api_keys",
                               R"({"api_key":{"name":"r","role":"admin"}})", admin);
    key = std::string(json::parse(made.body).at("body").at("key").as_string());
    const std::vector<std::pair<std::string, std::string>> as_key{{"x-api-key", key}};
    const auto folder = created_id(client.request("POST", "/api/v1/tags", R"({"tag":{"name":"F"}})", as_key));
    device = created_id(client.request("POST", "/api/v1/devices",
                                       R"({"device":{"name":"busy","tags":[{"id":")" + folder + R"("}]}})", as_key));
    EXPECT_EQ(stop_server(*server), 0);
  }
  seed_readings(dir.path(), *uuid::parse(mandate), *uuid::parse(device), count);

  hold_little_freed_memory_in_children();
  auto server = start_server(dir.path());
  ASSERT_GT(server->port, 0);
  {
    api::http_client client("127.0.0.1", server->port);
    ASSERT_TRUE(eventually([&] { return storage_settled(client); }, std::chrono::minutes(3)));
  }
  const long baseline = resident_kib(server->pid());
  std::vector<long> samples;  // resident size every 32 chunks, in KiB
  std::size_t chunks = 0;
  auto result =
      api::read_stream(server->port, "/api/v1/devices/" + device + "/readings/stream?sort_direction=asc", key, [&] {
        if (++chunks % 32 == 0) samples.push_back(resident_kib(server->pid()));
      });
  samples.push_back(resident_kib(server->pid()));
  EXPECT_EQ(result.status, 200);
  EXPECT_TRUE(result.chunked);
  EXPECT_EQ(result.lines, static_cast<std::size_t>(count));
  EXPECT_EQ(json::parse(result.first_line).at("measured_at"), "2023-11-14T22:13:20.000000Z");
  EXPECT_EQ(json::parse(result.last_line).at("data").at("humidity"), (count - 1) % 100);
  ASSERT_GE(samples.size(), 4u);
  const auto half = samples.begin() + static_cast<std::ptrdiff_t>(samples.size() / 2);
  const long peak_first_half = *std::max_element(samples.begin(), half);
  const long peak = std::max(peak_first_half, *std::max_element(half, samples.end()));
  const std::string figures = "baseline " + std::to_string(baseline) + " KiB, peak of the first half " +
                              std::to_string(peak_first_half) + " KiB, peak " + std::to_string(peak) + " KiB, " +
                              std::to_string(result.bytes) + " bytes streamed";
  // The result is ~320 MB of JSON. A stream bypasses the block cache (storage::cache_use), and
  // compaction has settled before the baseline, so the server holds what one chunk needs: the
  // second half adds at most 16 MiB whatever the build, the whole stream at most 32 MiB (plain
  // builds: the sanitizers' shadow memory and redzones scale with what is allocated). Before the
  // bypass the server grew by the 64 MiB cache during the stream, and by compaction's buffers when
  // the baseline was taken right after opening: 23 MiB in the second half in one CI run.
  EXPECT_LT(peak - peak_first_half, 16 * 1024) << figures;
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
  EXPECT_LT(peak - baseline, 32 * 1024) << figures;
#endif
  std::printf("streamed %zu readings; %s\n", result.lines, figures.c_str());
  EXPECT_EQ(stop_server(*server), 0);
}

}  // namespace fl::testing
