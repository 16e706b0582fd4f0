#include "pipeline/profiles.hpp"

#include <re2/re2.h>

#include <array>
#include <boost/json.hpp>
#include <cmath>
#include <set>

#include "core/json_out.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::pipeline {

namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 4> type_names = {"string", "integer", "float", "boolean"};
constexpr std::int64_t max_program_memory = 1 << 20;  // RE2's own bound on a compiled pattern

std::shared_ptr<const re2::RE2> compile_format(std::string_view pattern) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(max_program_memory);
  return std::make_shared<const re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
}

std::optional<double> number_of(const json::value* v) {
  if (!v || !v->is_number()) return std::nullopt;
  return v->to_number<double>();
}

std::size_t utf8_length(std::string_view s) {
  std::size_t n = 0;
  for (char c : s)
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  return n;
}

std::string number_text(double d) {
  return fl::to_json(json::value(d == std::floor(d) && std::fabs(d) < 1e15 ? json::value(static_cast<std::int64_t>(d))
                                                                           : json::value(d)));
}

// "between 0 and 100", "of at least 0", "of at most 100" or "".
std::string bounds_text(const std::optional<double>& min, const std::optional<double>& max) {
  if (min && max) return " between " + number_text(*min) + " and " + number_text(*max);
  if (min) return " of at least " + number_text(*min);
  if (max) return " of at most " + number_text(*max);
  return "";
}

bool within(double v, const compiled_field& f) {
  return (!f.min || v >= *f.min) && (!f.max || v <= *f.max);
}

// Why `value` does not fit `f`, or nullopt.
std::optional<std::string> value_problem_of(const compiled_field& f, const json::value& value) {
  switch (f.type) {
    case field_type::string: {
      std::string length;
      if (f.min && f.max) {
        length = " of " + number_text(*f.min) + " to " + number_text(*f.max) + " characters";
      } else if (f.min || f.max) {
        length = bounds_text(f.min, f.max) + " characters";
      }
      if (!value.is_string()) return "must be a string" + length;
      const auto& s = value.get_string();
      if (s.size() > max_profile_value_bytes)
        return "must be at most " + std::to_string(max_profile_value_bytes) + " bytes long";
      if (!within(static_cast<double>(utf8_length(s)), f)) return "must be a string" + length;
      if (f.format && !re2::RE2::FullMatch(re2::StringPiece(s.data(), s.size()), *f.format))
        return "must match the format " + f.format_text;
      return std::nullopt;
    }
    case field_type::integer: {
      const bool integral = value.is_int64() || value.is_uint64();
      if (!integral || !within(value.to_number<double>(), f)) return "must be an integer" + bounds_text(f.min, f.max);
      return std::nullopt;
    }
    case field_type::floating:
      if (!value.is_number() || !within(value.to_number<double>(), f))
        return "must be a number" + bounds_text(f.min, f.max);
      return std::nullopt;
    case field_type::boolean:
      if (!value.is_bool()) return "must be true or false";
      return std::nullopt;
  }
  return "has an unknown type";
}

}  // namespace

std::optional<field_type> parse_field_type(std::string_view name) {
  for (std::size_t i = 0; i < type_names.size(); ++i)
    if (type_names[i] == name) return static_cast<field_type>(i);
  return std::nullopt;
}

std::string_view field_type_name(field_type t) {
  return type_names.at(static_cast<std::size_t>(t));
}

std::optional<json::value> check_limit_to(const json::value& limit_to) {
  if (limit_to.is_null()) return json::value(nullptr);
  if (limit_to.is_string() && (limit_to.get_string() == "device" || limit_to.get_string() == "tag")) return limit_to;
  return std::nullopt;
}

std::optional<json::array> check_profile_fields(const json::value& fields, std::vector<definition_problem>& problems) {
  const std::size_t problems_before = problems.size();
  if (!fields.is_array()) {
    problems.push_back({"fields", "must be a list of fields"});
    return std::nullopt;
  }
  if (fields.get_array().size() > max_fields_per_profile_definition) {
    problems.push_back(
        {"fields", "a profile has at most " + std::to_string(max_fields_per_profile_definition) + " fields"});
    return std::nullopt;
  }
  json::array out;
  std::set<std::string, std::less<>> names;
  std::set<uuid> ids;
  std::size_t index = 0;
  for (const auto& entry : fields.get_array()) {
    const std::string at = "fields[" + std::to_string(index++) + "]";
    const auto* in = entry.if_object();
    if (!in) {
      problems.push_back({at, "must be an object"});
      continue;
    }
    auto fail = [&](std::string_view key, std::string message) {
      problems.push_back({at + "." + std::string(key), std::move(message)});
    };
    json::object field;
    std::optional<uuid> id;
    if (const auto* v = in->if_contains("id"); v && v->is_string()) id = uuid::parse(v->get_string());
    if (!id || !ids.insert(*id).second) id = uuid::random();  // a repeated id gets a new one
    field["id"] = id->str();

    const auto* name = in->if_contains("name");
    if (!name || !name->is_string() || name->get_string().empty() ||
        name->get_string().size() > max_profile_name_length) {
      fail("name", "is required: a string of 1 to " + std::to_string(max_profile_name_length) + " characters");
    } else if (!names.emplace(name->get_string()).second) {
      fail("name", "is used by another field of this profile");
    }
    field["name"] = name && name->is_string() ? *name : json::value("");

    const auto* display = in->if_contains("display");
    if (display && !display->is_null() &&
        (!display->is_string() || display->get_string().size() > max_profile_name_length)) {
      fail("display", "must be a string of at most " + std::to_string(max_profile_name_length) + " characters");
    }
    field["display"] = display && display->is_string() ? *display : field["name"];

    const auto* type_value = in->if_contains("type");
    std::optional<field_type> type =
        type_value && type_value->is_string() ? parse_field_type(type_value->get_string()) : std::nullopt;
    if (!type) {
      fail("type", "must be one of string, integer, float, boolean");
      type = field_type::string;
    }
    field["type"] = field_type_name(*type);

    const auto* required = in->if_contains("required");
    if (required && !required->is_null() && !required->is_bool()) fail("required", "must be true or false");
    field["required"] = required && required->is_bool() && required->get_bool();

    std::optional<double> bound[2];
    std::size_t b = 0;
    for (const char* key : {"min", "max"}) {
      const auto* v = in->if_contains(key);
      field[key] = nullptr;
      if (!v || v->is_null()) {
        ++b;
        continue;
      }
      if (*type == field_type::boolean) {
        fail(key, "must be null for boolean fields");
      } else if (!v->is_number()) {
        fail(key, "must be a number or null");
      } else if ((*type == field_type::integer || *type == field_type::string) && !v->is_int64() && !v->is_uint64()) {
        fail(key, *type == field_type::string ? "must be an integer (a length in characters) or null"
                                              : "must be an integer or null");
      } else if (*type == field_type::string && v->to_number<double>() < 0) {
        fail(key, "must not be negative (a length in characters)");
      } else {
        bound[b] = number_of(v);
        field[key] = *v;
      }
      ++b;
    }
    if (bound[0] && bound[1] && *bound[0] > *bound[1]) fail("min", "must not be greater than max");

    const auto* format = in->if_contains("format");
    field["format"] = nullptr;
    if (format && !format->is_null()) {
      if (*type != field_type::string) {
        fail("format", "is only for string fields");
      } else if (!format->is_string() || format->get_string().empty() ||
                 format->get_string().size() > max_format_length) {
        fail("format", "must be a regular expression of 1 to " + std::to_string(max_format_length) + " characters");
      } else {
        const auto& pattern = format->get_string();
        auto compiled = compile_format(std::string_view(pattern.data(), pattern.size()));
        if (!compiled->ok()) {
          fail("format", "is not a valid regular expression (RE2 syntax): " + compiled->error());
        } else {
          field["format"] = *format;
        }
      }
    }
    out.emplace_back(std::move(field));
  }
  if (problems.size() != problems_before) return std::nullopt;
  return out;
}

std::string value_problem::path() const {
  std::string out = "fields";
  if (!slug.empty()) out += "." + slug;
  if (!field.empty()) out += "." + field;
  return out;
}

const compiled_field* compiled_profile::field(std::string_view name) const {
  for (const auto& f : fields)
    if (f.name == name) return &f;
  return nullptr;
}

profile_set profile_set::from_documents(std::vector<json::object> docs) {
  profile_set out;
  for (auto& doc : docs) {
    compiled_profile p;
    p.id = id_field(doc, "id");
    if (p.id.is_nil()) continue;
    if (const auto* slug = doc.if_contains("slug"); slug && slug->is_string()) p.slug = slug->get_string();
    if (const auto* limit = doc.if_contains("limit_to"); limit && limit->is_string())
      p.limit_to = limit->get_string() == "tag" ? profile_target::tag : profile_target::device;
    if (const auto* fields = doc.if_contains("fields"); fields && fields->is_array()) {
      for (const auto& f : fields->get_array()) {
        const auto* o = f.if_object();
        if (!o) continue;
        compiled_field c;
        if (const auto* n = o->if_contains("name"); n && n->is_string()) c.name = n->get_string();
        if (const auto* t = o->if_contains("type"); t && t->is_string())
          c.type = parse_field_type(t->get_string()).value_or(field_type::string);
        if (const auto* r = o->if_contains("required"); r && r->is_bool()) c.required = r->get_bool();
        c.min = number_of(o->if_contains("min"));
        c.max = number_of(o->if_contains("max"));
        if (const auto* fmt = o->if_contains("format"); fmt && fmt->is_string()) {
          c.format_text = fmt->get_string();
          auto compiled = compile_format(c.format_text);
          if (compiled->ok()) c.format = std::move(compiled);
        }
        p.fields.push_back(std::move(c));
      }
    }
    p.doc = std::move(doc);
    out.profiles_.push_back(std::move(p));
  }
  return out;
}

storage::result<profile_set> profile_set::load(const storage::records& records, const uuid& mandate) {
  auto docs = records.list(storage::record_kind::profile, mandate);
  if (!docs) return docs.error();
  return from_documents(std::move(*docs));
}

const compiled_profile* profile_set::by_slug(std::string_view slug) const {
  for (const auto& p : profiles_)
    if (p.slug == slug) return &p;
  return nullptr;
}

const compiled_profile* profile_set::by_id(std::string_view id) const {
  auto wanted = uuid::parse(id);
  if (!wanted) return nullptr;
  for (const auto& p : profiles_)
    if (p.id == *wanted) return &p;
  return nullptr;
}

std::vector<value_problem> profile_set::check(const json::value& writes, profile_target target,
                                              const json::object& owner) const {
  using kind = value_problem::kind;
  std::vector<value_problem> problems;
  const auto* by_slug_writes = writes.if_object();
  if (!by_slug_writes) {
    problems.push_back({kind::profile, "", "", "must be an object keyed by profile slug"});
    return problems;
  }
  const json::object* stored = nullptr;
  if (const auto* v = owner.if_contains(profile_values_key); v && v->is_object()) stored = &v->get_object();
  std::size_t held = stored ? stored->size() : 0;
  for (const auto& [slug_key, values] : *by_slug_writes) {
    const std::string slug(slug_key);
    const auto* profile = by_slug(slug);
    if (!profile) {
      problems.push_back({kind::profile, slug, "", "names no profile of this mandate"});
      continue;
    }
    if (profile->limit_to && *profile->limit_to != target) {
      problems.push_back({kind::profile, slug, "",
                          *profile->limit_to == profile_target::tag ? "is a profile for folders (tags) only"
                                                                    : "is a profile for devices only"});
      continue;
    }
    const auto* vals = values.if_object();
    if (!vals) {
      problems.push_back({kind::profile, slug, "", "must be an object of field values"});
      continue;
    }
    const json::object* existing = nullptr;
    if (stored) {
      if (const auto* entry = stored->if_contains(profile->id.str()); entry && entry->is_object())
        if (const auto* data = entry->get_object().if_contains("data"); data && data->is_object())
          existing = &data->get_object();
    }
    if (!existing && ++held > max_profiles_per_owner) {
      problems.push_back(
          {kind::profile, slug, "",
           "a device or folder holds values of at most " + std::to_string(max_profiles_per_owner) + " profiles"});
      continue;
    }
    for (const auto& [name, value] : *vals) {
      const auto* field = profile->field(name);
      if (!field) {
        problems.push_back({kind::value, slug, std::string(name), "is not a field of profile " + slug});
        continue;
      }
      if (value.is_null()) {
        if (field->required) problems.push_back({kind::value, slug, field->name, "is required and cannot be cleared"});
        continue;
      }
      if (auto why = value_problem_of(*field, value)) problems.push_back({kind::value, slug, field->name, *why});
    }
    if (!existing) {
      for (const auto& f : profile->fields) {
        if (!f.required) continue;
        const auto* given = vals->if_contains(f.name);
        if (!given || given->is_null()) problems.push_back({kind::required, slug, f.name, "is required"});
      }
    }
  }
  return problems;
}

std::size_t profile_set::apply(const json::value& writes, const std::vector<value_problem>& problems,
                               json::object& owner, micros now) const {
  const auto* by_slug_writes = writes.if_object();
  if (!by_slug_writes) return 0;
  auto refused = [&](std::string_view slug, std::string_view field) {
    for (const auto& p : problems) {
      if (p.slug != slug) continue;
      if (p.what != value_problem::kind::value || p.field == field) return true;
    }
    return false;
  };
  std::size_t landed = 0;
  const std::string now_text = format_iso(now);
  for (const auto& [slug, values] : *by_slug_writes) {
    const auto* profile = by_slug(slug);
    const auto* vals = values.if_object();
    if (!profile || !vals || refused(slug, "")) continue;
    json::object data;
    std::size_t here = 0;
    json::value& all = owner[profile_values_key];
    if (!all.is_object()) all = json::object{};
    for (const auto& [name, value] : *vals) {
      if (refused(slug, name)) continue;
      data[name] = value;
      ++here;
    }
    if (here == 0) continue;
    json::value& entry = all.get_object()[profile->id.str()];
    if (!entry.is_object()) entry = json::object{{"data", json::object{}}, {"inserted_at", now_text}};
    auto& e = entry.get_object();
    if (!e["data"].is_object()) e["data"] = json::object{};
    auto& target = e["data"].get_object();
    for (auto& [name, value] : data) {
      if (value.is_null()) {
        target.erase(name);
      } else {
        target[name] = value;
      }
    }
    e["updated_at"] = now_text;
    landed += here;
  }
  return landed;
}

profile_set::rendered profile_set::render(const json::object& owner, std::string_view owner_key,
                                          bool with_profile_data) const {
  rendered out;
  const auto* all = owner.if_contains(profile_values_key);
  if (!all || !all->is_object()) return out;
  for (const auto& [id, entry] : all->get_object()) {
    const auto* profile = by_id(id);
    const auto* e = entry.if_object();
    if (!profile || !e) continue;
    json::object data;
    if (const auto* stored = e->if_contains("data"); stored && stored->is_object())
      for (const auto& [name, value] : stored->get_object())
        if (profile->field(name)) data[name] = value;
    if (with_profile_data) {
      json::object item{{"profile_id", profile->id.str()}};
      if (owner_key != "device_id") item["device_id"] = nullptr;
      item[owner_key] = owner.contains("id") ? owner.at("id") : json::value(nullptr);
      item["data"] = data;
      item["profile"] = profile->doc;
      item["inserted_at"] = e->contains("inserted_at") ? e->at("inserted_at") : json::value(nullptr);
      item["updated_at"] = e->contains("updated_at") ? e->at("updated_at") : json::value(nullptr);
      out.profile_data.emplace_back(std::move(item));
    }
    out.fields[profile->slug] = std::move(data);
  }
  return out;
}

}  // namespace fl::pipeline
