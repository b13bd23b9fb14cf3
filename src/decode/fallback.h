// Whether a decoded window is good enough, as OpenAI's transcribe() judges it
// (decode_with_fallback): too repetitive (gzip compression ratio of its text above a threshold)
// or too unsure (average log-probability below one) and it is decoded again at the next
// temperature; a window the model calls silence (no-speech probability above its threshold and
// the text unsure) is not retried but skipped.
#pragma once
#include <limits>
#include <string_view>

namespace hark::decode {

struct Thresholds {
  double compression_ratio = 2.4;  // fallback when the text's ratio is above this
  double logprob = -1.0;           // fallback when avg log-prob is below this
  double no_speech = 0.6;          // silence when P(no speech) is above this and the text unsure
  double logprob_low = -std::numeric_limits<double>::infinity();  // skipped below this, whatever P(no speech)
};

// len(text) / len(zlib.compress(text)) (zlib's default level, as Python's zlib.compress), the
// reference's gzip compression ratio. 0 for empty text.
double compression_ratio(std::string_view text);

bool needs_fallback(const Thresholds& t, double ratio, double avg_logprob, double no_speech_prob);
// The window is dropped as silence: the model says no one speaks, and its text is not confident;
// or its text's average log-probability is below logprob_low.
bool is_silence(const Thresholds& t, double avg_logprob, double no_speech_prob);

}  // namespace hark::decode
