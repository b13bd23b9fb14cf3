// SHA-1 of files and of streams, through OpenSSL's libcrypto (Debian's libssl-dev): the digest
// whisper.cpp publishes for its model files.
#include "models/sha1.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "hark/models.hpp"

namespace hark {

Sha1::Sha1() : ctx_(EVP_MD_CTX_new()) {
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), EVP_sha1(), nullptr) != 1)
    throw Error("SHA-1: OpenSSL could not start a digest");
}

Sha1::~Sha1() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Sha1::update(const void* data, size_t n) {
  if (n > 0 && EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, n) != 1) throw Error("SHA-1: update failed");
}

std::string Sha1::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len) != 1) throw Error("SHA-1: final failed");
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (unsigned int i = 0; i < len; ++i) {
    s += digits[md[i] >> 4];
    s += digits[md[i] & 15];
  }
  return s;
}

std::string sha1_file(const std::string& path, const std::function<void(uint64_t)>& on_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("cannot read " + path + ": " + std::strerror(errno));
  Sha1 h;
  std::vector<unsigned char> buf(1 << 20);
  uint64_t done = 0;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    h.update(buf.data(), n);
    done += n;
    if (on_bytes) on_bytes(done);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Error("cannot read " + path + ": read error");
  return h.hex();
}

std::string sha1_file(const std::string& path) { return sha1_file(path, nullptr); }

}  // namespace hark
