#pragma once
// Profiles: per-mandate sets of typed fields that devices and folders hold values for (`fields` on
// the API, `{profile_slug: {field: value}}`). This file owns the rules: what a profile definition may
// say, and whether a write of values fits the mandate's profiles. The API's device and folder writes
// and the parsers' profile writes (parse_records.hpp) both go through `profile_set::check`.
//
// Stored shape: a profile is a catalog record (`record_kind::profile`) in API shape
// `{id, slug, name, mandate_id, limit_to, fields: [{id, name, display, type, required, min, max,
// format}], inserted_at, updated_at}`. A device's or folder's values live in its own document under
// `profile_values: {profile_id: {data: {field: value}, inserted_at, updated_at}}`, keyed by the
// profile's id, not its slug: a deleted profile's values stay stored but are never shown again (a new
// profile with the same slug starts empty), and a slug may change without moving data.
#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/ids.hpp"
#include "core/time.hpp"
#include "storage/records.hpp"

namespace re2 {
class RE2;
}

namespace fl::pipeline {

inline constexpr std::size_t max_profiles_per_mandate = 100;
inline constexpr std::size_t max_fields_per_profile_definition = 128;
inline constexpr std::size_t max_profile_name_length = 255;
inline constexpr std::size_t max_format_length = 1024;
inline constexpr std::size_t max_profile_value_bytes = 1024;  // a string value, in bytes
inline constexpr std::size_t max_profiles_per_owner = 32;     // profiles one device or folder holds values of
inline constexpr std::string_view profile_values_key = "profile_values";

enum class field_type : std::uint8_t { string, integer, floating, boolean };
enum class profile_target : std::uint8_t { device, tag };

[[nodiscard]] std::optional<field_type> parse_field_type(std::string_view name);
[[nodiscard]] std::string_view field_type_name(field_type t);

struct definition_problem {
  std::string field;  // e.g. "fields[2].format"
  std::string message;
};

// Checks a profile's `fields` list and returns it normalised ({id, name, display, type, required,
// min, max, format}, ids kept when given as uuids, new ones otherwise); nullopt with `problems` when
// anything is wrong.
[[nodiscard]] std::optional<boost::json::array> check_profile_fields(const boost::json::value& fields,
                                                                     std::vector<definition_problem>& problems);
// `limit_to`: "device", "tag" or null (both). nullopt when invalid.
[[nodiscard]] std::optional<boost::json::value> check_limit_to(const boost::json::value& limit_to);

struct value_problem {
  enum class kind : std::uint8_t {
    profile,   // the whole profile's write is refused (unknown slug, wrong target, not an object)
    required,  // a required field is missing on the first write: the whole profile's write is refused
    value,     // this one field's value is refused
  };
  kind what = kind::value;
  std::string slug;
  std::string field;  // empty for kind::profile
  std::string message;
  // "fields.<slug>.<field>" (or "fields.<slug>", "fields"): the key of the API's 422 errors.
  [[nodiscard]] std::string path() const;
};

struct compiled_field {
  std::string name;
  field_type type = field_type::string;
  bool required = false;
  std::optional<double> min, max;
  std::shared_ptr<const re2::RE2> format;  // strings only; matches the whole value
  std::string format_text;
};

struct compiled_profile {
  uuid id;
  std::string slug;
  std::optional<profile_target> limit_to;  // nullopt: devices and folders
  std::vector<compiled_field> fields;
  boost::json::object doc;  // the record as stored (API shape)
  [[nodiscard]] const compiled_field* field(std::string_view name) const;
};

// A mandate's profiles, compiled once (regexes included) for any number of checks.
class profile_set {
 public:
  [[nodiscard]] static profile_set from_documents(std::vector<boost::json::object> docs);
  [[nodiscard]] static storage::result<profile_set> load(const storage::records& records, const uuid& mandate);

  [[nodiscard]] const compiled_profile* by_slug(std::string_view slug) const;
  [[nodiscard]] const compiled_profile* by_id(std::string_view id) const;
  [[nodiscard]] bool empty() const { return profiles_.empty(); }

  // Problems of writing `writes` ({slug: {field: value}}) onto a resource of kind `target` whose
  // stored document is `owner` (its `profile_values` say which profiles it already has data for:
  // required fields must come with the first write of a profile). Null clears a field (not a
  // required one). Empty when everything fits.
  [[nodiscard]] std::vector<value_problem> check(const boost::json::value& writes, profile_target target,
                                                 const boost::json::object& owner) const;

  // Writes the values of `writes` into `owner`'s profile_values, leaving out what `problems` (from
  // check) refused; the touched profiles' updated_at (and inserted_at when new) become `now`.
  // Returns how many field writes landed.
  std::size_t apply(const boost::json::value& writes, const std::vector<value_problem>& problems,
                    boost::json::object& owner, micros now) const;

  // `fields` ({slug: {field: value}}) of a stored document, for the profiles that exist and fields
  // they still define; with `profile_data`, also the spec's entries
  // ({profile_id, <owner_key>, data, profile, inserted_at, updated_at}).
  struct rendered {
    boost::json::object fields;
    boost::json::array profile_data;
  };
  [[nodiscard]] rendered render(const boost::json::object& owner, std::string_view owner_key,
                                bool with_profile_data) const;

 private:
  std::vector<compiled_profile> profiles_;
};

}  // namespace fl::pipeline
