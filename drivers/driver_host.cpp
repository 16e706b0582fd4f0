#include "drivers/driver_host.hpp"

#include <spdlog/spdlog.h>
#include <boost/json/parse.hpp>

#include "core/json_in.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::drivers {

namespace json = boost::json;
using pipeline::action_state;
using pipeline::change_kind;
using pipeline::id_field;
using storage::record_kind;

namespace {

bool enabled(const json::object& doc) {
  const auto* v = doc.if_contains("enabled");
  return !v || !v->is_bool() || v->get_bool();
}

// Whether a connection made from `running` is what `stored` asks for: what connect() reads.
bool same_connection(const json::object& running, const json::object& stored) {
  for (std::string_view field : {"driver", "opts", "owner_id"}) {
    const auto* a = running.if_contains(field);
    const auto* b = stored.if_contains(field);
    if ((a == nullptr) != (b == nullptr) || (a && *a != *b)) return false;
  }
  return true;
}

}  // namespace

driver_host::driver_host(const driver_catalog& catalog, driver_context ctx, pipeline::change_feed& feed)
    : catalog_(catalog), ctx_(ctx), feed_(feed) {}

driver_host::~driver_host() {
  stop();
}

void driver_host::start() {
  if (thread_.running()) return;
  // Changes from here on are seen by the thread; what is stored now is loaded below. Something in
  // both is handled twice, which every step tolerates (a second dispatch finds the action moved on).
  const std::uint64_t from = feed_.head();
  load_all();
  auto unfinished = ctx_.actions.unfinished();
  if (!unfinished) {
    spdlog::error("driver host: the unfinished actions could not be read: {}", unfinished.error().cause.message);
  } else {
    for (const auto& action : *unfinished) {
      const uuid mandate = id_field(action, "mandate_id");
      const uuid id = id_field(action, "id");
      if (pipeline::state_of(action) == action_state::executing) {
        log_unresolved(
            ctx_.actions.move(mandate, id, action_state::errored,
                              pipeline::action_event{"interrupted", "errored",
                                                     "the server stopped while the action was executing; it is not "
                                                     "retried because the driver may already have carried it out",
                                                     nullptr}),
            id, "the interrupted outcome");
        continue;
      }
      arm_expiry(action);
      dispatch(action);
    }
  }
  thread_.start([this, from] { run(from); });
}

void driver_host::stop() {
  thread_.stop();    // the thread sees it within one feed wait (0.1 s); the feed itself stays open
  running_.clear();  // each connection stops its own threads and sockets
}

namespace {

constexpr pipeline::change_kinds handled_kinds{change_kind::action_changed, change_kind::driver_instance_changed,
                                               change_kind::interface_changed, change_kind::device_deleted,
                                               change_kind::mandate_deleted};

}  // namespace

void driver_host::run(std::uint64_t from) {
  std::uint64_t next = from;
  while (!thread_.stopping()) {
    // Only what handle() acts on: the packets and readings that make up nearly every change
    // neither wake this thread nor pass through it.
    auto got = feed_.read_of(next, 256, std::chrono::milliseconds(100), handled_kinds);
    next = got.next;
    if (got.lost) {
      spdlog::warn("driver host fell behind the change feed; reloading instances and pending actions");
      running_.clear();
      load_all();
      auto refreshed = ctx_.actions.unfinished();
      if (refreshed)
        for (const auto& a : *refreshed) dispatch(a);
    }
    for (const auto& c : got.changes) {
      if (thread_.stopping()) return;
      handle(*c);
    }
  }
}

void driver_host::handle(const pipeline::change& c) {
  switch (c.kind) {
    case change_kind::action_changed: {
      boost::system::error_code ec;
      auto doc = fl::parse_written_json(c.body, ec);
      if (ec || !doc.is_object() || pipeline::state_of(doc.as_object()) != action_state::pending) return;
      // A new action has exactly its creation event: arm its expiry once.
      const auto* events = doc.as_object().if_contains("events");
      if (events && events->is_array() && events->as_array().size() == 1) arm_expiry(doc.as_object());
      dispatch(doc.as_object());
      return;
    }
    case change_kind::driver_instance_changed:
      reconnect(c.mandate, c.item);
      dispatch_pending(c.mandate);
      return;
    case change_kind::interface_changed:
    case change_kind::device_deleted:
      refresh_interfaces(c.mandate);
      dispatch_pending(c.mandate);
      return;
    case change_kind::mandate_deleted:
      std::erase_if(running_, [&](const auto& r) { return r.first.mandate == c.mandate; });
      return;
    default:
      return;
  }
}

void driver_host::load_all() {
  auto mandates = ctx_.records.list(record_kind::mandate, uuid::nil());
  if (!mandates) {
    spdlog::error("driver host: mandates could not be read: {}", mandates.error().message);
    return;
  }
  for (const auto& m : *mandates) {
    const uuid mandate = id_field(m, "id");
    auto instances = ctx_.records.list(record_kind::driver_instance, mandate);
    if (!instances) continue;
    for (const auto& i : *instances) reconnect(mandate, id_field(i, "id"));
  }
}

void driver_host::reconnect(const uuid& mandate, const uuid& instance) {
  auto doc = ctx_.records.get({record_kind::driver_instance, mandate, instance});
  if (!doc)
    spdlog::error("driver host: instance {} could not be read ({}); its connection stops", instance.str(),
                  doc.error().message);
  const bool wanted = doc && *doc && enabled(**doc);
  // A change only says "look again": the stored document may already be newer than the change (a
  // disable handled after the enable that followed it). A connection running what is stored stays,
  // with the actions it holds; dropping it would fail them for nothing.
  if (auto r = running_.find({mandate, instance});
      wanted && r != running_.end() && same_connection(r->second.instance, **doc)) {
    r->second.instance = std::move(**doc);
    return;
  }
  running_.erase({mandate, instance});  // the old connection stops before a new one starts
  if (!wanted) return;
  const auto* d = catalog_.find((*doc)->at("driver").as_string());
  if (!d) return;
  auto connection = d->connect(**doc, ctx_);
  if (!connection) return;
  running_[{mandate, instance}] = {std::move(**doc), std::move(connection)};
  refresh_interfaces(mandate);
}

void driver_host::refresh_interfaces(const uuid& mandate) {
  auto interfaces = ctx_.records.list(record_kind::interface, mandate);
  if (!interfaces) return;
  for (auto& [key, r] : running_) {
    if (key.mandate != mandate) continue;
    std::vector<json::object> mine;
    for (const auto& i : *interfaces)
      if (id_field(i, "driver_instance_id") == key.instance && enabled(i)) mine.push_back(i);
    r.connection->set_interfaces(mine);
  }
}

void driver_host::dispatch(const json::object& action) {
  const uuid mandate = id_field(action, "mandate_id");
  const uuid id = id_field(action, "id");
  auto iface = ctx_.records.get(
      {record_kind::interface, mandate, id_field(action, "interface_id"), id_field(action, "device_id")});
  if (!iface || !*iface || !enabled(**iface)) return;  // stays pending
  auto r = running_.find({mandate, id_field(**iface, "driver_instance_id")});
  if (r == running_.end()) return;  // a disabled (or missing) instance: stays pending
  auto moved = ctx_.actions.move(mandate, id, action_state::executing);
  if (!moved) return;  // cancelled, expired or dispatched meanwhile
  r->second.connection->execute(*moved, **iface);
}

void driver_host::dispatch_pending(const uuid& mandate) {
  auto actions = ctx_.actions.pending(mandate);  // the pending list only, not every action of the mandate
  if (!actions) return;
  for (const auto& a : *actions) dispatch(a);
}

void driver_host::arm_expiry(const json::object& action) {
  const auto* after = action.if_contains("cancel_after");
  if (!after || !after->is_int64()) return;
  auto inserted = parse_timestamp(action.at("inserted_at").as_string());
  if (!inserted) return;
  const uuid mandate = id_field(action, "mandate_id");
  const uuid id = id_field(action, "id");
  auto* actions = &ctx_.actions;
  const micros deadline = *inserted + after->get_int64() * 1000;
  const bool armed = ctx_.timers.at(deadline, [actions, mandate, id, ms = after->get_int64()] {
    // Only an unfinished action moves; a finished one answers invalid_state, which is the point.
    log_unresolved(actions->move(mandate, id, action_state::cancelled,
                                 pipeline::action_event{"cancel_after_expired", "cancelled",
                                                        "cancelled because it was unfinished after cancel_after (" +
                                                            std::to_string(ms) + " ms)",
                                                        nullptr}),
                   id, "the cancel_after expiry");
  });
  if (!armed) spdlog::error("action {}: its cancel_after expiry could not be armed: too many timers", id.str());
}

}  // namespace fl::drivers
