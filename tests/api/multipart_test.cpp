// The multipart/form-data parser on its own: what browsers and clients send, and each malformed case.
#include "api/http/multipart.hpp"

#include <gtest/gtest.h>

namespace fl::testing {
namespace {

namespace mp = api::multipart;

constexpr std::string_view form_type = "multipart/form-data; boundary=XyZ";

TEST(multipart, a_browser_form_with_a_file_and_a_field) {
  const std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"note\"\r\n\r\nhello\r\n"
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a b.png\"\r\n"
      "Content-Type: image/png\r\n\r\n\x89PNG\r\n--not the end\r\n--XyZ--\r\n";
  auto r = mp::parse(form_type, body);
  ASSERT_FALSE(r.error) << mp::message(*r.error);
  ASSERT_EQ(r.parts.size(), 2u);
  EXPECT_EQ(r.parts[0].name, "note");
  EXPECT_EQ(r.parts[0].body, "hello");
  EXPECT_FALSE(r.parts[0].filename);
  EXPECT_EQ(r.parts[1].name, "file");
  EXPECT_EQ(r.parts[1].filename, "a b.png");
  EXPECT_EQ(r.parts[1].content_type, "image/png");
  EXPECT_EQ(r.parts[1].body, "\x89PNG\r\n--not the end");
}

TEST(multipart, a_quoted_boundary_a_preamble_padding_and_an_epilogue) {
  const std::string body =
      "preamble\r\n--a'b:c \t\r\ncontent-disposition: FORM-DATA; name=file\r\n\r\nx\r\n--a'b:c--\r\nepilogue";
  auto r = mp::parse("Multipart/Form-Data; charset=utf-8; boundary=\"a'b:c\"", body);
  ASSERT_FALSE(r.error) << mp::message(*r.error);
  ASSERT_EQ(r.parts.size(), 1u);
  EXPECT_EQ(r.parts[0].name, "file");
  EXPECT_EQ(r.parts[0].body, "x");
}

TEST(multipart, filename_star_in_utf8_wins_over_filename) {
  const std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"fallback.png\"; "
      "filename*=UTF-8''%C3%A4pfel.png\r\n\r\nx\r\n--XyZ--";
  auto r = mp::parse(form_type, body);
  ASSERT_FALSE(r.error);
  EXPECT_EQ(r.parts.at(0).filename, "\xC3\xA4pfel.png");
}

TEST(multipart, an_escaped_quote_in_a_filename) {
  const std::string body =
      "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\\\"b.png\"\r\n\r\nx\r\n--XyZ--";
  auto r = mp::parse(form_type, body);
  ASSERT_FALSE(r.error);
  EXPECT_EQ(r.parts.at(0).filename, "a\"b.png");
}

TEST(multipart, another_content_type_is_not_multipart) {
  EXPECT_EQ(mp::parse("application/json", "{}").error, mp::errc::not_multipart);
  EXPECT_EQ(mp::parse("", "").error, mp::errc::not_multipart);
  EXPECT_EQ(mp::parse("multipart/mixed; boundary=x", "").error, mp::errc::not_multipart);
}

TEST(multipart, a_missing_boundary_is_refused) {
  EXPECT_EQ(mp::parse("multipart/form-data", "--x--").error, mp::errc::bad_boundary);
  EXPECT_EQ(mp::parse("multipart/form-data; boundary=", "--x--").error, mp::errc::bad_boundary);
}

TEST(multipart, a_boundary_of_71_characters_is_refused_and_70_accepted) {
  const std::string seventy(70, 'b');
  EXPECT_FALSE(mp::boundary_of("multipart/form-data; boundary=" + seventy).error);
  EXPECT_EQ(mp::boundary_of("multipart/form-data; boundary=" + seventy + "b").error, mp::errc::bad_boundary);
}

TEST(multipart, a_boundary_with_forbidden_characters_is_refused) {
  EXPECT_EQ(mp::boundary_of("multipart/form-data; boundary=\"a\\\"b\"").error, mp::errc::bad_boundary);
  EXPECT_EQ(mp::boundary_of("multipart/form-data; boundary=\"ab \"").error, mp::errc::bad_boundary);
  EXPECT_EQ(mp::boundary_of("multipart/form-data; boundary=\"unclosed").error, mp::errc::bad_boundary);
}

TEST(multipart, a_body_that_never_opens_with_the_boundary_is_refused) {
  EXPECT_EQ(mp::parse(form_type, "just some bytes").error, mp::errc::no_first_boundary);
}

TEST(multipart, a_body_cut_before_the_closing_boundary_is_refused) {
  EXPECT_EQ(mp::parse(form_type, "--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nxx").error,
            mp::errc::unterminated);
  EXPECT_EQ(mp::parse(form_type, "--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n").error,
            mp::errc::unterminated);
  EXPECT_EQ(mp::parse(form_type, "--XyZ").error, mp::errc::unterminated);
}

TEST(multipart, a_boundary_followed_by_garbage_is_refused) {
  EXPECT_EQ(mp::parse(form_type, "--XyZgarbage\r\n").error, mp::errc::bad_delimiter);
}

TEST(multipart, bare_lf_line_ends_are_refused) {
  auto r = mp::parse(form_type, "--XyZ\nContent-Disposition: form-data; name=\"file\"\n\nx\n--XyZ--");
  EXPECT_TRUE(r.error);
}

TEST(multipart, a_part_without_content_disposition_is_refused) {
  EXPECT_EQ(mp::parse(form_type, "--XyZ\r\nContent-Type: image/png\r\n\r\nx\r\n--XyZ--").error,
            mp::errc::no_disposition);
  EXPECT_EQ(mp::parse(form_type, "--XyZ\r\nContent-Disposition: attachment; name=\"f\"\r\n\r\nx\r\n--XyZ--").error,
            mp::errc::no_disposition);
  EXPECT_EQ(mp::parse(form_type, "--XyZ\r\nContent-Disposition: form-data\r\n\r\nx\r\n--XyZ--").error,
            mp::errc::no_disposition);
}

TEST(multipart, a_header_line_without_a_colon_is_refused) {
  EXPECT_EQ(mp::parse(form_type, "--XyZ\r\nnot a header\r\n\r\nx\r\n--XyZ--").error, mp::errc::bad_header);
}

TEST(multipart, an_overlong_header_line_is_refused) {
  const std::string body = "--XyZ\r\nX-Long: " + std::string(2000, 'a') + "\r\n\r\nx\r\n--XyZ--";
  EXPECT_EQ(mp::parse(form_type, body).error, mp::errc::bad_header);
}

TEST(multipart, more_header_lines_than_the_bound_are_refused) {
  std::string body = "--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n";
  for (int i = 0; i < 9; ++i) body += "X-" + std::to_string(i) + ": y\r\n";
  body += "\r\nx\r\n--XyZ--";
  EXPECT_EQ(mp::parse(form_type, body).error, mp::errc::too_many_headers);
}

TEST(multipart, more_parts_than_the_bound_are_refused) {
  std::string body;
  for (int i = 0; i < 17; ++i) body += "--XyZ\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nx\r\n";
  body += "--XyZ--";
  EXPECT_EQ(mp::parse(form_type, body).error, mp::errc::too_many_parts);
}

TEST(multipart, an_unclosed_quoted_filename_is_refused) {
  EXPECT_EQ(
      mp::parse(form_type, "--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a\r\n\r\nx\r\n--XyZ--")
          .error,
      mp::errc::bad_header);
}

TEST(multipart_filename, keeps_only_the_last_path_component) {
  EXPECT_EQ(mp::sanitize_filename("../../etc/passwd"), "passwd");
  EXPECT_EQ(mp::sanitize_filename("C:\\Users\\me\\photo.jpg"), "photo.jpg");
}

TEST(multipart_filename, drops_control_characters_and_bidi_overrides) {
  EXPECT_EQ(mp::sanitize_filename("a\x01\x7f\tb\r\n.png"), "ab.png");
  EXPECT_EQ(mp::sanitize_filename("photo\xE2\x80\xAEgnp.exe"), "photognp.exe");
}

TEST(multipart_filename, replaces_invalid_utf8) {
  EXPECT_EQ(mp::sanitize_filename("a\xFF.png"), "a\xEF\xBF\xBD.png");
  EXPECT_EQ(mp::sanitize_filename("\xC3\xA4.png"), "\xC3\xA4.png");
}

TEST(multipart_filename, empty_or_only_dots_becomes_upload) {
  EXPECT_EQ(mp::sanitize_filename(""), "upload");
  EXPECT_EQ(mp::sanitize_filename(".."), "upload");
  EXPECT_EQ(mp::sanitize_filename("dir/"), "upload");
}

TEST(multipart_filename, a_long_name_is_cut_on_a_character_boundary_keeping_the_extension) {
  std::string name;
  for (int i = 0; i < 200; ++i) name += "\xC3\xA4";  // 400 bytes
  name += ".jpeg";
  const auto out = mp::sanitize_filename(name);
  EXPECT_LE(out.size(), mp::max_filename_bytes);
  EXPECT_TRUE(out.ends_with(".jpeg")) << out;
  EXPECT_EQ(out, mp::sanitize_filename(out));  // still valid UTF-8: nothing replaced
}

}  // namespace
}  // namespace fl::testing
