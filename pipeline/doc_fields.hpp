#pragma once
// Typed reads of fields in stored JSON documents (catalog records written by the services), lenient
// on purpose: a missing or mistyped field reads as nil / empty instead of throwing.
#include <boost/json/object.hpp>
#include <string>
#include <string_view>

#include "core/ids.hpp"

namespace fl::pipeline {

[[nodiscard]] inline uuid id_field(const boost::json::object& doc, std::string_view key) {
  const auto* v = doc.if_contains(key);
  if (!v || !v->is_string()) return uuid::nil();
  return uuid::parse(v->get_string()).value_or(uuid::nil());
}

[[nodiscard]] inline std::string text_field(const boost::json::object& doc, std::string_view key) {
  const auto* v = doc.if_contains(key);
  return v && v->is_string() ? std::string(v->get_string()) : std::string();
}

}  // namespace fl::pipeline
