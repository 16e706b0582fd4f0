#pragma once
// TLS for the server (`serve --tls-cert/--tls-key`) and for the clients (`admin`, `watch`,
// `reparse` with https:// or wss://). Only the contexts are made here; the streams that use them
// live in the sessions and clients. Errors are values: a message naming the file at fault.
//
// Server settings (docs/SECURITY.md): TLS 1.2 or 1.3 only; TLS 1.2 ciphers limited to ECDHE key
// exchange with AEAD (AES-GCM, ChaCha20-Poly1305), TLS 1.3's own suites (all AEAD); the server's
// cipher order wins; no compression; no renegotiation.
// Client settings: TLS 1.2 or 1.3, the peer's certificate verified against the system's trust store
// or the given CA file, host name (or IP address) checked, SNI sent for names.
#include <boost/system/result.hpp>
#include <memory>
#include <string>

namespace boost::asio::ssl {
class context;
}
struct ssl_st;  // OpenSSL's SSL

namespace fl::api {

template <class T>
using tls_result = boost::system::result<T, std::string>;

// Reads the certificate chain and private key (PEM). Fails with a message naming the file when a
// file cannot be read, is not PEM, or the key does not belong to the certificate.
[[nodiscard]] tls_result<std::shared_ptr<boost::asio::ssl::context>> server_tls_context(const std::string& cert_file,
                                                                                        const std::string& key_file);

// `ca_file` empty: the system's trust store; else only the CA(s) or certificate(s) in that PEM file.
[[nodiscard]] tls_result<std::shared_ptr<boost::asio::ssl::context>> client_tls_context(const std::string& ca_file);

// On a client connection before its handshake: the certificate must name `host` (a DNS name, or an
// IP address matched against the certificate's IP entries), and SNI carries it (names only: RFC 6066
// forbids addresses). False when OpenSSL refused (out of memory).
[[nodiscard]] bool expect_host(ssl_st* connection, const std::string& host);

}  // namespace fl::api
