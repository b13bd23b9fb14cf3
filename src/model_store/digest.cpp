// SHA-1 and SHA-256 of files and streams through OpenSSL's libcrypto (Debian's libssl-dev).
#include "model_store/digest.h"

#include <openssl/evp.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "hark/models.hpp"

namespace hark {

namespace {
const char* kind_name(Digest::Kind k) { return k == Digest::Kind::Sha1 ? "SHA-1" : "SHA-256"; }
}  // namespace

Digest::Digest(Kind kind) : ctx_(EVP_MD_CTX_new()) {
  const EVP_MD* md = kind == Kind::Sha1 ? EVP_sha1() : EVP_sha256();
  if (!ctx_ || EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(ctx_), md, nullptr) != 1)
    throw Error(std::string(kind_name(kind)) + ": OpenSSL could not start a digest");
}

Digest::~Digest() { EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(ctx_)); }

void Digest::update(const void* data, size_t n) {
  if (n > 0 && EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(ctx_), data, n) != 1) throw Error("digest: update failed");
}

std::string Digest::hex() {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  if (EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(ctx_), md, &len) != 1) throw Error("digest: final failed");
  static const char* digits = "0123456789abcdef";
  std::string s;
  for (unsigned int i = 0; i < len; ++i) {
    s += digits[md[i] >> 4];
    s += digits[md[i] & 15];
  }
  return s;
}

FileDigests digest_file(const std::string& path, bool with_sha256, const std::function<void(uint64_t)>& on_bytes) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) throw Error("cannot read " + path + ": " + std::strerror(errno));
  Digest sha1(Digest::Kind::Sha1);
  std::optional<Digest> sha256;
  if (with_sha256) sha256.emplace(Digest::Kind::Sha256);
  std::vector<unsigned char> buf(1 << 20);
  uint64_t done = 0;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) {
    sha1.update(buf.data(), n);
    if (sha256) sha256->update(buf.data(), n);
    done += n;
    if (on_bytes) on_bytes(done);
  }
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) throw Error("cannot read " + path + ": read error");
  return {sha1.hex(), sha256 ? sha256->hex() : std::string()};
}

bool is_hex_digest(const std::string& s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

std::string sha1_file(const std::string& path) { return digest_file(path, false, nullptr).sha1; }

}  // namespace hark
