#pragma once
// A self-signed certificate made at run time (nothing checked into the repository): an EC P-256 key
// and a certificate naming 127.0.0.1 and localhost (or the names given), written as PEM files. It is
// its own CA: clients trust it with `--ca <cert>`.
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include <gtest/gtest.h>

namespace fl::testing {

struct test_certificate {
  std::filesystem::path cert;  // PEM certificate
  std::filesystem::path key;   // PEM private key (unencrypted)
};

// Writes `dir/NAME.crt` and `dir/NAME.key`. `names`: the subjectAltName entries.
inline test_certificate make_test_certificate(const std::filesystem::path& dir, const std::string& name = "server",
                                              const std::string& names = "IP:127.0.0.1,DNS:localhost") {
  static std::atomic<long> serial{1};
  test_certificate out{dir / (name + ".crt"), dir / (name + ".key")};
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(X509_new(), X509_free);
  EXPECT_TRUE(key && cert);
  if (!key || !cert) return out;
  X509_set_version(cert.get(), 2);  // v3
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(cert.get());
  const std::string common_name = "fieldline test " + name;
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC, reinterpret_cast<const unsigned char*>(common_name.c_str()),
                             -1, -1, 0);
  X509_set_issuer_name(cert.get(), subject);
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert.get(), cert.get(), nullptr, nullptr, 0);
  for (const auto& [nid, value] :
       {std::pair{NID_subject_alt_name, names}, std::pair{NID_basic_constraints, std::string("critical,CA:TRUE")},
        std::pair{NID_subject_key_identifier, std::string("hash")}}) {
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    EXPECT_NE(ext, nullptr) << value;
    if (!ext) return out;
    X509_add_ext(cert.get(), ext, -1);
    X509_EXTENSION_free(ext);
  }
  EXPECT_GT(X509_sign(cert.get(), key.get(), EVP_sha256()), 0);
  FILE* c = std::fopen(out.cert.c_str(), "w");
  FILE* k = std::fopen(out.key.c_str(), "w");
  EXPECT_TRUE(c && k);
  if (c) {
    EXPECT_EQ(PEM_write_X509(c, cert.get()), 1);
    std::fclose(c);
  }
  if (k) {
    EXPECT_EQ(PEM_write_PrivateKey(k, key.get(), nullptr, nullptr, 0, nullptr, nullptr), 1);
    std::fclose(k);
  }
  return out;
}

}  // namespace fl::testing
