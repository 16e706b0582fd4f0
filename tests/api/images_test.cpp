// Device images through the router: upload (multipart), list, the three files, delete and the
// cascades, per-mandate separation, and every hostile upload its own test. Images are made in the
// test with libvips itself; the decompression bomb is a hand-made PNG header.
#include <vips/vips.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "api/http/client.hpp"
#include "api/http/server.hpp"

#include "api/resources/images.hpp"
#include "api/routes.hpp"
#include "pipeline/image_codec.hpp"
#include "support/api_fixture.hpp"
#include "support/raw_connection.hpp"

namespace fl::testing {
namespace {

namespace fs = std::filesystem;

enum class kind : std::uint8_t { png, png_alpha, jpeg };

std::string make_image(int width, int height, kind k = kind::png) {
  pipeline::init_image_codec();
  VipsImage* black = nullptr;
  EXPECT_EQ(vips_black(&black, width, height, "bands", k == kind::png_alpha ? 4 : 3, nullptr), 0);
  VipsImage* grey = nullptr;  // something other than zeros, so the versions differ in size
  EXPECT_EQ(vips_linear1(black, &grey, 1.0, 120.0, "uchar", TRUE, nullptr), 0);
  void* buffer = nullptr;
  std::size_t length = 0;
  const int saved = k == kind::jpeg ? vips_jpegsave_buffer(grey, &buffer, &length, nullptr)
                                    : vips_pngsave_buffer(grey, &buffer, &length, nullptr);
  EXPECT_EQ(saved, 0);
  std::string out(static_cast<const char*>(buffer), length);
  g_free(buffer);
  g_object_unref(grey);
  g_object_unref(black);
  return out;
}

// Width and height of an image file, read with libvips.
std::pair<int, int> size_of(const std::string& bytes) {
  VipsImage* image = vips_image_new_from_buffer(bytes.data(), bytes.size(), "", nullptr);
  if (!image) return {0, 0};
  std::pair<int, int> wh{vips_image_get_width(image), vips_image_get_height(image)};
  g_object_unref(image);
  return wh;
}

std::uint32_t crc32(std::string_view bytes) {
  std::uint32_t crc = 0xFFFFFFFFu;
  for (unsigned char b : bytes) {
    crc ^= b;
    for (int i = 0; i < 8; ++i) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
  }
  return ~crc;
}

std::string be32(std::uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8), static_cast<char>(v)};
}

std::string png_chunk(std::string_view type, std::string_view data) {
  std::string typed = std::string(type) + std::string(data);
  return be32(static_cast<std::uint32_t>(data.size())) + typed + be32(crc32(typed));
}

// A 70-byte PNG whose header announces width x height RGB pixels: a decompression bomb's header.
std::string png_claiming(std::uint32_t width, std::uint32_t height, char bit_depth = 8) {
  const std::string ihdr = be32(width) + be32(height) + bit_depth + std::string("\x02\x00\x00\x00", 4);
  const std::string idat("\x78\x9c\x63\x00\x00\x00\x01\x00\x01", 9);  // zlib of one zero byte
  return std::string("\x89PNG\r\n\x1a\n", 8) + png_chunk("IHDR", ihdr) + png_chunk("IDAT", idat) +
         png_chunk("IEND", "");
}

struct form_part {
  std::string name = "file";
  std::optional<std::string> filename = "photo.png";
  std::string content_type = "image/png";
  std::string bytes;
};

constexpr std::string_view boundary = "----fieldline-test-boundary";

std::string form(const std::vector<form_part>& parts) {
  std::string body;
  for (const auto& p : parts) {
    body += "--" + std::string(boundary) + "\r\nContent-Disposition: form-data; name=\"" + p.name + "\"";
    if (p.filename) body += "; filename=\"" + *p.filename + "\"";
    body += "\r\n";
    if (!p.content_type.empty()) body += "Content-Type: " + p.content_type + "\r\n";
    body += "\r\n" + p.bytes + "\r\n";
  }
  return body + "--" + std::string(boundary) + "--\r\n";
}

class images : public api_fixture {
 protected:
  void SetUp() override {
    image_config_.dir = image_dir_.path();
    open();
    mandate_ = make_mandate("Images");
    key_ = make_key(mandate_, "admin");
    device_ = make_device(key_, "camera", make_folder(key_, "Site"));
  }

  api::http_request upload_request(const std::string& device, const std::string& body,
                                   std::string content_type = "multipart/form-data; boundary=" +
                                                              std::string(boundary)) const {
    api::http_request req;
    req.method = "POST";
    req.path = "/api/v1/devices/" + device + "/images";
    req.api_key_header = key_;
    req.content_type = std::move(content_type);
    req.body = body;
    return req;
  }
  reply upload_raw(const std::string& body, const std::string& content_type) const {
    return send(upload_request(device_, body, content_type));
  }
  reply upload(const std::string& bytes, const std::string& filename = "photo.png") const {
    return send(upload_request(device_, form({{.filename = filename, .bytes = bytes}})));
  }
  // Fetches one of an image's URLs (as listed in `urls`).
  reply fetch(const reply& uploaded, const char* url_key, const std::string& key) const {
    return call("GET", std::string(uploaded.data().at("urls").at(url_key).as_string()), key);
  }
  std::size_t files_of(const std::string& mandate) const {
    const fs::path dir = image_dir_.path() / mandate;
    if (!fs::exists(dir)) return 0;
    return static_cast<std::size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
  }

  temp_dir image_dir_;
  std::string mandate_, key_, device_;
};

TEST_F(images, an_uploaded_png_answers_201_with_the_image_and_its_three_urls) {
  auto r = upload(make_image(64, 48), "sensor photo.png");
  ASSERT_EQ(r.status, 201) << r.text;
  const auto& image = r.data().as_object();
  EXPECT_EQ(image.at("device_id"), device_);
  EXPECT_EQ(image.at("original_name"), "sensor photo.png");
  const std::string base = "/api/v1/images/" + r.id() + "/";
  EXPECT_EQ(image.at("urls").at("original_image"), base + "original");
  EXPECT_EQ(image.at("urls").at("display_image"), base + "display");
  EXPECT_EQ(image.at("urls").at("thumbnail"), base + "thumbnail");
  EXPECT_TRUE(image.at("inserted_at").is_string());
  EXPECT_TRUE(image.at("updated_at").is_string());
  EXPECT_EQ(files_of(mandate_), 3u);
}

TEST_F(images, the_list_shows_the_devices_images_and_pages) {
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) ids.push_back(upload(make_image(16, 16)).id());
  auto first = call("GET", "/api/v1/devices/" + device_ + "/images?limit=2&sort_direction=asc", key_);
  ASSERT_EQ(first.status, 200) << first.text;
  ASSERT_EQ(first.data().as_array().size(), 2u);
  EXPECT_EQ(first.data().as_array()[0].at("id"), ids[0]);
  ASSERT_TRUE(first.has_next());
  auto rest = call("GET",
                   "/api/v1/devices/" + device_ + "/images?limit=2&sort_direction=asc&retrieve_after=" +
                       std::string(first.envelope().at("retrieve_after_id").as_string()),
                   key_);
  ASSERT_EQ(rest.data().as_array().size(), 1u);
  EXPECT_EQ(rest.data().as_array()[0].at("id"), ids[2]);
  EXPECT_FALSE(rest.has_next());
  // By slug too, and another device's list is empty.
  EXPECT_EQ(call("GET", "/api/v1/devices/camera/images", key_).data().as_array().size(), 3u);
  const auto other = make_device(key_, "other", make_folder(key_, "Other"));
  EXPECT_EQ(call("GET", "/api/v1/devices/" + other + "/images", key_).data().as_array().size(), 0u);
}

TEST_F(images, the_original_url_serves_the_uploaded_bytes_with_their_type) {
  const auto png = make_image(40, 30);
  auto up = upload(png, "plan.png");
  auto original = fetch(up, "original_image", key_);
  ASSERT_EQ(original.status, 200) << original.text;
  EXPECT_EQ(original.content_type, "image/png");
  EXPECT_EQ(original.text, png);
  EXPECT_EQ(original.header("x-content-type-options"), "nosniff");
  EXPECT_TRUE(original.header("content-disposition").starts_with("attachment; filename=\"plan.png\""))
      << original.header("content-disposition");
}

TEST_F(images, the_display_version_is_a_jpeg_bounded_to_1920_pixels) {
  auto up = upload(make_image(2400, 1200));
  ASSERT_EQ(up.status, 201) << up.text;
  auto display = fetch(up, "display_image", key_);
  ASSERT_EQ(display.status, 200) << display.text;
  EXPECT_EQ(display.content_type, "image/jpeg");
  EXPECT_EQ(display.header("x-content-type-options"), "nosniff");
  EXPECT_EQ(size_of(display.text), std::make_pair(1920, 960));
}

TEST_F(images, the_thumbnail_is_smaller_than_the_display_version) {
  auto up = upload(make_image(800, 600));
  auto display = fetch(up, "display_image", key_);
  auto thumbnail = fetch(up, "thumbnail", key_);
  ASSERT_EQ(thumbnail.status, 200) << thumbnail.text;
  EXPECT_EQ(thumbnail.content_type, "image/jpeg");
  EXPECT_EQ(size_of(display.text), std::make_pair(800, 600));  // never enlarged, never shrunk below the bound
  EXPECT_EQ(size_of(thumbnail.text), std::make_pair(256, 192));
  EXPECT_LT(thumbnail.text.size(), display.text.size());
}

TEST_F(images, a_jpeg_keeps_its_type_for_the_original) {
  auto up = upload(make_image(32, 32, kind::jpeg), "photo.jpg");
  ASSERT_EQ(up.status, 201) << up.text;
  EXPECT_EQ(fetch(up, "original_image", key_).content_type, "image/jpeg");
}

TEST_F(images, a_transparent_png_gets_jpeg_versions) {
  auto up = upload(make_image(32, 32, kind::png_alpha));
  ASSERT_EQ(up.status, 201) << up.text;
  auto display = fetch(up, "display_image", key_);
  EXPECT_EQ(display.content_type, "image/jpeg");
  EXPECT_EQ(size_of(display.text), std::make_pair(32, 32));
}

TEST_F(images, the_urls_work_with_the_auth_query_parameter_as_in_an_img_src) {
  auto up = upload(make_image(16, 16));
  const std::string url(up.data().at("urls").at("thumbnail").as_string());
  auto r = call("GET", url, key_, std::string(), false);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.content_type, "image/jpeg");
  EXPECT_EQ(call("GET", url, "wrong-key", std::string(), false).status, 401);
}

TEST_F(images, an_unknown_version_or_image_is_404) {
  auto up = upload(make_image(16, 16));
  EXPECT_EQ(call("GET", "/api/v1/images/" + up.id() + "/svg", key_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/images/" + uuid::random().str() + "/original", key_).status, 404);
  EXPECT_EQ(call("GET", "/api/v1/images/not-an-id/original", key_).status, 404);
  EXPECT_EQ(call("DELETE", "/api/v1/images/" + uuid::random().str(), key_).status, 404);
}

TEST_F(images, deleting_an_image_removes_its_record_and_its_three_files) {
  auto up = upload(make_image(16, 16));
  auto kept = upload(make_image(16, 16));
  ASSERT_EQ(files_of(mandate_), 6u);
  auto r = call("DELETE", "/api/v1/images/" + up.id(), key_);
  ASSERT_EQ(r.status, 200) << r.text;
  EXPECT_EQ(r.id(), up.id());
  EXPECT_EQ(files_of(mandate_), 3u);
  for (auto v :
       {pipeline::image_version::original, pipeline::image_version::display, pipeline::image_version::thumbnail}) {
    EXPECT_FALSE(fs::exists(app_->images.file_path(*uuid::parse(mandate_), *uuid::parse(up.id()), v)));
    EXPECT_TRUE(fs::exists(app_->images.file_path(*uuid::parse(mandate_), *uuid::parse(kept.id()), v)));
  }
  EXPECT_EQ(fetch(up, "original_image", key_).status, 404);
  auto listed = call("GET", "/api/v1/devices/" + device_ + "/images", key_);
  ASSERT_EQ(listed.data().as_array().size(), 1u);
  EXPECT_EQ(listed.data().as_array()[0].at("id"), kept.id());
}

TEST_F(images, deleting_the_device_removes_its_images_files) {
  upload(make_image(16, 16));
  upload(make_image(16, 16));
  const auto other = make_device(key_, "other", make_folder(key_, "Other"));
  ASSERT_EQ(send(upload_request(other, form({{.bytes = make_image(16, 16)}}))).status, 201);
  ASSERT_EQ(files_of(mandate_), 9u);
  ASSERT_EQ(call("DELETE", "/api/v1/devices/" + device_, key_).status, 200);
  EXPECT_EQ(files_of(mandate_), 3u);  // the other device's image stays
  EXPECT_EQ(call("GET", "/api/v1/devices/" + other + "/images", key_).data().as_array().size(), 1u);
}

TEST_F(images, deleting_the_mandate_removes_its_image_directory) {
  upload(make_image(16, 16));
  ASSERT_TRUE(fs::exists(image_dir_.path() / mandate_));
  ASSERT_EQ(call("DELETE", "/admin/v1/mandates/" + mandate_, superadmin_).status, 200);
  EXPECT_FALSE(fs::exists(image_dir_.path() / mandate_));
}

TEST_F(images, another_mandates_key_gets_404_on_every_image_route) {
  auto up = upload(make_image(16, 16));
  const auto other_key = make_key(make_mandate("Intruder"), "admin");
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_ + "/images", other_key).status, 404);
  auto foreign_upload = upload_request(device_, form({{.bytes = make_image(16, 16)}}));
  foreign_upload.api_key_header = other_key;
  EXPECT_EQ(send(foreign_upload).status, 404);
  for (const char* url : {"original_image", "display_image", "thumbnail"}) {
    auto r = fetch(up, url, other_key);
    EXPECT_EQ(r.status, 404) << url;
    EXPECT_EQ(r.text.find(up.id()), std::string::npos);
  }
  EXPECT_EQ(call("DELETE", "/api/v1/images/" + up.id(), other_key).status, 404);
  EXPECT_EQ(files_of(mandate_), 3u);
  EXPECT_EQ(fetch(up, "original_image", key_).status, 200);
}

TEST_F(images, a_read_only_key_may_list_and_fetch_but_not_upload_or_delete) {
  auto up = upload(make_image(16, 16));
  const auto reader = make_key(mandate_, "read_only");
  EXPECT_EQ(call("GET", "/api/v1/devices/" + device_ + "/images", reader).status, 200);
  EXPECT_EQ(fetch(up, "thumbnail", reader).status, 200);
  auto req = upload_request(device_, form({{.bytes = make_image(16, 16)}}));
  req.api_key_header = reader;
  EXPECT_EQ(send(req).status, 403);
  EXPECT_EQ(call("DELETE", "/api/v1/images/" + up.id(), reader).status, 403);
}

TEST_F(images, a_member_reaches_only_images_of_devices_its_rules_allow) {
  auto up = upload(make_image(16, 16));
  const auto outsider = make_member_key(mandate_, {make_group(mandate_, {rule("device", "^other", true, true)})});
  EXPECT_EQ(fetch(up, "original_image", outsider).status, 403);
  EXPECT_EQ(call("DELETE", "/api/v1/images/" + up.id(), outsider).status, 403);
  // A reader of the camera fetches it but may not delete it (deleting changes the device) ...
  const auto reader = make_member_key(mandate_, {make_group(mandate_, {rule("device", "^camera$", true)})});
  EXPECT_EQ(fetch(up, "thumbnail", reader).status, 200);
  EXPECT_EQ(call("DELETE", "/api/v1/images/" + up.id(), reader).status, 403);
  EXPECT_EQ(files_of(mandate_), 3u);
  // ... and one that may change it may.
  const auto editor = make_member_key(mandate_, {make_group(mandate_, {rule("device", "^camera$", true, true)})});
  EXPECT_EQ(call("DELETE", "/api/v1/images/" + up.id(), editor).status, 200);
}

TEST_F(images, an_upload_to_an_unknown_device_is_404) {
  EXPECT_EQ(send(upload_request(uuid::random().str(), form({{.bytes = make_image(16, 16)}}))).status, 404);
}

TEST_F(images, the_original_name_is_sanitized) {
  auto r = upload(make_image(16, 16), "../../etc/pa\x01sswd.png");
  ASSERT_EQ(r.status, 201) << r.text;
  EXPECT_EQ(r.data().at("original_name"), "passwd.png");
  auto unnamed = send(upload_request(device_, form({{.filename = std::nullopt, .bytes = make_image(16, 16)}})));
  EXPECT_EQ(unnamed.data().at("original_name"), "upload");
}

TEST_F(images, uploads_and_file_reads_run_on_the_write_pool_and_only_uploads_take_large_bodies) {
  auto up = upload(make_image(16, 16));
  EXPECT_FALSE(router_->handle_unless_blocking(upload_request(device_, form({{.bytes = make_image(16, 16)}}))));
  api::http_request file;
  file.method = "GET";
  file.path = "/api/v1/images/" + up.id() + "/original";
  file.api_key_header = key_;
  EXPECT_FALSE(router_->handle_unless_blocking(file));
  EXPECT_TRUE(router_->accepts_upload("POST", "/api/v1/devices/" + device_ + "/images?x=1"));
  EXPECT_FALSE(router_->accepts_upload("GET", "/api/v1/devices/" + device_ + "/images"));
  EXPECT_FALSE(router_->accepts_upload("POST", "/api/v1/devices"));
  EXPECT_FALSE(router_->accepts_upload("POST", "/api/v1/devices/" + device_ + "/packets"));
}

TEST_F(images, a_crash_between_files_and_record_leaves_orphans_that_the_next_start_removes) {
  auto up = upload(make_image(16, 16));
  const fs::path dir = image_dir_.path() / mandate_;
  std::ofstream(dir / (".tmp-" + uuid::random().str() + "-original")) << "half";
  std::ofstream(dir / (uuid::random().str() + "-original")) << "no record";
  const fs::path gone_mandate = image_dir_.path() / uuid::random().str();
  fs::create_directory(gone_mandate);
  std::ofstream(gone_mandate / (uuid::random().str() + "-original")) << "deleted mandate";
  ASSERT_EQ(files_of(mandate_), 5u);
  EXPECT_EQ(app_->images.prepare_directory(), 3u);
  EXPECT_EQ(files_of(mandate_), 3u);
  EXPECT_FALSE(fs::exists(gone_mandate));
  EXPECT_EQ(fetch(up, "display_image", key_).status, 200);
}

// --- hostile uploads, each its own test ---

TEST_F(images, a_file_over_the_size_limit_is_413) {
  image_config_.max_bytes = 2048;
  open();
  key_ = make_key(mandate_, "admin");
  auto r = upload(make_image(200, 200) + std::string(4096, '\0'));
  EXPECT_EQ(r.status, 413) << r.text;
  EXPECT_EQ(files_of(mandate_), 0u);
}

TEST_F(images, an_svg_named_png_is_refused_as_unsupported) {
  auto r = upload(R"(<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><script>alert(1)</script></svg>)",
                  "logo.png");
  EXPECT_EQ(r.status, 415) << r.text;
  EXPECT_FALSE(r.error().empty());
  EXPECT_EQ(files_of(mandate_), 0u);
}

TEST_F(images, an_html_file_named_png_is_refused_as_unsupported) {
  auto r = upload("<!DOCTYPE html><html><body><script>alert(document.cookie)</script></body></html>", "x.png");
  EXPECT_EQ(r.status, 415) << r.text;
}

TEST_F(images, a_text_file_named_png_is_refused_as_unsupported) {
  auto r = upload("just some notes, not an image at all\n", "notes.png");
  EXPECT_EQ(r.status, 415) << r.text;
}

TEST_F(images, a_pdf_is_refused_as_unsupported) {
  auto r = upload("%PDF-1.4\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n", "scan.png");
  EXPECT_EQ(r.status, 415) << r.text;
}

TEST_F(images, a_png_header_claiming_100000_by_100000_pixels_is_refused_before_decoding) {
  const auto bomb = png_claiming(100000, 100000);
  ASSERT_LT(bomb.size(), 100u);
  auto r = upload(bomb, "bomb.png");
  ASSERT_EQ(r.status, 422) << r.text;
  EXPECT_NE(r.error().find("100000x100000"), std::string::npos) << r.text;
  EXPECT_EQ(files_of(mandate_), 0u);
}

TEST_F(images, a_png_over_the_pixel_budget_within_the_side_limit_is_refused) {
  auto r = upload(png_claiming(8000, 8000), "big.png");  // 64 Mpixel
  EXPECT_EQ(r.status, 422) << r.text;
}

TEST_F(images, a_truncated_png_is_refused_as_undecodable) {
  const auto whole = make_image(256, 256);
  auto r = upload(whole.substr(0, whole.size() / 2), "cut.png");
  EXPECT_EQ(r.status, 422) << r.text;
  EXPECT_EQ(files_of(mandate_), 0u);
}

TEST_F(images, a_truncated_jpeg_is_refused_as_undecodable) {
  const auto whole = make_image(256, 256, kind::jpeg);
  auto r = upload(whole.substr(0, whole.size() / 2), "cut.jpg");
  EXPECT_EQ(r.status, 422) << r.text;
  EXPECT_EQ(files_of(mandate_), 0u);
}

TEST_F(images, a_png_with_an_impossible_header_is_refused_as_undecodable) {
  auto r = upload(png_claiming(16, 16, 3));  // RGB with 3 bits per sample does not exist
  EXPECT_EQ(r.status, 422) << r.text;
  EXPECT_EQ(files_of(mandate_), 0u);
}

TEST_F(images, an_empty_file_is_422) {
  auto r = upload("");
  EXPECT_EQ(r.status, 422) << r.text;
}

// --- malformed requests, each its own test ---

TEST_F(images, a_json_body_is_415_not_multipart) {
  auto r = upload_raw(R"({"file":"x"})", "application/json");
  EXPECT_EQ(r.status, 415) << r.text;
  EXPECT_NE(r.error().find("multipart/form-data"), std::string::npos);
}

TEST_F(images, a_multipart_type_without_a_boundary_is_400) {
  EXPECT_EQ(upload_raw(form({{.bytes = "x"}}), "multipart/form-data").status, 400);
}

TEST_F(images, a_boundary_longer_than_70_characters_is_400) {
  const std::string long_boundary(71, 'b');
  const std::string body = "--" + long_boundary + "\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n--" +
                           long_boundary + "--\r\n";
  EXPECT_EQ(upload_raw(body, "multipart/form-data; boundary=" + long_boundary).status, 400);
}

TEST_F(images, a_body_without_its_opening_boundary_is_400) {
  EXPECT_EQ(upload_raw("no boundary anywhere", "multipart/form-data; boundary=" + std::string(boundary)).status, 400);
}

TEST_F(images, a_body_without_its_closing_boundary_is_400) {
  std::string body = form({{.bytes = make_image(16, 16)}});
  body.resize(body.size() - 20);
  auto r = upload_raw(body, "multipart/form-data; boundary=" + std::string(boundary));
  EXPECT_EQ(r.status, 400) << r.text;
  EXPECT_EQ(files_of(mandate_), 0u);
}

TEST_F(images, a_part_without_content_disposition_is_400) {
  const std::string b(boundary);
  EXPECT_EQ(upload_raw("--" + b + "\r\nContent-Type: image/png\r\n\r\nx\r\n--" + b + "--",
                       "multipart/form-data; boundary=" + b)
                .status,
            400);
}

TEST_F(images, a_part_with_too_many_header_lines_is_400) {
  std::string headers;
  for (int i = 0; i < 20; ++i) headers += "X-Filler-" + std::to_string(i) + ": y\r\n";
  const std::string b(boundary);
  const std::string body =
      "--" + b + "\r\nContent-Disposition: form-data; name=\"file\"\r\n" + headers + "\r\nx\r\n--" + b + "--";
  EXPECT_EQ(upload_raw(body, "multipart/form-data; boundary=" + b).status, 400);
}

TEST_F(images, too_many_parts_are_400) {
  std::vector<form_part> parts(40, form_part{.name = "filler", .filename = std::nullopt, .bytes = "x"});
  EXPECT_EQ(send(upload_request(device_, form(parts))).status, 400);
}

TEST_F(images, a_form_without_a_file_field_is_422) {
  auto r = send(upload_request(device_, form({{.name = "photo", .bytes = make_image(16, 16)}})));
  ASSERT_EQ(r.status, 422) << r.text;
  EXPECT_TRUE(r.envelope().at("errors").as_object().contains("file"));
}

TEST_F(images, two_file_fields_are_422) {
  auto r = send(upload_request(device_, form({{.bytes = make_image(16, 16)}, {.bytes = make_image(16, 16)}})));
  EXPECT_EQ(r.status, 422) << r.text;
  EXPECT_EQ(files_of(mandate_), 0u);
}

// Over loopback: only the upload route may receive a body above max_body_bytes.
class images_over_http : public images {
 protected:
  void SetUp() override {
    images::SetUp();
    api::server_limits limits;
    limits.max_body_bytes = 4096;
    limits.max_upload_bytes = 512u << 10;
    server_ = std::make_unique<api::http_server>(*router_, limits);
    server_->listen("127.0.0.1", 0);
    thread_ = std::thread([this] { server_->run(false); });
  }
  void TearDown() override {
    server_->stop();
    thread_.join();
  }
  api::client_response post(const std::string& target, const std::string& body, const std::string& type) const {
    api::http_client client("127.0.0.1", server_->port());
    return client.request("POST", target, body, {{"x-api-key", key_}, {"content-type", type}});
  }
  std::unique_ptr<api::http_server> server_;
  std::thread thread_;
};

TEST_F(images_over_http, an_upload_larger_than_the_general_body_limit_is_accepted) {
  const auto png = make_image(300, 300) + std::string(100'000, '\0');  // trailing bytes after IEND are ignored
  ASSERT_GT(png.size(), 100'000u);
  auto r = post("/api/v1/devices/" + device_ + "/images", form({{.bytes = png}}),
                "multipart/form-data; boundary=" + std::string(boundary));
  EXPECT_EQ(r.status, 201) << r.body;
}

// Only the headers are sent: the answer comes from the announced Content-Length, before any body.
TEST_F(images_over_http, another_route_keeps_the_general_body_limit) {
  raw_connection c(server_->port());
  ASSERT_TRUE(c.send("POST /api/v1/devices HTTP/1.1\r\nHost: x\r\nx-api-key: " + key_ +
                     "\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"));
  auto r = c.read_response(std::chrono::seconds(10));
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body.find("4096"), std::string::npos) << r.body;
}

TEST_F(images_over_http, an_upload_body_over_the_upload_limit_is_413) {
  raw_connection c(server_->port());
  ASSERT_TRUE(c.send("POST /api/v1/devices/" + device_ + "/images HTTP/1.1\r\nHost: x\r\nx-api-key: " + key_ +
                     "\r\nContent-Type: multipart/form-data; boundary=b\r\nContent-Length: 600000\r\n\r\n"));
  auto r = c.read_response(std::chrono::seconds(10));
  EXPECT_EQ(r.status, 413);
  EXPECT_NE(r.body.find(std::to_string(512u << 10)), std::string::npos) << r.body;
}

class images_unconfigured : public api_fixture {};

TEST_F(images_unconfigured, uploads_are_refused_with_a_clear_error_and_lists_are_empty) {
  const auto key = make_key(make_mandate("No storage"), "admin");
  const auto device = make_device(key, "camera", make_folder(key, "Site"));
  api::http_request req;
  req.method = "POST";
  req.path = "/api/v1/devices/" + device + "/images";
  req.api_key_header = key;
  req.content_type = "multipart/form-data; boundary=" + std::string(boundary);
  req.body = form({{.bytes = make_image(16, 16)}});
  auto r = send(req);
  ASSERT_EQ(r.status, 503) << r.text;
  EXPECT_NE(r.error().find("--image-dir"), std::string::npos) << r.text;
  auto listed = call("GET", "/api/v1/devices/" + device + "/images", key);
  EXPECT_EQ(listed.status, 200);
  EXPECT_EQ(listed.data().as_array().size(), 0u);
}

}  // namespace
}  // namespace fl::testing
