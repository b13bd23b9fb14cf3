// SHA-1 (OpenSSL's libcrypto) for checking downloaded model files against published digests.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

namespace hark {

class Sha1 {
 public:
  Sha1();
  ~Sha1();
  Sha1(const Sha1&) = delete;
  Sha1& operator=(const Sha1&) = delete;
  void update(const void* data, size_t n);
  std::string hex();  // 40 lower-case hex digits; once

 private:
  void* ctx_;  // EVP_MD_CTX, kept out of the header
};

// The file's SHA-1; on_bytes(bytes hashed so far) after every chunk (progress of a long check).
std::string sha1_file(const std::string& path, const std::function<void(uint64_t)>& on_bytes);

}  // namespace hark
