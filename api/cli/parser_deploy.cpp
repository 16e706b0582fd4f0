// `fieldline parser deploy FILE --mandate M [--name N]`: stores a parser file in a mandate through
// /admin/v1 (superadmin key), creating it or replacing the code of the mandate's parser of that
// name. The server checks it first; a rejected parser is not stored and its problems are printed.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "api/cli/admin_client.hpp"
#include "api/cli/commands.hpp"
#include "core/query.hpp"

namespace fl::cli {

namespace json = boost::json;

namespace {

struct deploy_args {
  std::string file, mandate, name;
};

// The id of the mandate's parser named `name`, looking through every page of the list.
std::optional<std::string> parser_named(const admin_options& o, const std::string& mandate, const std::string& name) {
  std::string after;
  for (int page = 0; page < 1000; ++page) {  // 100,000 parsers: far more than a mandate holds
    std::string path = "mandates/" + url_encode(mandate) + "/parsers?limit=100";
    if (!after.empty()) path += "&retrieve_after=" + after;
    const auto listed = call(o, "GET", path, nullptr);
    const auto* items = listed.if_array();
    if (!items || items->empty()) return std::nullopt;
    for (const auto& p : *items) {
      const auto* n = p.as_object().if_contains("name");
      if (n && n->is_string() && n->get_string() == name) return std::string(p.at("id").as_string());
    }
    if (items->size() < 100) return std::nullopt;
    after = std::string(items->back().at("id").as_string());
  }
  return std::nullopt;
}

void deploy(const admin_options& o, const deploy_args& a) {
  std::ifstream in(a.file, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + a.file);
  std::stringstream code;
  code << in.rdbuf();
  const std::string name = a.name.empty() ? std::filesystem::path(a.file).stem().string() : a.name;
  json::object body{{"parser", json::object{{"name", name}, {"language", "ex"}, {"code", code.str()}}}};
  const std::string base = "mandates/" + url_encode(a.mandate) + "/parsers";
  const auto existing = parser_named(o, a.mandate, name);
  const auto stored =
      existing ? call(o, "PUT", base + "/" + url_encode(*existing), &body) : call(o, "POST", base, &body);
  std::printf("%s parser %s (%s)\n", existing ? "updated" : "created", name.c_str(),
              std::string(stored.at("id").as_string()).c_str());
}

}  // namespace

void add_parser_deploy_command(CLI::App& parser) {
  auto o = std::make_shared<admin_options>();
  auto a = std::make_shared<deploy_args>();
  auto* cmd = parser.add_subcommand(
      "deploy", "Store a parser file in a mandate (create, or replace the code of its parser of that name)");
  cmd->add_option("file", a->file, "Parser file (.ex)")->required()->check(CLI::ExistingFile);
  cmd->add_option("--mandate", a->mandate, "Mandate id")->required();
  cmd->add_option("--name", a->name, "Parser name (default: the file name without .ex)");
  add_server_options(*cmd, *o);
  cmd->add_option("--key", o->key, "Superadmin key (default: $FIELDLINE_KEY, then DATA/superadmin.key)");
  cmd->add_option("--data", o->data, "Data directory holding superadmin.key")->capture_default_str();
  cmd->callback([o, a] { deploy(*o, *a); });
}

}  // namespace fl::cli
