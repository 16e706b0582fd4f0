// A stream of a million readings from the real server: every line arrives, chunked, and the
// server's memory does not grow with the result.
#include <gtest/gtest.h>

#include <boost/json.hpp>

#include "api/http/client.hpp"
#include "api/http/ndjson_reader.hpp"
#include "core/json_out.hpp"
#include "pipeline/parse_records.hpp"
#include "storage/readings.hpp"
#include "storage/records.hpp"
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

  auto server = start_server(dir.path());
  ASSERT_GT(server->port, 0);
  const long baseline = resident_kib(server->pid());
  long peak = baseline;
  std::size_t chunks = 0;
  auto result =
      api::read_stream(server->port, "/api/v1/devices/" + device + "/readings/stream?sort_direction=asc", key, [&] {
        if (++chunks % 32 == 0) peak = std::max(peak, resident_kib(server->pid()));
      });
  peak = std::max(peak, resident_kib(server->pid()));
  EXPECT_EQ(result.status, 200);
  EXPECT_TRUE(result.chunked);
  EXPECT_EQ(result.lines, static_cast<std::size_t>(count));
  EXPECT_EQ(json::parse(result.first_line).at("measured_at"), "2023-11-14T22:13:20.000000Z");
  EXPECT_EQ(json::parse(result.last_line).at("data").at("humidity"), (count - 1) % 100);
  // The result is ~270 MB of JSON. The server may grow by its 64 MiB block cache and memtables
  // as it reads, but not by the result: 128 MiB is the bound.
  EXPECT_LT(peak - baseline, 128 * 1024) << "baseline " << baseline << " KiB, peak " << peak << " KiB, " << result.bytes
                                         << " bytes streamed";
  std::printf("streamed %zu readings (%zu bytes); server RSS %ld KiB -> peak %ld KiB\n", result.lines, result.bytes,
              baseline, peak);
  EXPECT_EQ(stop_server(*server), 0);
}

}  // namespace fl::testing
