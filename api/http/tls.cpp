#include "api/http/tls.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/ssl/context.hpp>
#include <fstream>
#include <memory>

namespace fl::api {

namespace ssl = boost::asio::ssl;

namespace {

// TLS 1.2 suites: ECDHE (forward secrecy) with AEAD only; TLS 1.3 keeps OpenSSL's default suites,
// which are all AEAD.
constexpr const char* tls12_ciphers =
    "ECDHE-ECDSA-AES128-GCM-SHA256:ECDHE-RSA-AES128-GCM-SHA256:ECDHE-ECDSA-AES256-GCM-SHA384:"
    "ECDHE-RSA-AES256-GCM-SHA384:ECDHE-ECDSA-CHACHA20-POLY1305:ECDHE-RSA-CHACHA20-POLY1305";

// The reason OpenSSL gave for the last failure (its error queue is emptied).
std::string openssl_reason() {
  std::string reason;
  while (const unsigned long e = ERR_get_error()) {
    char text[256];
    ERR_error_string_n(e, text, sizeof text);
    if (!reason.empty()) reason += "; ";
    reason += text;
  }
  return reason.empty() ? "unknown OpenSSL error" : reason;
}

bool readable(const std::string& path) {
  std::ifstream in(path);
  return static_cast<bool>(in) && in.peek() != std::ifstream::traits_type::eof();
}

// No terminal prompt for an encrypted key: it simply fails to load.
int no_password(char*, int, int, void*) {
  return 0;
}

tls_result<std::shared_ptr<ssl::context>> common(ssl::context::method method) {
  auto ctx = std::make_shared<ssl::context>(method);
  SSL_CTX* h = ctx->native_handle();
  if (SSL_CTX_set_min_proto_version(h, TLS1_2_VERSION) != 1 || SSL_CTX_set_cipher_list(h, tls12_ciphers) != 1)
    return "cannot configure TLS: " + openssl_reason();
  SSL_CTX_set_options(h, SSL_OP_NO_COMPRESSION | SSL_OP_NO_RENEGOTIATION);
  return ctx;
}

}  // namespace

tls_result<std::shared_ptr<ssl::context>> server_tls_context(const std::string& cert_file,
                                                             const std::string& key_file) {
  ERR_clear_error();
  if (!readable(cert_file)) return "cannot read TLS certificate file " + cert_file;
  if (!readable(key_file)) return "cannot read TLS key file " + key_file;
  auto made = common(ssl::context::tls_server);
  if (!made) return made.error();
  auto ctx = *made;
  SSL_CTX* h = ctx->native_handle();
  SSL_CTX_set_options(h, SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_use_certificate_chain_file(h, cert_file.c_str()) != 1)
    return "TLS certificate file " + cert_file + " holds no usable PEM certificate: " + openssl_reason();
  // The key is read on its own first, so that "not a key" and "not this certificate's key" are told apart.
  const std::unique_ptr<BIO, decltype(&BIO_free)> in(BIO_new_file(key_file.c_str(), "r"), BIO_free);
  const std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      in ? PEM_read_bio_PrivateKey(in.get(), nullptr, no_password, nullptr) : nullptr, EVP_PKEY_free);
  if (!key) return "TLS key file " + key_file + " holds no usable unencrypted PEM private key: " + openssl_reason();
  if (SSL_CTX_use_PrivateKey(h, key.get()) != 1 || SSL_CTX_check_private_key(h) != 1)
    return "TLS key file " + key_file + " does not match the certificate in " + cert_file + ": " + openssl_reason();
  return ctx;
}

tls_result<std::shared_ptr<ssl::context>> client_tls_context(const std::string& ca_file) {
  ERR_clear_error();
  auto made = common(ssl::context::tls_client);
  if (!made) return made.error();
  auto ctx = *made;
  SSL_CTX* h = ctx->native_handle();
  if (ca_file.empty()) {
    if (SSL_CTX_set_default_verify_paths(h) != 1) return "cannot load the system's trust store: " + openssl_reason();
  } else {
    if (!readable(ca_file)) return "cannot read CA file " + ca_file;
    if (SSL_CTX_load_verify_locations(h, ca_file.c_str(), nullptr) != 1)
      return "CA file " + ca_file + " holds no usable PEM certificate: " + openssl_reason();
  }
  SSL_CTX_set_verify(h, SSL_VERIFY_PEER, nullptr);
  return ctx;
}

bool expect_host(SSL* connection, const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  if (!ec) return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(connection), host.c_str()) == 1;
  SSL_set_hostflags(connection, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  return SSL_set1_host(connection, host.c_str()) == 1 && SSL_set_tlsext_host_name(connection, host.c_str()) == 1;
}

}  // namespace fl::api
