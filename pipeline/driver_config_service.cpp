#include "pipeline/driver_config_service.hpp"

#include "core/json_out.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::pipeline {

namespace json = boost::json;
using storage::record_kind;

namespace {

change config_change(change_kind kind, const uuid& mandate, const uuid& item, std::optional<uuid> device,
                     std::string body) {
  change c;
  c.kind = kind;
  c.mandate = mandate;
  c.device = device;
  c.item = item;
  c.body = std::move(body);
  return c;
}

}  // namespace

storage::result<void> driver_config_service::save_instance(const uuid& mandate, const json::object& doc) {
  auto batch = records_.batch();
  records_.put(batch, {record_kind::driver_instance, mandate, id_field(doc, "id")}, doc);
  if (auto done = records_.commit(batch); !done) return done;
  feed_.publish(config_change(change_kind::driver_instance_changed, mandate, id_field(doc, "id"), std::nullopt,
                              fl::to_json(doc)));
  return {};
}

storage::result<void> driver_config_service::remove_instance(const uuid& mandate, const uuid& id) {
  auto batch = records_.batch();
  records_.erase(batch, {record_kind::driver_instance, mandate, id});
  if (auto done = records_.commit(batch); !done) return done;
  feed_.publish(config_change(change_kind::driver_instance_changed, mandate, id, std::nullopt, {}));
  return {};
}

storage::result<void> driver_config_service::save_interface(const uuid& mandate, const json::object& doc) {
  const uuid device = id_field(doc, "device_id");
  auto batch = records_.batch();
  records_.put(batch, {record_kind::interface, mandate, id_field(doc, "id"), device}, doc);
  if (auto done = records_.commit(batch); !done) return done;
  feed_.publish(config_change(change_kind::interface_changed, mandate, id_field(doc, "id"), device, fl::to_json(doc)));
  return {};
}

storage::result<void> driver_config_service::remove_interface(const uuid& mandate, const json::object& doc) {
  const uuid device = id_field(doc, "device_id");
  auto batch = records_.batch();
  records_.erase(batch, {record_kind::interface, mandate, id_field(doc, "id"), device});
  if (auto done = records_.commit(batch); !done) return done;
  feed_.publish(config_change(change_kind::interface_changed, mandate, id_field(doc, "id"), device, {}));
  return {};
}

}  // namespace fl::pipeline
