#include "pipeline/access_rules.hpp"

#include <re2/re2.h>
#include <spdlog/spdlog.h>

#include <array>

#include "core/ids.hpp"

namespace fl::pipeline {

namespace json = boost::json;

namespace {

constexpr std::array<std::string_view, 6> type_names = {"device", "tag", "parser", "driver", "user", "apikey"};
constexpr std::array<std::string_view, 4> operation_names = {"create", "read", "update", "delete"};
constexpr std::int64_t max_program_memory = 1 << 20;  // RE2's own bound on a compiled pattern
// Matching is linear in the text but also grows with the pattern's program (RE2 falls back from its
// DFA to the slower NFA on big programs), and a list matches every rule against every resource: so
// programs are kept small (rules people write, `^basement-|^cellar-`, are a few dozen) and a key's
// rules are bounded in number.
constexpr int max_program_size = 300;
constexpr std::size_t max_rules_per_key = 200;

std::uint8_t bit(operation op) {
  return static_cast<std::uint8_t>(1u << static_cast<unsigned>(op));
}

std::unique_ptr<re2::RE2> compile_regex(std::string_view pattern) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  options.set_max_mem(max_program_memory);
  return std::make_unique<re2::RE2>(re2::StringPiece(pattern.data(), pattern.size()), options);
}

// The fields the spec matches per type.
std::array<std::string_view, 3> matched_fields(resource_type t) {
  switch (t) {
    case resource_type::device:
    case resource_type::tag:
      return {"id", "name", "slug"};
    case resource_type::user:
      return {"id", "name", "email"};
    case resource_type::parser:
    case resource_type::driver:
    case resource_type::apikey:
      return {"id", "name", {}};
  }
  return {};
}

}  // namespace

std::optional<resource_type> parse_resource_type(std::string_view name) {
  for (std::size_t i = 0; i < type_names.size(); ++i)
    if (type_names[i] == name) return static_cast<resource_type>(i);
  return std::nullopt;
}

std::string_view resource_type_name(resource_type t) {
  return type_names.at(static_cast<std::size_t>(t));
}

std::optional<json::array> check_rules(const json::value& rules, std::string& problem) {
  if (!rules.is_array()) {
    problem = "rules: must be a list of rules";
    return std::nullopt;
  }
  if (rules.get_array().size() > max_rules_per_group) {
    problem = "rules: at most " + std::to_string(max_rules_per_group) + " rules per group";
    return std::nullopt;
  }
  json::array out;
  std::size_t index = 0;
  for (const auto& r : rules.get_array()) {
    const std::string at = "rules[" + std::to_string(index++) + "]";
    if (!r.is_object()) {
      problem = at + ": must be an object";
      return std::nullopt;
    }
    const auto& in = r.get_object();
    for (const auto& [key, value] : in) {
      if (key != "id" && key != "type" && key != "regex" &&
          std::find(operation_names.begin(), operation_names.end(), std::string_view(key)) == operation_names.end()) {
        problem = at + "." + std::string(key) + ": unknown field";
        return std::nullopt;
      }
    }
    const auto* type = in.if_contains("type");
    if (!type || !type->is_string() || !parse_resource_type(type->get_string())) {
      problem = at + ".type: must be one of device, tag, parser, driver, user, apikey";
      return std::nullopt;
    }
    const auto* regex = in.if_contains("regex");
    if (!regex || !regex->is_string() || regex->get_string().size() > max_regex_length) {
      problem =
          at + ".regex: must be a regular expression of at most " + std::to_string(max_regex_length) + " characters";
      return std::nullopt;
    }
    const auto compiled = compile_regex(regex->get_string());
    if (!compiled->ok()) {
      problem = at + ".regex: " + compiled->error();
      return std::nullopt;
    }
    if (compiled->ProgramSize() > max_program_size) {
      problem = at + ".regex: too complex (" + std::to_string(compiled->ProgramSize()) + " steps compiled; at most " +
                std::to_string(max_program_size) + ")";
      return std::nullopt;
    }
    json::object rule{{"id", uuid::random().str()}, {"type", type->get_string()}, {"regex", regex->get_string()}};
    if (const auto* id = in.if_contains("id"); id && !id->is_null()) {
      if (!id->is_string() || !uuid::parse(id->get_string())) {
        problem = at + ".id: must be a uuid";
        return std::nullopt;
      }
      rule["id"] = id->get_string();
    }
    for (const auto name : operation_names) {
      const auto* flag = in.if_contains(name);
      if (flag && !flag->is_bool()) {
        problem = at + "." + std::string(name) + ": must be true or false";
        return std::nullopt;
      }
      rule[name] = flag && flag->get_bool();
    }
    out.push_back(std::move(rule));
  }
  return out;
}

access_rules::~access_rules() = default;

std::shared_ptr<const access_rules> access_rules::compile(const std::vector<json::object>& groups) {
  std::shared_ptr<access_rules> out(new access_rules());
  for (const auto& group : groups) {
    const auto* rules = group.if_contains("rules");
    if (!rules || !rules->is_array()) continue;
    for (const auto& r : rules->get_array()) {
      if (!r.is_object()) continue;
      const auto& doc = r.get_object();
      const auto* type_text = doc.if_contains("type");
      const auto* regex_text = doc.if_contains("regex");
      if (!type_text || !type_text->is_string() || !regex_text || !regex_text->is_string()) continue;
      const auto type = parse_resource_type(type_text->get_string());
      if (!type) continue;
      std::uint8_t operations = 0;
      for (std::size_t i = 0; i < operation_names.size(); ++i) {
        const auto* flag = doc.if_contains(operation_names[i]);
        if (flag && flag->is_bool() && flag->get_bool()) operations |= bit(static_cast<operation>(i));
      }
      if (operations == 0) continue;
      if (out->rules_.size() >= max_rules_per_key) {
        spdlog::warn("a key's groups hold more than {} rules; the rest grant nothing", max_rules_per_key);
        return out;
      }
      auto regex = compile_regex(regex_text->get_string());
      if (!regex->ok() || regex->ProgramSize() > max_program_size) {
        spdlog::warn("group {}: a stored rule's regex does not compile or is too complex ({}); it grants nothing",
                     group.contains("id") ? std::string(group.at("id").as_string()) : "?", regex->error());
        continue;
      }
      out->rules_.push_back({*type, operations, std::move(regex)});
    }
  }
  return out;
}

bool access_rules::allows(resource_type type, operation op, const json::object& resource) const {
  const auto fields = matched_fields(type);
  for (const auto& r : rules_) {
    if (r.type != type || !(r.operations & bit(op))) continue;
    for (const auto field : fields) {
      if (field.empty()) continue;
      const auto* value = resource.if_contains(field);
      if (!value || !value->is_string()) continue;
      const auto& text = value->get_string();
      if (re2::RE2::PartialMatch(re2::StringPiece(text.data(), text.size()), *r.regex)) return true;
    }
  }
  return false;
}

bool access_rules::allows_values(resource_type type, operation op,
                                 std::initializer_list<std::string_view> values) const {
  for (const auto& r : rules_) {
    if (r.type != type || !(r.operations & bit(op))) continue;
    for (const auto value : values)
      if (re2::RE2::PartialMatch(re2::StringPiece(value.data(), value.size()), *r.regex)) return true;
  }
  return false;
}

bool access_rules::grants_any(resource_type type, operation op) const {
  for (const auto& r : rules_)
    if (r.type == type && (r.operations & bit(op))) return true;
  return false;
}

}  // namespace fl::pipeline
