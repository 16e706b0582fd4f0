#pragma once
// What the services publish: the fields every change carries, taken from stored documents, and the
// pushed views (JSON bodies) that are not simply a stored document. The websocket replay builds the
// same views for stored packets, so they live here and not in a handler.
#include <boost/json/object.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/ids.hpp"
#include "pipeline/change_feed.hpp"

namespace fl::pipeline {

// A device's folders (its `tag_ids`: the folders it is directly in).
[[nodiscard]] std::vector<uuid> folders_of(const boost::json::object& device);

// A change of `device` (a stored device document): mandate, device and folders filled in.
[[nodiscard]] change device_change(change_kind kind, const uuid& mandate, const boost::json::object& device,
                                   const uuid& item, std::string body = {});

// An interface as REST shows it (`name` and `deleted_at` always present).
[[nodiscard]] boost::json::object interface_view(boost::json::object interface_doc);

// The body of `packet_added`: the packet as REST lists it plus `"interface"`, the interface it came
// through as REST shows interfaces, or null when it names none (or the interface is gone).
[[nodiscard]] std::string pushed_packet(const boost::json::object& packet,
                                        const std::optional<boost::json::object>& interface_doc);
// The same from the packet's JSON text as stored (`packet_text`, written from `packet`): the key is
// appended to the text instead of copying and writing the whole document again.
[[nodiscard]] std::string pushed_packet(std::string_view packet_text, const boost::json::object& packet,
                                        const std::optional<boost::json::object>& interface_doc);

}  // namespace fl::pipeline
