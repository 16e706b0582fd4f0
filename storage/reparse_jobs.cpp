#include "storage/reparse_jobs.hpp"

#include "core/json_out.hpp"
#include "storage/key_codec.hpp"
#include "storage/key_layout.hpp"
#include "storage/ordered_scan.hpp"

namespace fl::storage {

namespace {

constexpr std::uint8_t reparse_kind = byte_of(job_kind::reparse);
constexpr std::size_t key_size = 16 + 1 + 16;

std::string job_key(const device_ref& d) {
  return key_builder{}.id(d.mandate).byte(reparse_kind).id(d.device).take();
}

}  // namespace

result<std::optional<boost::json::object>> reparse_jobs::get(const device_ref& device) const {
  auto raw = db_.get(family::jobs, job_key(device));
  if (!raw) return raw.error();
  if (!*raw) return std::optional<boost::json::object>{};
  return decode_document({}, **raw);
}

void reparse_jobs::put(write_batch& batch, const device_ref& device, const boost::json::object& job) const {
  batch.put(family::jobs, job_key(device), to_json(job));
}

void reparse_jobs::erase(write_batch& batch, const device_ref& device) const {
  batch.erase(family::jobs, job_key(device));
}

result<std::vector<std::pair<device_ref, boost::json::object>>> reparse_jobs::all() const {
  std::vector<std::pair<device_ref, boost::json::object>> out;
  std::optional<error> failed;
  auto scanned = db_.scan(family::jobs, {}, [&](std::string_view key, std::string_view value) {
    if (key.size() != key_size || static_cast<std::uint8_t>(key[16]) != reparse_kind) return true;
    auto doc = decode_document(key, value);
    if (!doc) {
      failed = doc.error();
      return false;
    }
    out.emplace_back(device_ref{id_at(key, 0), id_at(key, 17)}, std::move(**doc));
    return true;
  });
  if (!scanned) return scanned.error();
  if (failed) return *failed;
  return out;
}

}  // namespace fl::storage
