#include "pipeline/mandate_service.hpp"

#include "core/crypto.hpp"

namespace fl::pipeline {

namespace json = boost::json;
using storage::record_kind;

void erase_key_index(const storage::records& records, storage::write_batch& batch, const json::object& key_doc) {
  if (const auto* hash = key_doc.if_contains("hash"); hash && hash->is_string()) {
    if (auto raw = from_hex(hash->get_string())) records.erase_key_hash(batch, *raw);
  }
}

service_result<json::object, mandate_errc> mandate_service::remove(const uuid& mandate) {
  auto writer = records_.writer();
  auto doc = records_.get({record_kind::mandate, uuid::nil(), mandate});
  if (!doc) return service_error{mandate_errc::storage, doc.error()};
  if (!*doc) return mandate_errc::no_mandate;
  auto keys = records_.list(record_kind::api_key, mandate);
  if (!keys) return service_error{mandate_errc::storage, keys.error()};
  auto batch = records_.batch();
  // The key-hash index is global: drop each of the mandate's keys from it, then everything it owns.
  for (const auto& key : *keys) erase_key_index(records_, batch, key);
  records_.erase_mandate_data(batch, mandate);
  records_.erase(batch, {record_kind::mandate, uuid::nil(), mandate});
  records_.erase_slug(batch, record_kind::mandate, uuid::nil(), (*doc)->at("slug").as_string());
  if (auto done = records_.commit(batch); !done) return service_error{mandate_errc::storage, done.error()};
  images_.remove_mandate_files(mandate);  // only once the records are durably gone
  change deleted;
  deleted.kind = change_kind::mandate_deleted;
  deleted.mandate = mandate;
  deleted.item = mandate;
  feed_.publish(std::move(deleted));
  return std::move(**doc);
}

}  // namespace fl::pipeline
