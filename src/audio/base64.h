// Standard base64 (RFC 4648, '+' and '/', '=' padding) to bytes, for audio that arrives inside a
// data URI. Strict: a character outside the alphabet or a bad padding is an error naming its
// offset; whitespace (line breaks in pasted data) is skipped.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hark::audio {

// Throws hark::Error("<name>: ...") on malformed input.
std::vector<uint8_t> base64_decode(std::string_view text, const std::string& name = "<base64>");

}  // namespace hark::audio
