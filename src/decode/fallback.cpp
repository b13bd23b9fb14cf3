#include "decode/fallback.h"

#include <zlib.h>

#include <vector>

#include "runtime/error.h"

namespace hark::decode {

double compression_ratio(std::string_view text) {
  if (text.empty()) return 0.0;
  uLongf n = compressBound(static_cast<uLong>(text.size()));
  std::vector<Bytef> buf(n);
  const int rc = compress2(buf.data(), &n, reinterpret_cast<const Bytef*>(text.data()), static_cast<uLong>(text.size()),
                           Z_DEFAULT_COMPRESSION);
  HARK_CHECK(rc == Z_OK, "zlib compress2 failed (" + std::to_string(rc) + ")");
  return static_cast<double>(text.size()) / static_cast<double>(n);
}

bool needs_fallback(const Thresholds& t, double ratio, double avg_logprob, double no_speech_prob) {
  bool fallback = ratio > t.compression_ratio || avg_logprob < t.logprob;
  // Silence is not retried: it is skipped (is_silence).
  if (no_speech_prob > t.no_speech && avg_logprob < t.logprob) fallback = false;
  return fallback;
}

bool is_silence(const Thresholds& t, double avg_logprob, double no_speech_prob) {
  return (no_speech_prob > t.no_speech && !(avg_logprob > t.logprob)) || avg_logprob < t.logprob_low;
}

}  // namespace hark::decode
