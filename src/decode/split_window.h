// Turning one window's sampled tokens into timed segments, and deciding where the next window
// starts (Whisper's long-form rule: seek to the last complete timestamp).
//
// A window's tokens look like  <|t0|> text <|t1|><|t1'|> text <|t2|> ... [<|tn|>] <|endoftext|>.
// Each adjacent pair of timestamps closes one segment and opens the next. If the window ends on a
// single timestamp, nothing was said after it and the whole window is consumed; otherwise the
// last segment may be cut off mid-speech, so it is dropped and the next window starts at the last
// closing timestamp, where the dropped speech is decoded again in full.
//
// Speaker turns (tinydiarize models): the turn token ends the segment whose text it follows and
// marks it (speaker_turn_next). The model puts it right before a closing timestamp; when more
// text follows it inside the same pair, that text starts a new segment, and the pair's time is
// shared between the two by their token counts. A turn written before any text of a pair marks
// the segment before it (whisper.cpp drops such a mark with the empty segment); one between a
// closing and an opening timestamp marks the segment that closed.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "model/hparams.h"

namespace hark::decode {

struct RawSegment {
  int64_t t0 = 0;  // 10 ms units, absolute (window offset included)
  int64_t t1 = 0;
  std::vector<int32_t> tokens;     // text tokens only (no timestamps, no end-of-text)
  std::vector<size_t> positions;   // where each of them stands in the window's tokens
  bool speaker_turn_next = false;  // a speaker-turn token followed this segment's text
};

struct WindowResult {
  std::vector<RawSegment> segments;
  int64_t consumed_frames = 0;  // mel frames (10 ms each) to advance the seek position by
  // A speaker turn came before the window's first text: it follows the previous window's last segment.
  bool speaker_turn_first = false;
};

// The token tinydiarize models write at a change of speaker: <|startoflm|>, which Whisper itself
// never produces (whisper.cpp's token_solm). -1 when the vocabulary has no such special slot (a
// file that stores an ordinary token at that id). n_file_tokens: the tokens the file stores.
int32_t speaker_turn_token(const SpecialTokens& st, int32_t n_file_tokens);

// tokens: the sampled tokens of one window (no prompt), end-of-text removed or not.
// window_offset: start of the window in 10 ms units. window_frames: mel frames the window really
// covered (<= 3000; less at the end of the audio). speaker_turn: the token that marks a speaker
// turn (SpecialTokens::solm when tinydiarize is on), -1 for none.
WindowResult split_window(const SpecialTokens& st, std::span<const int32_t> tokens, int64_t window_offset,
                          int64_t window_frames, int32_t speaker_turn = -1);

}  // namespace hark::decode
