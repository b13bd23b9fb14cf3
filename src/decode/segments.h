// Turning one window's sampled tokens into timed segments, and deciding where the next window
// starts (Whisper's long-form rule: seek to the last complete timestamp).
//
// A window's tokens look like  <|t0|> text <|t1|><|t1'|> text <|t2|> ... [<|tn|>] <|endoftext|>.
// Each adjacent pair of timestamps closes one segment and opens the next. If the window ends on a
// single timestamp, nothing was said after it and the whole window is consumed; otherwise the
// last segment may be cut off mid-speech, so it is dropped and the next window starts at the last
// closing timestamp, where the dropped speech is decoded again in full.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "model/hparams.h"

namespace hark::decode {

struct RawSegment {
  int64_t t0 = 0;  // 10 ms units, absolute (window offset included)
  int64_t t1 = 0;
  std::vector<int32_t> tokens;  // text tokens only (no timestamps, no end-of-text)
  std::vector<size_t> positions;  // where each of them stands in the window's tokens
};

struct WindowResult {
  std::vector<RawSegment> segments;
  int64_t consumed_frames = 0;  // mel frames (10 ms each) to advance the seek position by
};

// tokens: the sampled tokens of one window (no prompt), end-of-text removed or not.
// window_offset: start of the window in 10 ms units. window_frames: mel frames the window really
// covered (<= 3000; less at the end of the audio).
WindowResult split_window(const SpecialTokens& st, std::span<const int32_t> tokens,
                          int64_t window_offset, int64_t window_frames);

}  // namespace hark::decode
