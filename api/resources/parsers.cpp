#include "api/resources/parsers.hpp"

#include <spdlog/spdlog.h>

#include "api/http/input.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/mandates.hpp"
#include "core/time.hpp"

namespace fl::api {

namespace json = boost::json;
using storage::record_kind;

namespace {

constexpr std::size_t max_code_bytes = 262'144;  // the runtime refuses larger sources too

api_result<json::object> load_parser(storage::records& records, const uuid& mandate, std::string_view id_text) {
  auto id = uuid::parse(id_text);
  if (!id) return not_found("parser");
  auto doc = checked(records.get({record_kind::parser, mandate, *id}));
  if (!doc) return doc.error();
  if (!*doc) return not_found("parser");
  return std::move(**doc);
}

// Reads name/language/code into `doc`; `creating` makes name and code required. Code is checked in
// the sandbox: every problem becomes a 422 entry under "code" naming its line; the compiler's
// warnings (`line N: ...`) go to `warnings` (the parser is stored all the same).
api_result<void> read_parser_fields(request_context& ctx, const json::object& body, json::object& doc, bool creating,
                                    json::array& warnings) {
  field_reader in(body);
  if (auto name = in.string("name", 255, creating)) doc["name"] = *name;
  if (in.has("language")) {
    if (auto language = in.one_of("language", {"ex"})) doc["language"] = *language;
  }
  auto code = in.string("code", max_code_bytes, creating);
  if (!in.ok()) return in.error();
  if (!code) return {};
  std::vector<pipeline::parser_problem> problems;
  try {
    // Compile-time code runs during the check: in a worker of the mandate's own.
    const auto* mandate = doc.if_contains("mandate_id");
    auto checked =
        ctx.app.parsers.check(mandate && mandate->is_string() ? std::string(mandate->get_string()) : "", *code);
    if (checked.busy) return api_error{429, "another parser of this mandate is being checked: try again shortly"};
    problems = std::move(checked.problems);
    for (const auto& w : checked.warnings)
      warnings.emplace_back((w.line ? "line " + std::to_string(*w.line) + ": " : std::string()) + w.message);
  } catch (const std::exception& e) {
    spdlog::error("parser check failed: {}", e.what());
    return api_error{503, "parsers cannot be checked right now"};
  }
  if (!problems.empty()) {
    json::array messages;
    std::string summary = "parser rejected:";
    for (const auto& p : problems) {
      const std::string text = (p.line ? "line " + std::to_string(*p.line) + ": " : std::string()) + p.message;
      messages.emplace_back(text);
      summary += " " + text + ";";
    }
    summary.pop_back();
    return api_error{422, summary, json::object{{"code", messages}}};
  }
  doc["code"] = *code;
  return {};
}

// The stored parser as answered to a create or edit: with the check's warnings when there are any
// (not stored: they belong to this check).
json::object with_warnings(json::object doc, json::array warnings) {
  if (!warnings.empty()) doc["warnings"] = std::move(warnings);
  return doc;
}

http_response parser_list_response(request_context& ctx, const uuid& mandate) {
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at", "name"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto docs = checked(ctx.records().list(record_kind::parser, mandate));
  if (!docs) return error_response(docs.error());
  std::erase_if(*docs, [&](const json::object& p) {
    return !ctx.may(pipeline::resource_type::parser, pipeline::operation::read, p);
  });
  auto page = paginate(std::move(*docs), *page_req);
  if (!page) return error_response(page.error());
  return list_response(page->items, page->retrieve_after_id);
}

}  // namespace

http_response list_parsers(request_context& ctx) {
  return parser_list_response(ctx, ctx.mandate());
}

http_response show_parser(request_context& ctx) {
  auto doc = load_parser(ctx.records(), ctx.mandate(), ctx.param("parser"));
  if (!doc) return error_response(doc.error());
  if (auto refused = ctx.refuse_unless(pipeline::resource_type::parser, pipeline::operation::read, *doc))
    return error_response(*refused);
  // A parser that kept failing its deadline is paused for a while: say until when and why.
  if (auto id = uuid::parse(ctx.param("parser"))) {
    if (auto pause = ctx.app.parsing.parser_paused(ctx.mandate(), *id)) {
      (*doc)["paused_until"] = format_iso(pause->until);
      (*doc)["pause_reason"] = pause->reason;
    }
  }
  return single_response(*doc);
}

http_response admin_list_parsers(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  return parser_list_response(ctx, *mandate);
}

http_response admin_create_parser(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto body = parse_wrapped_body(ctx.request.body, "parser");
  if (!body) return error_response(body.error());
  const std::string now = format_iso(now_micros());
  const uuid id = uuid::random();
  json::object doc{
      {"id", id.str()},     {"name", ""},       {"language", "ex"}, {"code", ""}, {"mandate_id", mandate->str()},
      {"inserted_at", now}, {"updated_at", now}};
  json::array warnings;
  if (auto read = read_parser_fields(ctx, *body, doc, true, warnings); !read) return error_response(read.error());
  auto batch = ctx.records().batch();
  ctx.records().put(batch, {record_kind::parser, *mandate, id}, doc);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(with_warnings(doc, std::move(warnings)), 201);
}

http_response admin_show_parser(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto doc = load_parser(ctx.records(), *mandate, ctx.param("parser"));
  if (!doc) return error_response(doc.error());
  return single_response(*doc);
}

http_response admin_edit_parser(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto body = parse_wrapped_body(ctx.request.body, "parser");
  if (!body) return error_response(body.error());
  auto doc = load_parser(ctx.records(), *mandate, ctx.param("parser"));
  if (!doc) return error_response(doc.error());
  // The check runs before taking the writer lock (it may take a worker start); the write re-reads.
  json::object changed = *doc;
  json::array warnings;
  if (auto read = read_parser_fields(ctx, *body, changed, false, warnings); !read) return error_response(read.error());
  auto lock = ctx.records().writer();
  auto current = load_parser(ctx.records(), *mandate, ctx.param("parser"));
  if (!current) return error_response(current.error());
  for (const char* key : {"name", "language", "code"}) (*current)[key] = changed.at(key);
  (*current)["updated_at"] = format_iso(now_micros());
  auto batch = ctx.records().batch();
  ctx.records().put(batch, {record_kind::parser, *mandate, *uuid::parse(current->at("id").as_string())}, *current);
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(with_warnings(*current, std::move(warnings)));
}

http_response admin_delete_parser(request_context& ctx) {
  auto mandate = path_mandate(ctx);
  if (!mandate) return error_response(mandate.error());
  auto lock = ctx.records().writer();
  auto doc = load_parser(ctx.records(), *mandate, ctx.param("parser"));
  if (!doc) return error_response(doc.error());
  auto devices = checked(ctx.records().list(record_kind::device, *mandate));
  if (!devices) return error_response(devices.error());
  std::size_t users = 0;
  for (const auto& d : *devices) users += d.at("parser_id") == doc->at("id") ? 1 : 0;
  if (users > 0) {
    return error_response(conflict("parser is used by " + std::to_string(users) + " device(s); change them first"));
  }
  auto batch = ctx.records().batch();
  ctx.records().erase(batch, {record_kind::parser, *mandate, *uuid::parse(doc->at("id").as_string())});
  if (auto done = checked(ctx.records().commit(batch)); !done) return error_response(done.error());
  return single_response(*doc);
}

}  // namespace fl::api
