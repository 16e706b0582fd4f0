// Packets become readings off the request path: through the real sandbox, stored atomically,
// failures kept and visible, resumed after a restart.
#include "pipeline/pipeline_fixture.hpp"

namespace fl::testing {

class parsing : public pipeline_fixture {
 protected:
  // The `v` of each of the device's readings, oldest first.
  std::vector<std::int64_t> reading_values() const {
    std::vector<std::int64_t> out;
    for (const auto& r : readings()) out.push_back(r.at("data").at("v").as_int64());
    return out;
  }
  // A PUT that moves packet `id` to another transceived_at, with `key`.
  reply move_packet(const std::string& id, const std::string& at, const std::string& key) const {
    return call("PUT", "/api/v1/devices/" + device_ + "/packets/" + id, key,
                json::object{{"packet", json::object{{"transceived_at", at}}}});
  }
  // Offers a packet's queue entry to the parse service, as a stale copy of the queue would.
  void offer(const std::string& packet, const std::string& transceived_at) const {
    app_->parsing.queued(
        {*uuid::parse(mandate_), *uuid::parse(device_), *parse_timestamp(transceived_at), *uuid::parse(packet)},
        now_micros());
  }
};

TEST_F(parsing, packets_become_readings_in_transceived_order_with_history) {
  make_status_profile(100);
  auto first = send("01", "2024-05-01T10:00:00Z");
  ASSERT_EQ(first.status, 200) << first.text;
  EXPECT_EQ(first.data().at("parse_status"), "pending");  // answered before parsing
  auto third = send("0701", "2024-05-01T10:02:00Z");
  auto second = send("02", "2024-05-01T10:01:00Z");
  parse_all();

  auto list = readings("sort_direction=asc");
  ASSERT_EQ(list.size(), 3u);
  // measured_at: from the parser when it says so, else the packet's time.
  EXPECT_EQ(list[0].at("measured_at"), "2024-01-01T00:00:00.000000Z");
  EXPECT_EQ(list[0].at("packet_id"), third.id());
  EXPECT_EQ(list[0].at("location").at("coordinates").as_array()[0], 13.4);
  EXPECT_EQ(list[1].at("measured_at"), "2024-05-01T10:00:00.000000Z");
  EXPECT_EQ(list[1].at("data").at("v"), 1);
  EXPECT_TRUE(list[1].at("data").at("previous").is_null());
  // Parsed in transceived_at order: packet 2 saw packet 1's reading, not packet 3's.
  EXPECT_EQ(list[2].at("data").at("previous"), 1);
  EXPECT_EQ(list[2].at("parser_id"), parser_);
  EXPECT_EQ(list[2].at("device_id"), device_);
  EXPECT_TRUE(list[2].at("location").is_null());
  for (const auto& r : list) EXPECT_TRUE(parse_timestamp(r.at("inserted_at").as_string()).has_value());

  EXPECT_EQ(packet(second.id()).at("parse_status"), "parsed");
  EXPECT_EQ(packet(second.id()).at("readings_count"), 1);
  // Profile writes land in the device's fields.
  auto device = call("GET", "/api/v1/devices/" + device_, key_);
  EXPECT_EQ(device.data().at("fields").at("status").at("last_v"), 7) << device.text;
}

// The parser writes status.last_v = 7 and = 3; the profile allows 0..5: 7 is refused and noted on
// its packet, 3 lands.
TEST_F(parsing, profile_writes_that_do_not_fit_the_profile_are_refused_and_noted) {
  make_status_profile(5);
  auto refused = send("0701", "2024-05-01T10:00:00Z");
  parse_all();
  const auto first = packet(refused.id());
  EXPECT_EQ(first.at("parse_status"), "parsed");  // the reading is kept either way
  ASSERT_TRUE(first.contains("parse_warnings")) << first;
  EXPECT_EQ(first.at("parse_warnings").as_array()[1], "fields.status.last_v: must be an integer between 0 and 5");
  auto device = call("GET", "/api/v1/devices/" + device_, key_);
  EXPECT_EQ(device.data().at("fields"), json::object{}) << device.text;

  auto landed = send("0301", "2024-05-01T10:01:00Z");
  parse_all();
  EXPECT_FALSE(packet(landed.id()).contains("parse_warnings"));
  device = call("GET", "/api/v1/devices/" + device_ + "?with_profile=1", key_);
  EXPECT_EQ(device.data().at("fields").at("status").at("last_v"), 3) << device.text;
  EXPECT_EQ(device.data().at("profile_data").as_array().size(), 1u);
}

TEST_F(parsing, profile_writes_without_a_profile_are_refused) {
  auto sent = send("0701", "2024-05-01T10:00:00Z");
  parse_all();
  const auto p = packet(sent.id());
  ASSERT_TRUE(p.contains("parse_warnings")) << p;
  EXPECT_EQ(p.at("parse_warnings").as_array()[1], "fields.status: names no profile of this mandate");
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_, key_).data().at("fields"), json::object{});
}

TEST_F(parsing, failures_keep_the_packet_and_record_kind_message_and_logs) {
  auto bad = send("FF", "2024-05-01T10:00:00Z");
  auto good = send("05", "2024-05-01T10:01:00Z");
  parse_all();
  const auto failed = packet(bad.id());
  EXPECT_EQ(failed.at("parse_status"), "failed");
  const auto& error = failed.at("parse_error").as_object();
  EXPECT_EQ(error.at("kind"), "parse_error");
  EXPECT_NE(std::string(error.at("message").as_string()).find("broken frame"), std::string::npos) << error;
  ASSERT_FALSE(error.at("logs").as_array().empty());
  EXPECT_NE(std::string(error.at("logs").as_array()[0].as_string()).find("frame 0xFF is broken"), std::string::npos);
  EXPECT_EQ(packet(good.id()).at("parse_status"), "parsed");
  EXPECT_EQ(readings().size(), 1u);
}

TEST_F(parsing, log_lines_are_kept_on_the_packet_also_when_it_parses_fine_to_no_reading) {
  auto quiet = send("DD", "2024-05-01T10:00:00Z");
  auto plain = send("05", "2024-05-01T10:01:00Z");
  const auto pending = packet(quiet.id());
  EXPECT_EQ(pending.at("parse_logs"), json::array{});  // the field is there before parsing too
  parse_all();
  const auto parsed = packet(quiet.id());
  EXPECT_EQ(parsed.at("parse_status"), "parsed");
  EXPECT_EQ(parsed.at("readings_count"), 0);
  ASSERT_EQ(parsed.at("parse_logs").as_array().size(), 1u) << parsed;
  EXPECT_NE(std::string(parsed.at("parse_logs").as_array()[0].as_string()).find("frame 0xDD carries no reading"),
            std::string::npos);
  EXPECT_EQ(packet(plain.id()).at("parse_logs"), json::array{});
  // And in lists.
  auto listed = call("GET", "/api/v1/devices/" + device_ + "/packets?sort_direction=asc", key_);
  EXPECT_EQ(listed.data().as_array()[0].at("parse_logs"), parsed.at("parse_logs"));
}

TEST_F(parsing, the_mandate_sets_the_parse_deadline) {
  auto slow = send("EE", "2024-05-01T10:00:00Z");
  parse_all();
  EXPECT_EQ(packet(slow.id()).at("parse_error").at("kind"), "timeout");  // the default is 100 ms
  auto edited = call("PATCH", "/admin/v1/mandates/" + mandate_, superadmin_,
                     json::object{{"mandate", json::object{{"parse_timeout_ms", 20000}}}});
  ASSERT_EQ(edited.status, 200) << edited.text;
  EXPECT_EQ(edited.data().at("parse_timeout_ms"), 20000);
  auto patient = send("EE", "2024-05-01T10:01:00Z");
  ASSERT_TRUE(app_->parsing.wait_idle(std::chrono::seconds(60)));
  EXPECT_EQ(packet(patient.id()).at("parse_status"), "parsed");
  EXPECT_EQ(call("PATCH", "/admin/v1/mandates/" + mandate_, superadmin_,
                 json::object{{"mandate", json::object{{"parse_timeout_ms", 0}}}})
                .status,
            422);
}

TEST_F(parsing, skipped_packets_and_devices_without_parser_make_no_readings) {
  auto skipped = send("01", "2024-05-01T10:00:00Z", {{"skip_parsers", true}});
  auto meta = send("02", "2024-05-01T10:01:00Z", {{"is_meta", true}});
  const auto plain = make_device(key_, "plain", folder_);
  auto unparsed = call("POST", "/api/v1/devices/" + plain + "/packets", key_,
                       json::object{{"packet", json::object{{"payload_encoding", "binary"}, {"payload", "01"}}}});
  parse_all();
  EXPECT_EQ(packet(skipped.id()).at("parse_status"), "skipped");
  EXPECT_EQ(packet(meta.id()).at("parse_status"), "skipped");
  EXPECT_EQ(unparsed.data().at("parse_status"), "skipped");
  EXPECT_TRUE(readings().empty());
}

TEST_F(parsing, a_restart_resumes_packets_stored_but_not_parsed) {
  send("01", "2024-05-01T10:00:00Z");
  send("02", "2024-05-01T10:01:00Z");
  open();  // the server stops before parsing anything and starts again on the same data
  parse_all();
  EXPECT_EQ(readings().size(), 2u);
}

// A created packet's document is handed to its parse in memory (pipeline/packet_handover.hpp): an
// update before the parse must be what is parsed, and a deleted packet must not be parsed at all.
TEST_F(parsing, a_packet_updated_before_its_parse_is_parsed_as_updated) {
  auto sent = send("05", "2024-05-01T10:00:00Z");
  ASSERT_EQ(sent.status, 200) << sent.text;
  auto updated = call("PUT", "/api/v1/devices/" + device_ + "/packets/" + sent.id(), key_,
                      json::object{{"packet", json::object{{"payload_encoding", "binary"}, {"payload", "07"}}}});
  ASSERT_EQ(updated.status, 200) << updated.text;
  parse_all();
  EXPECT_EQ(reading_values(), std::vector<std::int64_t>{7});
}

TEST_F(parsing, a_packet_deleted_before_its_parse_makes_no_reading) {
  auto gone = send("05", "2024-05-01T10:00:00Z");
  send("06", "2024-05-01T10:01:00Z");
  EXPECT_EQ(call("DELETE", "/api/v1/devices/" + device_ + "/packets/" + gone.id(), key_).status, 200);
  parse_all();
  EXPECT_EQ(reading_values(), std::vector<std::int64_t>{6});
}

// The queue's working copy offering a packet that was parsed already (a copy loaded from the store
// while a commit dequeued it): the commit sees the queue entry gone and writes nothing. The packet
// is untouched since it was loaded, so only its parse status tells that it is not queued any more.
TEST_F(parsing, a_packet_offered_again_after_its_parse_makes_no_second_reading) {
  auto sent = send("05", "2024-05-01T10:00:00Z");
  ASSERT_EQ(sent.status, 200) << sent.text;
  parse_all();
  ASSERT_EQ(readings().size(), 1u);
  const auto parsed = packet(sent.id());
  ASSERT_EQ(parsed.at("parse_status"), "parsed");

  offer(sent.id(), "2024-05-01T10:00:00Z");
  ASSERT_TRUE(app_->parsing.wait_idle(std::chrono::seconds(60)));
  EXPECT_EQ(readings().size(), 1u);
  EXPECT_EQ(packet(sent.id()), parsed);
}

// A parse that took a packet's queue entry just before the packet was deleted and its id given to a
// new packet at another time: loading by id finds the new packet, pending and untouched. The old
// entry must not parse it (the new one's own entry does, once): one reading.
TEST_F(parsing, an_entry_of_a_deleted_packet_does_not_parse_the_new_packet_with_its_id) {
  const std::string id = "0190a9c4-7d2e-7b3a-9c1d-5e6f7a8b9c0d";
  auto first = send("05", "2024-05-01T10:00:00Z", json::object{{"id", id}});
  ASSERT_EQ(first.status, 200) << first.text;
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + device_ + "/packets/" + id, key_).status, 200);
  auto second = send("06", "2024-05-01T10:05:00Z", json::object{{"id", id}});
  ASSERT_EQ(second.status, 200) << second.text;

  offer(id, "2024-05-01T10:00:00Z");
  parse_all();
  EXPECT_EQ(reading_values(), std::vector<std::int64_t>{6});
  EXPECT_EQ(packet(id).at("parse_status"), "parsed");
}

// An update that moves a waiting packet to another time moves its queue entry with it: a stale
// entry of a deleted packet with the same id at the new place (found by an outside review) must
// not parse it a second time beside its own entry.
TEST_F(parsing, a_stale_entry_at_the_place_a_pending_packet_was_moved_to_does_not_parse_it_twice) {
  const std::string id = "0190a9c4-7d2e-7b3a-9c1d-5e6f7a8b9c0e";
  ASSERT_EQ(send("05", "2024-05-01T10:00:00Z", json::object{{"id", id}}).status, 200);
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + device_ + "/packets/" + id, key_).status, 200);
  ASSERT_EQ(send("06", "2024-05-01T10:05:00Z", json::object{{"id", id}}).status, 200);
  auto moved = move_packet(id, "2024-05-01T10:00:00Z", key_);
  ASSERT_EQ(moved.status, 200) << moved.text;
  ASSERT_EQ(moved.data().at("parse_status"), "pending");

  offer(id, "2024-05-01T10:00:00Z");
  parse_all();
  EXPECT_EQ(reading_values(), std::vector<std::int64_t>{6});
}

// Found by an outside review (eleventh session): a packet updated between its parse's load and
// commit was given the outcome of its old payload, and its new payload was never parsed.
TEST_F(parsing, a_packet_updated_while_its_parse_is_in_flight_is_parsed_again_as_it_is_now) {
  auto sent = send("05", "2024-05-01T10:00:00Z");
  ASSERT_EQ(sent.status, 200) << sent.text;
  {
    auto writer = records_->writer();  // the parse's commit waits for it, its outcome in hand
    app_->parsing.start();
    wait_for_sandbox_outcomes(1);
    update_payload_in_place(sent.id(), "06");
  }
  parse_all();
  EXPECT_EQ(reading_values(), std::vector<std::int64_t>{6});
  const auto parsed = packet(sent.id());
  EXPECT_EQ(parsed.at("payload"), "06");
  EXPECT_EQ(parsed.at("parse_status"), "parsed");
  EXPECT_EQ(parsed.at("readings_count"), 1);
}

// Moved, then deleted: no entry is left behind at the old time to parse a later packet that
// takes the id (it used to be, and that packet got two readings).
TEST_F(parsing, a_waiting_packet_moved_then_deleted_leaves_no_entry_behind) {
  const std::string id = "0190a9c4-7d2e-7b3a-9c1d-5e6f7a8b9c0f";
  ASSERT_EQ(send("05", "2024-05-01T10:00:00Z", json::object{{"id", id}}).status, 200);
  auto moved = move_packet(id, "2024-05-01T10:05:00Z", key_);
  ASSERT_EQ(moved.status, 200) << moved.text;
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + device_ + "/packets/" + id, key_).status, 200);
  ASSERT_EQ(send("07", "2024-05-01T10:10:00Z", json::object{{"id", id}}).status, 200);
  open();  // a restart: what is queued comes from the store
  parse_all();
  EXPECT_EQ(reading_values(), std::vector<std::int64_t>{7});
}

// Hostile: another mandate's key tries to move this mandate's waiting packet (and so its queue
// entry) in time, naming this mandate's device and packet ids: refused, and the packet is parsed
// once where it was.
TEST_F(parsing, another_mandates_key_cannot_move_a_waiting_packet_or_its_queue_entry) {
  auto mine = send("05", "2024-05-01T10:00:00Z");
  ASSERT_EQ(mine.status, 200) << mine.text;
  const std::string other_key = make_key(make_mandate("Other", json::array{"api_packets_writeable"}), "admin");
  auto moved = move_packet(mine.id(), "2024-05-01T11:00:00Z", other_key);
  EXPECT_EQ(moved.status, 404) << moved.text;
  parse_all();
  EXPECT_EQ(reading_values(), std::vector<std::int64_t>{5});
  EXPECT_EQ(packet(mine.id()).at("transceived_at"), "2024-05-01T10:00:00.000000Z");
}

// Hostile: another mandate's key posts a packet with the id of this mandate's packet while it waits
// for its parse. The handover is per mandate: each parse reads its own mandate's payload.
TEST_F(parsing, another_mandate_reusing_a_waiting_packets_id_does_not_take_its_payload) {
  auto mine = send("05", "2024-05-01T10:00:00Z");
  ASSERT_EQ(mine.status, 200) << mine.text;
  const std::string other = make_mandate("Other", json::array{"api_packets_writeable"});
  const std::string other_key = make_key(other, "admin");
  auto parser = call("POST", "/admin/v1/mandates/" + other + "/parsers", superadmin_,
                     json::object{{"parser", json::object{{"name", "p"}, {"language", "ex"}, {"code", parser_code}}}});
  ASSERT_EQ(parser.status, 201) << parser.text;
  const std::string other_device = make_device(other_key, "meter", make_folder(other_key, "F"));
  ASSERT_EQ(call("PATCH", "/api/v1/devices/" + other_device, other_key,
                 json::object{{"device", json::object{{"parser_id", parser.id()}}}})
                .status,
            200);
  auto theirs = call("POST", "/api/v1/devices/" + other_device + "/packets", other_key,
                     json::object{{"packet", json::object{{"id", mine.id()},
                                                          {"payload_encoding", "binary"},
                                                          {"payload", "09"},
                                                          {"transceived_at", "2024-05-01T10:00:00Z"}}}});
  ASSERT_EQ(theirs.status, 200) << theirs.text;
  parse_all();
  EXPECT_EQ(reading_values(), std::vector<std::int64_t>{5});
  auto their_readings = call("GET", "/api/v1/devices/" + other_device + "/readings", other_key);
  ASSERT_EQ(their_readings.status, 200) << their_readings.text;
  ASSERT_EQ(their_readings.data().as_array().size(), 1u);
  EXPECT_EQ(their_readings.data().as_array()[0].at("data").at("v"), 9);
}

TEST_F(parsing, deleting_a_packet_with_remove_readings_removes_its_readings) {
  auto kept = send("01", "2024-05-01T10:00:00Z");
  auto dropped = send("02", "2024-05-01T10:01:00Z");
  parse_all();
  ASSERT_EQ(readings().size(), 2u);
  const std::string base = "/api/v1/devices/" + device_ + "/packets/";
  EXPECT_EQ(call("DELETE", base + dropped.id() + "?remove_readings=true", key_).status, 200);
  auto left = readings();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].at("packet_id"), kept.id());
  EXPECT_EQ(call("DELETE", base + kept.id(), key_).status, 200);
  EXPECT_EQ(readings().size(), 1u);  // without remove_readings the readings stay
}

// The newest readings of a device read before are served from memory (storage/head_cache.hpp):
// removing a packet's readings must reach that copy too, and so must the readings parsed after it.
TEST_F(parsing, the_newest_readings_page_forgets_removed_readings_and_shows_new_ones) {
  auto kept = send("01", "2024-05-01T10:00:00Z");
  auto dropped = send("02", "2024-05-01T10:01:00Z");
  parse_all();
  const auto newest_first = [&] { return readings("sort_direction=desc"); };
  ASSERT_EQ(newest_first().size(), 2u);  // read once: now in memory
  const std::string base = "/api/v1/devices/" + device_ + "/packets/";
  ASSERT_EQ(call("DELETE", base + dropped.id() + "?remove_readings=true", key_).status, 200);
  auto left = newest_first();
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0].at("packet_id"), kept.id());
  auto later = send("03", "2024-05-01T10:02:00Z");
  parse_all();
  left = newest_first();
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].at("packet_id"), later.id());
}

// parser-contract.md: a parser whose preloads/0 asks for the device finds it in meta.device, with
// its location's coordinates as {lon, lat} and its profile values as {slug => {field => value}}.
TEST_F(parsing, a_parser_that_preloads_the_device_sees_its_location_and_profile_values) {
  make_status_profile(100);
  const std::string code = R"(defmodule Parser do
  use Platform.Parsing.Behaviour
  def preloads, do: [device: []]
  def parse(_payload, meta) do
    {lon, lat} = meta.device.location.coordinates
    %{name: meta.device.name, lon: lon, lat: lat, last_v: get(meta, [:device, :fields, "status", "last_v"])}
  end
end
)";
  auto parser = call("POST", "/admin/v1/mandates/" + mandate_ + "/parsers", superadmin_,
                     json::object{{"parser", json::object{{"name", "pre"}, {"language", "ex"}, {"code", code}}}});
  ASSERT_EQ(parser.status, 201) << parser.text;
  auto edited = call(
      "PATCH", "/api/v1/devices/" + device_, key_,
      json::object{{"device", json::object{{"parser_id", parser.id()},
                                           {"location", json::object{{"type", "Point"}, {"coordinates", {9.5, 47.1}}}},
                                           {"fields", json::object{{"status", {{"last_v", 42}}}}}}}});
  ASSERT_EQ(edited.status, 200) << edited.text;
  send("01", "2024-05-01T10:00:00Z");
  parse_all();
  auto list = readings();
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].at("data"), json::parse(R"({"name":"meter","lon":9.5,"lat":47.1,"last_v":42})")) << list[0];
}

}  // namespace fl::testing
