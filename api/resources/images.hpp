#pragma once
// Device images (the rules are pipeline::image_service's; these handlers translate):
//   GET    /api/v1/devices/:device/images            -> list envelope of images, paginated
//   POST   /api/v1/devices/:device/images            -> multipart/form-data, field `file`; 201 with the image
//   DELETE /api/v1/images/:image                     -> the envelope with the deleted image
//   GET    /api/v1/images/:image/original|display|thumbnail -> the file (the image's `urls`)
#include "api/context.hpp"

namespace fl::api {

http_response list_images(request_context& ctx);
http_response upload_image(request_context& ctx);
http_response delete_image(request_context& ctx);
http_response image_file_response(request_context& ctx);

}  // namespace fl::api
