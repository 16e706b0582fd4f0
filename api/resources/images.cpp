#include "api/resources/images.hpp"

#include "api/http/multipart.hpp"
#include "api/http/pagination.hpp"
#include "api/resources/devices.hpp"
#include "pipeline/doc_fields.hpp"

namespace fl::api {

namespace json = boost::json;
using pipeline::image_errc;
using pipeline::text_field;

namespace {

api_error image_failure(const pipeline::image_failure& f, const pipeline::image_config& config) {
  switch (f.code) {
    case image_errc::not_configured:
      return {503,
              "image storage is not configured; start the server with --image-dir DIR (or image_dir in the config "
              "file)"};
    case image_errc::no_device:
      return not_found("device");
    case image_errc::no_image:
      return not_found("image");
    case image_errc::empty:
      return invalid("file", "is empty");
    case image_errc::too_large:
      return {413, "the file exceeds " + std::to_string(config.max_bytes) + " bytes"};
    case image_errc::too_many:
      return conflict("the device holds " + std::to_string(config.max_per_device) +
                      " images, the most allowed; delete some first");
    case image_errc::unsupported_type:
      return {415, f.detail};
    case image_errc::too_many_pixels:
    case image_errc::undecodable:
      return invalid("file", f.detail);
    case image_errc::busy:
      return {503, "image processing is busy; retry shortly"};
    case image_errc::io:
      return {500, "image storage failed"};
    case image_errc::storage:
      return storage_failure(f.cause);
  }
  return {500, "internal error"};
}

json::object image_view(const json::object& doc) {
  const std::string base = "/api/v1/images/" + text_field(doc, "id") + "/";
  json::object view;
  for (const char* key : {"id", "device_id", "original_name"}) view[key] = text_field(doc, key);
  view["urls"] = json::object{
      {"display_image", base + "display"}, {"original_image", base + "original"}, {"thumbnail", base + "thumbnail"}};
  for (const char* key : {"inserted_at", "updated_at"}) view[key] = text_field(doc, key);
  return view;
}

// A Content-Disposition for the original: a download, named as uploaded (RFC 6266: an ASCII
// fallback with nothing that could end the quoted string, and the UTF-8 name percent-encoded).
std::string download_disposition(const std::string& name) {
  std::string ascii;
  for (char c : name) {
    const auto u = static_cast<unsigned char>(c);
    ascii += u >= 0x20 && u < 0x7F && c != '"' && c != '\\' && c != ';' ? c : '_';
  }
  return "attachment; filename=\"" + ascii + "\"; filename*=UTF-8''" + url_encode(name);
}

}  // namespace

http_response list_images(request_context& ctx) {
  auto page_req = parse_page_request(ctx.query, {"inserted_at", "updated_at"}, "inserted_at");
  if (!page_req) return error_response(page_req.error());
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  auto docs = ctx.app.images.list(ctx.mandate(), *uuid::parse(device->at("id").as_string()));
  if (!docs) return error_response(image_failure(docs.error(), ctx.app.images.config()));
  auto page = paginate(std::move(*docs), *page_req);
  if (!page) return error_response(page.error());
  json::array body;
  for (const auto& item : page->items) body.emplace_back(image_view(item.as_object()));
  return list_response(body, page->retrieve_after_id);
}

http_response upload_image(request_context& ctx) {
  const auto& config = ctx.app.images.config();
  auto device = find_device(ctx, ctx.param("device"));
  if (!device) return error_response(device.error());
  if (!ctx.app.images.configured()) return error_response(image_failure({image_errc::not_configured}, config));

  const auto parsed = multipart::parse(ctx.request.content_type, ctx.request.body);
  if (parsed.error) {
    const int status = *parsed.error == multipart::errc::not_multipart ? 415 : 400;
    return error_response({status, std::string(multipart::message(*parsed.error))});
  }
  const multipart::part* file = nullptr;
  for (const auto& part : parsed.parts) {
    if (part.name != "file") continue;
    if (file) return error_response(invalid("file", "must be sent once"));
    file = &part;
  }
  if (!file) return error_response(invalid("file", "is required: a multipart/form-data field named file"));

  pipeline::image_upload request{ctx.mandate(), *uuid::parse(device->at("id").as_string()), file->body,
                                 multipart::sanitize_filename(file->filename.value_or("upload"))};
  auto doc = ctx.app.images.upload(request);
  if (!doc) return error_response(image_failure(doc.error(), config));
  return single_response(image_view(*doc), 201);
}

http_response delete_image(request_context& ctx) {
  auto id = uuid::parse(ctx.param("image"));
  if (!id) return error_response(not_found("image"));
  if (ctx.caller.access == role::member) {  // deleting a device's image changes the device
    auto known = ctx.app.images.find(ctx.mandate(), *id);
    if (!known) return error_response(image_failure(known.error(), ctx.app.images.config()));
    if (auto refused = refuse_unless_device(ctx, pipeline::id_field(*known, "device_id"), pipeline::operation::update))
      return error_response(*refused);
  }
  auto doc = ctx.app.images.remove(ctx.mandate(), *id);
  if (!doc) return error_response(image_failure(doc.error(), ctx.app.images.config()));
  return single_response(image_view(*doc));
}

http_response image_file_response(request_context& ctx) {
  auto id = uuid::parse(ctx.param("image"));
  auto version = pipeline::parse_version(ctx.param("version"));
  if (!id || !version) return error_response(not_found("image"));
  if (ctx.caller.access == role::member) {
    auto known = ctx.app.images.find(ctx.mandate(), *id);
    if (!known) return error_response(image_failure(known.error(), ctx.app.images.config()));
    if (auto refused = refuse_unless_device(ctx, pipeline::id_field(*known, "device_id"), pipeline::operation::read))
      return error_response(*refused);
  }
  auto file = ctx.app.images.read(ctx.mandate(), *id, *version);
  if (!file) return error_response(image_failure(file.error(), ctx.app.images.config()));
  http_response answer;
  answer.body = std::move(file->bytes);
  answer.content_type = std::move(file->content_type);
  answer.headers.emplace_back("x-content-type-options", "nosniff");
  // Even if a browser were made to render it as a document, it could run nothing.
  answer.headers.emplace_back("content-security-policy", "default-src 'none'; sandbox");
  answer.headers.emplace_back("cache-control", "private, max-age=3600");
  answer.headers.emplace_back("content-disposition", *version == pipeline::image_version::original
                                                         ? download_disposition(file->original_name)
                                                         : std::string("inline"));
  return answer;
}

}  // namespace fl::api
