// TLS (`serve --tls-cert/--tls-key`): the same port serves HTTPS and WSS with a certificate each test
// makes itself; old protocol versions, plain HTTP and silent clients get nothing; the admin CLI and
// `watch` speak it with --ca and refuse an untrusted certificate without; bad certificate files stop
// `serve` at start with a message naming the file.
#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <fstream>

#include "api/http/client.hpp"
#include "api/http/tls.hpp"
#include "support/raw_connection.hpp"
#include "support/run_command.hpp"
#include "support/server_process.hpp"
#include "support/socket_fixture.hpp"
#include "support/temp_dir.hpp"
#include "support/test_certificate.hpp"
#include "support/watch_process.hpp"

namespace fl::testing {

using namespace std::chrono_literals;
namespace json = boost::json;
namespace asio = boost::asio;

namespace {

// A TLS handshake with a client limited to protocol versions [min, max] (OpenSSL's TLS1_x_VERSION),
// allowed to offer anything (security level 0) so that the server is the one to refuse.
boost::system::error_code handshake_with(std::uint16_t port, const std::string& ca_file, int min, int max) {
  asio::io_context io;
  asio::ssl::context ctx(asio::ssl::context::tls_client);
  SSL_CTX* h = ctx.native_handle();
  SSL_CTX_set_security_level(h, 0);
  SSL_CTX_set_cipher_list(h, "ALL:@SECLEVEL=0");
  SSL_CTX_set_min_proto_version(h, min);
  SSL_CTX_set_max_proto_version(h, max);
  ctx.load_verify_file(ca_file);
  ctx.set_verify_mode(asio::ssl::verify_peer);
  asio::ssl::stream<asio::ip::tcp::socket> stream(io, ctx);
  stream.next_layer().connect({asio::ip::make_address("127.0.0.1"), port});
  boost::system::error_code ec;
  stream.handshake(asio::ssl::stream_base::client, ec);
  return ec;
}

std::string shell_quote(const std::string& s) {
  return "'" + s + "'";
}

}  // namespace

// A server on loopback that speaks only TLS, with a self-signed certificate made for this test; the
// probe's sockets are wss:// trusting it. A new connection has 1 s for its handshake and headers.
class tls_server : public socket_fixture {
 protected:
  void SetUp() override {
    cert_ = make_test_certificate(certs_.path());
    auto ctx = api::server_tls_context(cert_.cert.string(), cert_.key.string());
    ASSERT_TRUE(ctx) << ctx.error();
    tls_ = *ctx;
    probe_tls_ = {.enabled = true, .ca_file = cert_.cert.string()};
    socket_fixture::SetUp();
    mandate_ = make_mandate("M", json::array{"api_packets_writeable"});
    key_ = make_key(mandate_, "read_only");
    admin_ = make_key(mandate_, "admin");
    device_ = make_device(admin_, "d1", make_folder(admin_, "F"));
  }
  [[nodiscard]] api::server_limits limits() const override {
    auto l = socket_fixture::limits();
    l.header_timeout = 1s;
    return l;
  }
  [[nodiscard]] std::uint16_t port() const { return server_->port(); }
  [[nodiscard]] api::http_client https(const std::string& host = "127.0.0.1") const {
    return api::http_client(host, port(), 30s, {.enabled = true, .ca_file = cert_.cert.string()});
  }
  [[nodiscard]] std::string url(const std::string& scheme) const {
    return scheme + "://127.0.0.1:" + std::to_string(port());
  }

  temp_dir certs_;
  test_certificate cert_;
  std::string mandate_, key_, admin_, device_;
};

TEST_F(tls_server, an_https_request_is_answered_with_the_right_json) {
  auto client = https();
  auto res = client.request("GET", "/api/v1/devices/" + device_, {}, {{"x-api-key", key_}});
  ASSERT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(json::parse(res.body).at("body").at("id"), device_);
  // Keep-alive works over TLS too: a second request on the same connection.
  res = client.request("GET", "/api/v1/devices/" + device_ + "?auth=" + key_);
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(client.connections(), 1);
}

TEST_F(tls_server, the_dns_name_in_the_certificate_is_accepted_too) {
  auto res = https("localhost").request("GET", "/api/v1/devices/" + device_, {}, {{"x-api-key", key_}});
  EXPECT_EQ(res.status, 200) << res.body;
}

TEST_F(tls_server, a_certificate_for_another_host_is_refused) {
  // Trusted, but naming only localhost: reached as 127.0.0.1 it must be refused.
  const auto other = make_test_certificate(certs_.path(), "other", "DNS:localhost");
  stop();
  tls_ = *api::server_tls_context(other.cert.string(), other.key.string());
  start(limits());
  api::http_client client("127.0.0.1", port(), 30s, {.enabled = true, .ca_file = other.cert.string()});
  try {
    (void)client.request("GET", "/api/v1/devices/" + device_, {}, {{"x-api-key", key_}});
    ADD_FAILURE() << "the request went through";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("certificate verify failed"), std::string::npos) << e.what();
  }
}

TEST_F(tls_server, a_wss_socket_gets_pushed_packets) {
  const auto s = probe_->open("/api/v1/devices/" + device_ + "/packets/socket", key_);
  ASSERT_TRUE(probe_->wait_open(s));
  const auto id = post_packet(admin_, device_, "0A0B");
  ASSERT_TRUE(probe_->wait_events(s, 1));
  const auto [event, body] = event_of(probe_->frames(s).at(0));
  EXPECT_EQ(event, "packet_added");
  EXPECT_EQ(body.at("id"), id);
  probe_->send(s, "ping");
  EXPECT_TRUE(probe_->wait([&] {
    const auto& f = probe_->frames_unlocked(s);
    return std::find(f.begin(), f.end(), "pong") != f.end();
  }));
}

TEST_F(tls_server, shutdown_closes_wss_sockets_with_1001) {
  const auto s = probe_->open("/api/v1/devices/" + device_ + "/packets/socket", key_);
  ASSERT_TRUE(probe_->wait_open(s));
  server_->stop();
  ASSERT_TRUE(probe_->wait_end(s));
  EXPECT_EQ(probe_->end(s)->close_code, 1001);
}

TEST_F(tls_server, the_per_address_cap_holds_over_tls_and_a_refusal_sends_no_plain_text) {
  stop();
  auto l = limits();
  l.max_connections_per_address = 2;
  start(l);
  auto first = https();
  auto second = https();
  ASSERT_EQ(first.request("GET", "/api/v1/devices/" + device_, {}, {{"x-api-key", key_}}).status, 200);
  ASSERT_EQ(second.request("GET", "/api/v1/devices/" + device_, {}, {{"x-api-key", key_}}).status, 200);
  // Both stay open (keep-alive): a third from the same address is closed at once, without a 503 in
  // plain text on a TLS port.
  raw_connection third(port());
  ASSERT_TRUE(third.connected());
  EXPECT_TRUE(third.wait_closed(10s));
  EXPECT_TRUE(third.received().empty()) << third.received();
  EXPECT_THROW((void)https().request("GET", "/api/v1/devices/" + device_, {}, {{"x-api-key", key_}}),
               std::runtime_error);
}

TEST_F(tls_server, a_tls_1_2_client_is_served) {
  EXPECT_FALSE(handshake_with(port(), cert_.cert.string(), TLS1_2_VERSION, TLS1_2_VERSION));
}

TEST_F(tls_server, a_tls_1_1_client_is_refused) {
  const auto ec = handshake_with(port(), cert_.cert.string(), TLS1_1_VERSION, TLS1_1_VERSION);
  ASSERT_TRUE(ec);
  // The server's alert, not the client's own refusal to offer TLS 1.1.
  EXPECT_NE(ec.message().find("protocol version"), std::string::npos) << ec.message();
}

TEST_F(tls_server, a_tls_1_0_client_is_refused) {
  const auto ec = handshake_with(port(), cert_.cert.string(), TLS1_VERSION, TLS1_VERSION);
  ASSERT_TRUE(ec);
  EXPECT_NE(ec.message().find("protocol version"), std::string::npos) << ec.message();
}

TEST_F(tls_server, a_plain_http_request_gets_no_http_answer) {
  raw_connection c(port());
  ASSERT_TRUE(c.connected());
  ASSERT_TRUE(c.send("GET /api/v1/devices/" + device_ + "?auth=" + key_ + " HTTP/1.1\r\nHost: x\r\n\r\n"));
  EXPECT_TRUE(c.wait_closed(10s));
  EXPECT_EQ(c.received().find("HTTP/"), std::string::npos) << c.received();
}

TEST_F(tls_server, a_client_that_sends_nothing_is_cut_at_the_handshake_deadline) {
  raw_connection c(port());
  ASSERT_TRUE(c.connected());
  EXPECT_TRUE(c.wait_closed(30s));
  EXPECT_TRUE(c.received().empty());
}

TEST_F(tls_server, a_client_that_sends_half_a_client_hello_is_cut_at_the_handshake_deadline) {
  raw_connection c(port());
  ASSERT_TRUE(c.connected());
  // A handshake record announcing 512 bytes, of which only the first arrives.
  ASSERT_TRUE(c.send(std::string("\x16\x03\x01\x02\x00\x01", 6)));
  EXPECT_TRUE(c.wait_closed(30s));
}

TEST_F(tls_server, the_admin_cli_works_over_https_with_ca) {
  const auto r =
      run_command(std::string(FIELDLINE_BINARY) + " admin --server " + url("https") + " --ca " +
                      shell_quote(cert_.cert.string()) + " --key " + superadmin_ + " mandate show " + mandate_,
                  false);
  ASSERT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(json::parse(r.out).at("id"), mandate_);
}

TEST_F(tls_server, the_admin_cli_refuses_an_untrusted_certificate_without_ca) {
  const auto r = run_command(std::string(FIELDLINE_BINARY) + " admin --server " + url("https") + " --key " +
                             superadmin_ + " mandate show " + mandate_);
  EXPECT_EQ(r.exit_code, 1) << r.out;
  EXPECT_NE(r.out.find("certificate verify failed"), std::string::npos) << r.out;
}

TEST_F(tls_server, watch_works_over_wss_with_ca) {
  watch_process watch(
      {"--device", device_, "--packets", "--server", url("wss"), "--ca", cert_.cert.string(), "--key", key_});
  // Wait until it follows the device: post until one shows up (its socket may not be open yet).
  std::string first;
  for (int i = 0; i < 100 && first.empty(); ++i) {  // polling a condition
    post_packet(admin_, device_, "01");
    first = watch.line(200ms);
  }
  ASSERT_FALSE(first.empty());
  EXPECT_EQ(json::parse(first).at("device_id"), device_);
}

TEST_F(tls_server, watch_refuses_an_untrusted_certificate_without_ca) {
  watch_process watch({"--device", device_, "--server", url("wss"), "--key", key_});
  auto [status, err] = watch.finish();
  EXPECT_EQ(status, 1);
  EXPECT_NE(err.find("certificate verify failed"), std::string::npos) << err;
}

// The real `serve` with its flags: it announces https:// and the admin CLI reaches it.
TEST(serve_tls, serve_with_cert_and_key_announces_https_and_serves_the_admin_cli) {
  temp_dir dir;
  const auto cert = make_test_certificate(dir.path());
  auto server =
      start_server(dir.path() / "data", {}, {"--tls-cert", cert.cert.string(), "--tls-key", cert.key.string()});
  ASSERT_GT(server->port, 0);
  const auto r = run_command(
      std::string(FIELDLINE_BINARY) + " admin --server https://127.0.0.1:" + std::to_string(server->port) + " --ca " +
          shell_quote(cert.cert.string()) + " --data " + shell_quote((dir.path() / "data").string()) + " mandate list",
      false);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(stop_server(*server), 0);
}

TEST(serve_tls, the_config_file_keys_turn_tls_on) {
  temp_dir dir;
  const auto cert = make_test_certificate(dir.path());
  const auto config = dir.path() / "config.json";
  {
    std::ofstream(config) << json::serialize(
        json::object{{"tls_cert", cert.cert.string()}, {"tls_key", cert.key.string()}});
  }
  auto server = start_server(dir.path() / "data", config);
  ASSERT_GT(server->port, 0);
  api::http_client client("127.0.0.1", server->port, 30s, {.enabled = true, .ca_file = cert.cert.string()});
  const auto res =
      client.request("GET", "/admin/v1/mandates", {}, {{"x-api-key", superadmin_key(dir.path() / "data")}});
  EXPECT_EQ(res.status, 200) << res.body;
  EXPECT_EQ(stop_server(*server), 0);
}

namespace {

// `serve` with these TLS arguments must refuse to start; its output.
std::string refused_start(const temp_dir& dir, const std::string& tls_args) {
  const auto r = run_command(std::string(FIELDLINE_BINARY) + " serve --data " +
                             shell_quote((dir.path() / "data").string()) + " --listen 127.0.0.1:0 " + tls_args);
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
  return r.out;
}
std::string refused_start(const temp_dir& dir, const std::filesystem::path& cert, const std::filesystem::path& key) {
  return refused_start(dir, "--tls-cert " + shell_quote(cert.string()) + " --tls-key " + shell_quote(key.string()));
}

}  // namespace

TEST(serve_tls, a_certificate_without_a_key_is_a_start_up_error) {
  temp_dir dir;
  const auto cert = make_test_certificate(dir.path());
  const auto out = refused_start(dir, "--tls-cert " + shell_quote(cert.cert.string()));
  EXPECT_NE(out.find("--tls-cert and --tls-key"), std::string::npos) << out;
}

TEST(serve_tls, a_missing_key_file_is_a_start_up_error_naming_it) {
  temp_dir dir;
  const auto cert = make_test_certificate(dir.path());
  const auto missing = (dir.path() / "missing.key").string();
  const auto out = refused_start(dir, cert.cert, missing);
  EXPECT_NE(out.find(missing), std::string::npos) << out;
}

TEST(serve_tls, a_key_that_does_not_match_the_certificate_is_a_start_up_error_naming_it) {
  temp_dir dir;
  const auto one = make_test_certificate(dir.path(), "one");
  const auto two = make_test_certificate(dir.path(), "two");
  const auto out = refused_start(dir, one.cert, two.key);
  EXPECT_NE(out.find(two.key.string()), std::string::npos) << out;
  EXPECT_NE(out.find("does not match"), std::string::npos) << out;
}

TEST(serve_tls, a_garbage_certificate_is_a_start_up_error_naming_it) {
  temp_dir dir;
  const auto cert = make_test_certificate(dir.path());
  const auto garbage = dir.path() / "garbage.crt";
  { std::ofstream(garbage) << "-----BEGIN CERTIFICATE-----\nnot base64 at all!\n-----END CERTIFICATE-----\n"; }
  EXPECT_NE(refused_start(dir, garbage, cert.key).find(garbage.string()), std::string::npos);
}

TEST(serve_tls, a_garbage_key_is_a_start_up_error_naming_it) {
  temp_dir dir;
  const auto cert = make_test_certificate(dir.path());
  const auto garbage = dir.path() / "garbage.key";
  { std::ofstream(garbage) << "this is not a PEM key\n"; }
  EXPECT_NE(refused_start(dir, cert.cert, garbage).find(garbage.string()), std::string::npos);
}

}  // namespace fl::testing
