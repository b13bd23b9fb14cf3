#include "decode/split_window.h"

#include <algorithm>

namespace hark::decode {

namespace {
// One timestamp step is 0.02 s = 2 mel frames = 2 units of 10 ms.
constexpr int64_t kUnitsPerTimestamp = 2;
}  // namespace

int32_t speaker_turn_token(const SpecialTokens& st, int32_t n_file_tokens) {
  const bool special_slot = st.solm > st.eot && st.solm < st.timestamp_begin && st.solm < st.n_vocab;
  return special_slot && st.solm >= n_file_tokens ? st.solm : -1;
}

WindowResult split_window(const SpecialTokens& st, std::span<const int32_t> all_tokens, int64_t window_offset,
                          int64_t window_frames, int32_t speaker_turn) {
  std::vector<int32_t> tokens(all_tokens.begin(), all_tokens.end());
  while (!tokens.empty() && tokens.back() == st.eot) tokens.pop_back();

  WindowResult r;
  auto ts_units = [&](int32_t id) { return static_cast<int64_t>(id - st.timestamp_begin) * kUnitsPerTimestamp; };
  // The text of tokens[begin, end), timed [t0, t1], as one segment, or several when a speaker
  // turn falls inside it (each turn closes the text before it). Segments without text are left out.
  auto take_text = [&](size_t begin, size_t end, int64_t t0, int64_t t1, std::vector<RawSegment>* out) {
    std::vector<RawSegment> parts(1);
    bool turn_before_text = false;
    for (size_t i = begin; i < end; ++i) {
      if (st.is_text(tokens[i])) {
        parts.back().tokens.push_back(tokens[i]);
        parts.back().positions.push_back(i);
      } else if (speaker_turn >= 0 && tokens[i] == speaker_turn) {
        if (parts.back().tokens.empty()) {
          turn_before_text = turn_before_text || parts.size() == 1;
        } else {
          parts.back().speaker_turn_next = true;
          parts.emplace_back();
        }
      }
    }
    if (parts.back().tokens.empty() && parts.size() > 1) parts.pop_back();
    // A turn before any text here came right after the segment before (whose closing timestamp
    // the model wrote first): that one is marked.
    if (turn_before_text) {
      if (!out->empty())
        out->back().speaker_turn_next = true;
      else
        r.speaker_turn_first = true;  // the segment before is the previous window's
    }
    size_t total = 0, before = 0;
    for (const RawSegment& p : parts) total += p.tokens.size();
    auto at = [&](size_t k) {
      return total == 0 ? t0 : t0 + (t1 - t0) * static_cast<int64_t>(k) / static_cast<int64_t>(total);
    };
    for (RawSegment& p : parts) {
      if (p.tokens.empty()) continue;
      p.t0 = at(before);
      before += p.tokens.size();
      p.t1 = at(before);
      out->push_back(std::move(p));
    }
  };

  const size_t n = tokens.size();
  const bool single_ending = n >= 2 && !st.is_timestamp(tokens[n - 2]) && st.is_timestamp(tokens[n - 1]);
  // Cuts: where a timestamp directly follows a timestamp, a segment closes (at `close`) and the
  // next opens (at `open`). A speaker turn between the two does not separate them: it belongs to
  // the segment that closed.
  struct Cut {
    size_t close, open;
  };
  std::vector<Cut> cuts;
  for (size_t i = 1; i < n; ++i) {
    if (!st.is_timestamp(tokens[i])) continue;
    size_t j = i - 1;
    while (j > 0 && speaker_turn >= 0 && tokens[j] == speaker_turn) --j;
    if (st.is_timestamp(tokens[j])) cuts.push_back({j, i});
  }

  if (!cuts.empty()) {
    if (single_ending) cuts.push_back({n - 1, n});
    size_t begin = 0;
    for (const Cut& cut : cuts) {
      // tokens[begin] opens, tokens[cut.close] closes this segment.
      // The model may place timestamps past the audio the window really holds (the rest of a
      // 30 s window is zero padding). A segment that opens there has no audio behind it: it is
      // dropped. One that only closes there is cut at the end of the audio.
      const int64_t t0 = ts_units(tokens[begin]);
      if (t0 < window_frames)
        take_text(begin, cut.open, window_offset + t0,
                  window_offset + std::clamp(ts_units(tokens[cut.close]), t0, window_frames), &r.segments);
      begin = cut.open;
    }
    if (single_ending) {
      r.consumed_frames = window_frames;
    } else {
      // the unfinished tail is decoded again from the last closing timestamp
      r.consumed_frames = std::clamp<int64_t>(ts_units(tokens[cuts.back().close]), 1, window_frames);
    }
    return r;
  }

  // No complete pair: the whole window is one segment, from its opening timestamp (if any) to its
  // last timestamp when that is a later one, else to the end of the window.
  const int64_t start = n > 0 && st.is_timestamp(tokens[0]) ? std::min(ts_units(tokens[0]), window_frames) : 0;
  int64_t end = window_frames;
  for (size_t i = n; i-- > 1;)
    if (st.is_timestamp(tokens[i])) {
      if (ts_units(tokens[i]) > start) end = ts_units(tokens[i]);
      break;
    }
  take_text(0, n, window_offset + start, window_offset + std::min(end, window_frames), &r.segments);
  r.consumed_frames = window_frames;
  return r;
}

}  // namespace hark::decode
