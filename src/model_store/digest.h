// Digests (OpenSSL's libcrypto) for checking downloaded model files: SHA-1, which whisper.cpp
// publishes for its files, and SHA-256, which Hugging Face announces for every large file it
// serves (its X-Linked-Etag header).
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace hark {

class Digest {
 public:
  enum class Kind { Sha1, Sha256 };
  explicit Digest(Kind kind);
  ~Digest();
  Digest(const Digest&) = delete;
  Digest& operator=(const Digest&) = delete;
  void update(const void* data, size_t n);
  std::string hex();  // lower-case hex digits (40 for SHA-1, 64 for SHA-256); once

 private:
  void* ctx_;  // EVP_MD_CTX, kept out of the header
};

struct FileDigests {
  std::string sha1;
  std::string sha256;  // "" unless asked for
};

// The file's digests from one read; on_bytes(bytes hashed so far) after every chunk (progress of
// a long check).
FileDigests digest_file(const std::string& path, bool with_sha256, const std::function<void(uint64_t)>& on_bytes);

// True for `n` lower-case or upper-case hex digits.
bool is_hex_digest(const std::string& s, size_t n);

}  // namespace hark
