#include "audio/base64.h"

#include <array>

#include "runtime/error.h"

namespace hark::audio {

namespace {

constexpr std::array<int8_t, 256> make_table() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(alphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr std::array<int8_t, 256> kTable = make_table();

}  // namespace

std::vector<uint8_t> base64_decode(std::string_view text, const std::string& name) {
  std::vector<uint8_t> out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  size_t n_chars = 0, padding = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c == ' ' || c == '\n' || c == '\r' || c == '\t') continue;
    if (c == '=') {
      ++padding;
      ++n_chars;
      HARK_CHECK(padding <= 2, name + ": bad base64 padding at offset " + std::to_string(i));
      continue;
    }
    HARK_CHECK(padding == 0, name + ": base64 data continues after '=' padding at offset " + std::to_string(i));
    const int v = kTable[c];
    HARK_CHECK(v >= 0,
               name + ": character " +
                   (c >= 32 && c < 127 ? "'" + std::string(1, static_cast<char>(c)) + "'" : "0x" + std::to_string(c)) +
                   " at offset " + std::to_string(i) + " is not base64");
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    ++n_chars;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xFF));
    }
  }
  HARK_CHECK(n_chars % 4 == 0 || padding == 0,
             name + ": base64 length " + std::to_string(n_chars) + " is not a multiple of 4");
  HARK_CHECK(n_chars % 4 != 1, name + ": base64 data is cut short (" + std::to_string(n_chars) + " characters)");
  return out;
}

}  // namespace hark::audio
