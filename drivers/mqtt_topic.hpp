#pragma once
// MQTT 3.1.1 topic names and subscription filters (spec 4.7): checked before anything reaches the
// library or the broker, so a bad topic is a clear error value instead of a dropped connection.
#include <cstddef>
#include <string_view>

namespace fl::drivers {

enum class topic_error {
  none,
  empty,
  too_long,            // longer than the configured bound (the protocol's own limit is 65,535 bytes)
  contains_nul,        // U+0000 is forbidden by the spec
  control_character,   // U+0001..U+001F, U+007F..U+009F: the spec says SHOULD NOT; libmosquitto refuses them
  not_utf8,            // malformed, overlong, surrogate or beyond U+10FFFF
  wildcard_in_topic,   // '+' or '#' in a topic that is published to
  misplaced_wildcard,  // '#' not last or not a whole level, '+' not a whole level
};

[[nodiscard]] std::string_view to_string(topic_error e);

inline constexpr std::size_t mqtt_max_topic_bytes = 65'535;

// A topic a message is published to: no wildcards.
[[nodiscard]] topic_error check_publish_topic(std::string_view topic, std::size_t max_bytes = mqtt_max_topic_bytes);
// A subscription filter: '+' as a whole level, '#' as the whole last level.
[[nodiscard]] topic_error check_subscription_filter(std::string_view filter,
                                                    std::size_t max_bytes = mqtt_max_topic_bytes);
// Whether `topic` (a valid publish topic) matches `filter` (a valid filter). Topics starting with '$'
// match no filter starting with a wildcard (spec 4.7.2).
[[nodiscard]] bool topic_matches(std::string_view filter, std::string_view topic);

}  // namespace fl::drivers
