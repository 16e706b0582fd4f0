// A stream to a client that stops reading: once the kernel's buffers are full the server's write
// waits under the write timeout, and the connection is cut when it runs out, not held. (Writes that
// the socket takes at once skip the timer; this is what still guards the ones it does not take.)
#include <gtest/gtest.h>

#include <boost/json.hpp>
#include <vector>

#include "pipeline/parse_records.hpp"
#include "storage/readings.hpp"
#include "support/eventually.hpp"
#include "support/raw_connection.hpp"
#include "support/socket_fixture.hpp"

namespace fl::testing {

using namespace std::chrono_literals;

namespace {

class stalled_stream : public socket_fixture {
 protected:
  [[nodiscard]] api::server_limits limits() const override {
    auto l = socket_fixture::limits();
    l.write_timeout = 1s;
    l.max_connections_per_address = 1;  // the stalled connection holds 127.0.0.2's only slot
    return l;
  }

  // ~12 MB of NDJSON: more than the kernel buffers of both ends hold.
  void seed_readings(const std::string& mandate, const std::string& device, int count) {
    storage::readings readings(*db_);
    const micros start = 1'700'000'000'000'000;
    auto batch = db_->batch();
    for (int i = 0; i < count; ++i) {
      storage::new_reading r{uuid::random(), uuid::random(), start + i * 1'000'000LL, start, {}};
      r.doc = pipeline::reading_document(r, *uuid::parse(device), std::nullopt, nullptr,
                                         boost::json::object{{"padding", std::string(300, 'x')}, {"n", i}});
      readings.put(batch, *uuid::parse(mandate), *uuid::parse(device), 0, r);
    }
    ASSERT_TRUE(db_->write(batch, storage::durability::buffered));
  }

  // The status a request from 127.0.0.2 gets: 200 when its one slot is free, 503 while it is held.
  int another_request() {
    raw_connection probe(server_->port(), "127.0.0.2");
    if (!probe.send("GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")) return 0;
    return probe.read_response(2s).status;
  }
};

}  // namespace

TEST_F(stalled_stream, a_client_that_stops_reading_a_stream_is_cut_at_the_write_timeout) {
  const auto mandate = make_mandate("M");
  const auto key = make_key(mandate, "admin");
  const auto device = make_device(key, "big", make_folder(key, "F"));
  seed_readings(mandate, device, 30'000);

  raw_connection stalled(server_->port(), "127.0.0.2", 4096);
  ASSERT_TRUE(stalled.send("GET /api/v1/devices/" + device +
                           "/readings/stream HTTP/1.1\r\nHost: x\r\nx-api-key: " + key + "\r\n\r\n"));
  // Never read: the server fills both buffers, then waits, then gives up and frees the slot. (The
  // listener admits in order, so the first probe finds the slot held.)
  std::vector<int> answers;
  EXPECT_TRUE(eventually(
      [&] {
        answers.push_back(another_request());
        return answers.back() == 200;
      },
      20s));
  ASSERT_FALSE(answers.empty());
  EXPECT_EQ(answers.front(), 503) << "the stalled stream never held its slot";
}

}  // namespace fl::testing
