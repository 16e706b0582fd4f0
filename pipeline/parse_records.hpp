#pragma once
// Pure conversions between stored documents and the sandbox: a stored packet becomes the parser's
// input; a parse outcome becomes reading documents and the packet's parse status. No I/O here.
#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "pipeline/profiles.hpp"
#include "sandbox/outcome.hpp"
#include "storage/readings.hpp"

namespace fl::pipeline {

// Packets with skip_parsers or is_meta true are never parsed.
[[nodiscard]] bool wants_parsing(const boost::json::object& packet);

// nullopt when the stored packet is malformed (then it is marked failed, not parsed).
[[nodiscard]] std::optional<sandbox::packet_input> parser_input(const boost::json::object& packet);

struct reading_origin {
  uuid device;
  uuid packet;
  uuid parser;
  micros transceived_at = 0;
  micros inserted_at = 0;  // store time; each reading gets its own, unique, not earlier than this
};

// A reading as the API shows it and storage keeps it, for `r`'s id, packet and times.
[[nodiscard]] boost::json::object reading_document(const storage::new_reading& r, const uuid& device,
                                                   const std::optional<uuid>& parser, boost::json::value location,
                                                   boost::json::value data);

// Whether a parser can call get_last_reading/2, so its device's newest readings must be read and
// sent along. The allow-list makes every call name its function in the source (no apply, no
// variable modules or function names), so a parser whose code never spells it cannot call it.
[[nodiscard]] bool uses_history(std::string_view code);
// Whether the parser may declare preloads/0 (which can ask for meta.device): the device is sent
// with its packets only then, and the runtime keeps it only when preloads/0 names :device.
[[nodiscard]] bool may_preload(std::string_view code);
// The device as a parser's meta.device shows it (parser-contract.md): its stored fields without
// the internal ones, `fields` as {profile_slug: {field: value}} of the mandate's profiles.
[[nodiscard]] boost::json::object parser_device_view(const boost::json::object& device, const profile_set& profiles);

// Reading documents (API shape) for an ok outcome; measured_at falls back to the packet's time.
[[nodiscard]] std::vector<storage::new_reading> readings_of(const sandbox::parse_outcome& outcome,
                                                            const reading_origin& origin);

// The packet's parse fields: `parse_status` (pending, parsed, failed, skipped), `parse_error`
// ({kind, message, logs} or null) and `parse_logs` (the parser's Logger lines of its last parse,
// whatever the outcome). They are part of the packet as the API shows it.
void mark_pending(boost::json::object& packet);
[[nodiscard]] bool is_pending(const boost::json::object& packet);  // parse_status is "pending"
void mark_skipped(boost::json::object& packet, const char* why);
void mark_outcome(boost::json::object& packet, const sandbox::parse_outcome& outcome, std::size_t readings);
void mark_failed(boost::json::object& packet, const char* kind, const std::string& message);

struct profile_merge {
  bool changed = false;
  std::size_t refused = 0;            // field writes left out
  std::vector<std::string> problems;  // why, as "fields.<slug>.<field>: <message>" (the first few)
};

inline constexpr std::size_t max_recorded_refusals = 10;

// Merges profile writes ({profile_slug: {field: value}}) into a device document's profile values,
// checked against the mandate's profiles exactly as the API checks a device write
// (profile_set::check): a refused field is left out (a refused profile, all its fields), the rest
// lands.
[[nodiscard]] profile_merge merge_profile_fields(boost::json::object& device, const boost::json::value& fields,
                                                 const profile_set& profiles, micros now);

// Notes on the packet which profile writes were refused (they stay visible to the mandate).
void mark_profile_refusals(boost::json::object& packet, const profile_merge& merge);

}  // namespace fl::pipeline
