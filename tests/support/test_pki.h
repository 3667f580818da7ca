// Certificates made for one test run with OpenSSL's API, written as PEM into
// a fresh temporary directory: two unrelated CAs, a broker certificate for
// localhost/127.0.0.1, the same host's certificate already expired, one for
// another host name, and a client certificate for mTLS.
#pragma once

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

namespace pp::test {

struct KeyPair {
  std::string cert;
  std::string key;
};

class TestPki {
 public:
  TestPki() {
    std::string pattern = (std::filesystem::temp_directory_path() / "pp-pki-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = pattern;
    ca_ = make("ca", "produce-proxy test CA", nullptr, "", true, 0, 86400);
    other_ca_ = make("other-ca", "an unrelated CA", nullptr, "", true, 0, 86400);
    broker = make("broker", "localhost", &ca_, "DNS:localhost,IP:127.0.0.1", false, 0, 86400).files;
    expired = make("expired", "localhost", &ca_, "DNS:localhost,IP:127.0.0.1", false, -2 * 86400, -86400).files;
    other_host = make("other-host", "kafka.example.net", &ca_, "DNS:kafka.example.net", false, 0, 86400).files;
    client = make("client", "produce-proxy client", &ca_, "DNS:produce-proxy", false, 0, 86400).files;
    ca_file = ca_.files.cert;
    other_ca_file = other_ca_.files.cert;
  }
  ~TestPki() {
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  TestPki(const TestPki&) = delete;
  TestPki& operator=(const TestPki&) = delete;

  std::string ca_file;
  std::string other_ca_file;
  KeyPair broker;
  KeyPair expired;
  KeyPair other_host;
  KeyPair client;

 private:
  struct Issuer {
    KeyPair files;
    std::shared_ptr<X509> cert;
    std::shared_ptr<EVP_PKEY> key;
  };

  static void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
    X509V3_CTX ctx;
    X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
    X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
    if (ext == nullptr) throw std::runtime_error("bad extension " + value);
    X509_add_ext(cert, ext, -1);
    X509_EXTENSION_free(ext);
  }

  Issuer make(const std::string& stem, const std::string& cn, const Issuer* issuer, const std::string& san, bool is_ca,
              long not_before_s, long not_after_s) {
    std::shared_ptr<EVP_PKEY> key(EVP_EC_gen("P-256"), EVP_PKEY_free);
    std::shared_ptr<X509> cert(X509_new(), X509_free);
    X509* x = cert.get();
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), ++serial_);
    X509_gmtime_adj(X509_getm_notBefore(x), not_before_s);
    X509_gmtime_adj(X509_getm_notAfter(x), not_after_s);
    X509_set_pubkey(x, key.get());
    X509_NAME_add_entry_by_txt(X509_get_subject_name(x), "CN", MBSTRING_ASC,
                               reinterpret_cast<const unsigned char*>(cn.c_str()), -1, -1, 0);
    X509* signer = issuer ? issuer->cert.get() : x;
    X509_set_issuer_name(x, X509_get_subject_name(signer));
    add_extension(x, signer, NID_basic_constraints, is_ca ? "critical,CA:TRUE" : "CA:FALSE");
    if (is_ca) add_extension(x, signer, NID_key_usage, "critical,keyCertSign,cRLSign");
    if (!san.empty()) add_extension(x, signer, NID_subject_alt_name, san);
    X509_sign(x, issuer ? issuer->key.get() : key.get(), EVP_sha256());

    Issuer out{{dir_ + "/" + stem + ".crt", dir_ + "/" + stem + ".key"}, cert, key};
    write_pem(out.files.cert, [&](FILE* f) { return PEM_write_X509(f, x); });
    write_pem(out.files.key,
              [&](FILE* f) { return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr); });
    return out;
  }

  template <class Write>
  static void write_pem(const std::string& path, Write write) {
    FILE* f = std::fopen(path.c_str(), "w");
    if (f == nullptr || write(f) != 1) throw std::runtime_error("cannot write " + path);
    std::fclose(f);
  }

  std::string dir_;
  long serial_ = 0;
  Issuer ca_;
  Issuer other_ca_;
};

}  // namespace pp::test
