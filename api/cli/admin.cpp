// `fieldline admin ...`: drives /admin/v1 of a running server with a superadmin key.
#include <CLI/CLI.hpp>
#include <boost/json/parse.hpp>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

#include "api/cli/admin_client.hpp"
#include "api/cli/commands.hpp"
#include "api/cli/terminal_view.hpp"
#include "api/http/client.hpp"
#include "core/json_out.hpp"
#include "core/query.hpp"

namespace fl::cli {

namespace json = boost::json;

namespace {

// A table on a terminal, JSON when piped (api/cli/terminal_view.hpp).
void print(const json::value& v) {
  show(v);
}

void add_mandate_commands(CLI::App& admin, const std::shared_ptr<admin_options>& o) {
  auto* mandate = admin.add_subcommand("mandate", "Mandates (tenants)");
  mandate->require_subcommand(1);

  struct create_args {
    std::string name, slug;
    std::vector<std::string> features;
    int limit = -1;
  };
  auto args = std::make_shared<create_args>();
  auto* create = mandate->add_subcommand("create", "Create a mandate; prints it as JSON");
  create->add_option("--name", args->name, "Name")->required();
  create->add_option("--slug", args->slug, "Slug (default: from the name)");
  create->add_option("--feature", args->features, "Feature to enable (api_packets_writeable); repeatable");
  create->add_option("--limit-max-api-keys", args->limit, "Maximum number of API keys");
  create->callback([o, args] {
    json::object m{{"name", args->name}};
    if (!args->slug.empty()) m["slug"] = args->slug;
    json::array features;
    for (const auto& f : args->features) features.emplace_back(f);
    m["features"] = std::move(features);
    if (args->limit >= 0) m["limit_max_api_keys"] = args->limit;
    json::object body{{"mandate", m}};
    print(call(*o, "POST", "mandates", &body));
  });

  struct update_args {
    std::string id, name, slug, time_zone;
    std::vector<std::string> features;
    int limit = -1, parse_timeout_ms = -1;
  };
  auto changes = std::make_shared<update_args>();
  auto* update = mandate->add_subcommand("update", "Change a mandate (only what is given); prints it as JSON");
  update->add_option("id", changes->id, "Mandate id")->required();
  update->add_option("--name", changes->name, "Name");
  update->add_option("--slug", changes->slug, "Slug");
  auto* feature = update->add_option("--feature", changes->features,
                                     "Features, replacing the current ones (api_packets_writeable); repeatable");
  update->add_option("--limit-max-api-keys", changes->limit, "Maximum number of API keys");
  update->add_option("--time-zone", changes->time_zone, "IANA time zone of the billing statistics");
  update->add_option("--parse-timeout-ms", changes->parse_timeout_ms, "Per-packet parse time limit (1..60000 ms)");
  update->callback([o, changes, feature] {
    json::object m;
    if (!changes->name.empty()) m["name"] = changes->name;
    if (!changes->slug.empty()) m["slug"] = changes->slug;
    if (!changes->time_zone.empty()) m["time_zone"] = changes->time_zone;
    if (feature->count() > 0) {
      json::array features;
      for (const auto& f : changes->features) features.emplace_back(f);
      m["features"] = std::move(features);
    }
    if (changes->limit >= 0) m["limit_max_api_keys"] = changes->limit;
    if (changes->parse_timeout_ms >= 0) m["parse_timeout_ms"] = changes->parse_timeout_ms;
    if (m.empty()) throw CLI::ValidationError("mandate update", "give at least one field to change");
    json::object body{{"mandate", std::move(m)}};
    print(call(*o, "PATCH", "mandates/" + url_encode(changes->id), &body));
  });

  mandate->add_subcommand("list", "List mandates")->callback([o] {
    print(call(*o, "GET", "mandates?limit=100", nullptr));
  });
  auto id = std::make_shared<std::string>();
  auto* show = mandate->add_subcommand("show", "Show a mandate");
  show->add_option("id", *id)->required();
  show->callback([o, id] { print(call(*o, "GET", "mandates/" + url_encode(*id), nullptr)); });
  auto* del = mandate->add_subcommand("delete", "Delete a mandate and everything it owns");
  del->add_option("id", *id)->required();
  del->callback([o, id] { print(call(*o, "DELETE", "mandates/" + url_encode(*id), nullptr)); });
}

void add_key_commands(CLI::App& admin, const std::shared_ptr<admin_options>& o) {
  auto* key = admin.add_subcommand("key", "API keys");
  key->require_subcommand(1);
  struct key_args {
    std::string mandate, role, name, id;
    std::vector<std::string> groups;
    bool all = false;
  };
  auto args = std::make_shared<key_args>();
  auto base = [args] {
    return args->mandate.empty() ? std::string("api_keys") : "mandates/" + url_encode(args->mandate) + "/api_keys";
  };

  auto* create = key->add_subcommand("create", "Create a key; prints only the secret (shown once)");
  auto* mandate_opt = create->add_option("--mandate", args->mandate, "Mandate id (keys of one mandate)");
  create->add_flag("--all", args->all, "A key for all mandates (roles superadmin, billing)")->excludes(mandate_opt);
  create->add_option("--role", args->role, "admin, read_only, member; or superadmin, billing with --all")->required();
  create->add_option("--name", args->name, "Name (default: the role)");
  create->add_option("--group", args->groups, "Group id (member keys get their groups' rules); repeatable");
  create->callback([o, args, base] {
    if (args->mandate.empty() && !args->all) throw CLI::ValidationError("key create", "needs --mandate ID or --all");
    json::array groups;
    for (const auto& g : args->groups) groups.emplace_back(g);
    json::object body{{"api_key", json::object{{"name", args->name.empty() ? args->role : args->name},
                                               {"role", args->role},
                                               {"groups", std::move(groups)}}}};
    auto created = call(*o, "POST", base(), &body);
    std::fprintf(stderr, "created %s key %s\n", args->role.c_str(), std::string(created.at("id").as_string()).c_str());
    std::printf("%s\n", std::string(created.at("key").as_string()).c_str());
  });

  auto* list = key->add_subcommand("list", "List keys of a mandate (or all-mandate keys)");
  list->add_option("--mandate", args->mandate, "Mandate id");
  list->callback([o, base] { print(call(*o, "GET", base() + "?limit=100", nullptr)); });

  auto* del = key->add_subcommand("delete", "Delete a key");
  del->add_option("--mandate", args->mandate, "Mandate id");
  del->add_option("id", args->id)->required();
  del->callback([o, args, base] { print(call(*o, "DELETE", base() + "/" + url_encode(args->id), nullptr)); });
}

// `--rule TYPE:OPS:REGEX`: OPS are the letters of the operations granted (c, r, u, d; `-` for none),
// the regex is everything after the second colon (it may hold colons itself).
json::object parse_rule(const std::string& text) {
  const auto first = text.find(':');
  const auto second = first == std::string::npos ? first : text.find(':', first + 1);
  if (second == std::string::npos)
    throw CLI::ValidationError("--rule", "must be TYPE:OPS:REGEX, e.g. device:ru:^basement-");
  const std::string ops = text.substr(first + 1, second - first - 1);
  if (ops.find_first_not_of("crud-") != std::string::npos)
    throw CLI::ValidationError("--rule", "OPS are letters of c, r, u, d (or -), got " + ops);
  return {{"type", text.substr(0, first)},
          {"regex", text.substr(second + 1)},
          {"create", ops.find('c') != std::string::npos},
          {"read", ops.find('r') != std::string::npos},
          {"update", ops.find('u') != std::string::npos},
          {"delete", ops.find('d') != std::string::npos}};
}

void add_group_commands(CLI::App& admin, const std::shared_ptr<admin_options>& o) {
  auto* group = admin.add_subcommand("group", "Groups of a mandate: the rules member keys get");
  group->require_subcommand(1);
  struct group_args {
    std::string mandate, name, id;
    std::vector<std::string> rules;
  };
  auto args = std::make_shared<group_args>();
  auto base = [args] { return "mandates/" + url_encode(args->mandate) + "/groups"; };
  const auto rules_of = [args] {
    json::array out;
    for (const auto& r : args->rules) out.emplace_back(parse_rule(r));
    return out;
  };

  auto* create = group->add_subcommand("create", "Create a group; prints it as JSON");
  create->add_option("--mandate", args->mandate, "Mandate id")->required();
  create->add_option("--name", args->name, "Name")->required();
  create->add_option("--rule", args->rules, "TYPE:OPS:REGEX, e.g. device:ru:^basement- ; repeatable");
  create->callback([o, args, base, rules_of] {
    json::object body{{"group", json::object{{"name", args->name}, {"rules", rules_of()}}}};
    print(call(*o, "POST", base(), &body));
  });
  auto* update = group->add_subcommand("update", "Replace a group's rules (and name); prints it as JSON");
  update->add_option("--mandate", args->mandate, "Mandate id")->required();
  update->add_option("--name", args->name, "New name");
  update->add_option("--rule", args->rules, "TYPE:OPS:REGEX; repeatable; none given: no rules");
  update->add_option("id", args->id)->required();
  update->callback([o, args, base, rules_of] {
    json::object g{{"rules", rules_of()}};
    if (!args->name.empty()) g["name"] = args->name;
    json::object body{{"group", std::move(g)}};
    print(call(*o, "PATCH", base() + "/" + url_encode(args->id), &body));
  });
  auto* list = group->add_subcommand("list", "List the groups of a mandate");
  list->add_option("--mandate", args->mandate, "Mandate id")->required();
  list->callback([o, base] { print(call(*o, "GET", base() + "?limit=100", nullptr)); });
  auto* show = group->add_subcommand("show", "Show a group");
  show->add_option("--mandate", args->mandate, "Mandate id")->required();
  show->add_option("id", args->id)->required();
  show->callback([o, args, base] { print(call(*o, "GET", base() + "/" + url_encode(args->id), nullptr)); });
  auto* del = group->add_subcommand("delete", "Delete a group (its keys keep the id; it grants nothing)");
  del->add_option("--mandate", args->mandate, "Mandate id")->required();
  del->add_option("id", args->id)->required();
  del->callback([o, args, base] { print(call(*o, "DELETE", base() + "/" + url_encode(args->id), nullptr)); });
}

void add_driver_instance_commands(CLI::App& admin, const std::shared_ptr<admin_options>& o) {
  auto* di = admin.add_subcommand("driver-instance", "Driver instances of a mandate");
  di->require_subcommand(1);
  struct di_args {
    std::string mandate, name, driver, opts = "{}";
    bool disabled = false;
  };
  auto args = std::make_shared<di_args>();
  auto* create = di->add_subcommand("create", "Create a driver instance; prints it as JSON");
  create->add_option("--mandate", args->mandate, "Mandate id")->required();
  create->add_option("--name", args->name, "Name")->required();
  create->add_option("--driver", args->driver, "Driver (see GET /api/v1/drivers)")->required();
  create->add_option("--opts", args->opts, "Options as a JSON object");
  create->add_flag("--disabled", args->disabled, "Create it disabled");
  create->callback([o, args] {
    boost::system::error_code ec;
    auto opts = json::parse(args->opts, ec);
    if (ec || !opts.is_object()) throw CLI::ValidationError("--opts", "must be a JSON object");
    json::object body{
        {"driver_instance",
         json::object{{"name", args->name}, {"driver", args->driver}, {"opts", opts}, {"enabled", !args->disabled}}}};
    print(call(*o, "POST", "mandates/" + url_encode(args->mandate) + "/driver_instances", &body));
  });
  auto* list = di->add_subcommand("list", "List driver instances of a mandate");
  list->add_option("--mandate", args->mandate, "Mandate id")->required();
  list->callback([o, args] {
    print(call(*o, "GET", "mandates/" + url_encode(args->mandate) + "/driver_instances?limit=100", nullptr));
  });
}

}  // namespace

void add_admin_command(CLI::App& app) {
  auto o = std::make_shared<admin_options>();
  auto* admin = app.add_subcommand("admin", "Manage mandates, API keys and driver instances of a running server");
  admin->require_subcommand(1);
  add_server_options(*admin, *o);
  admin->add_option("--key", o->key, "Superadmin key (default: $FIELDLINE_KEY, then DATA/superadmin.key)");
  admin->add_option("--data", o->data, "Data directory holding superadmin.key")->capture_default_str();
  add_mandate_commands(*admin, o);
  add_key_commands(*admin, o);
  add_group_commands(*admin, o);
  add_driver_instance_commands(*admin, o);
}

}  // namespace fl::cli
