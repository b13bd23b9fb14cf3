#include "decode/segments.h"

#include <algorithm>

namespace hark::decode {

namespace {
// One timestamp step is 0.02 s = 2 mel frames = 2 units of 10 ms.
constexpr int64_t kUnitsPerTimestamp = 2;
}  // namespace

WindowResult split_window(const SpecialTokens& st, std::span<const int32_t> all_tokens,
                          int64_t window_offset, int64_t window_frames) {
  std::vector<int32_t> tokens(all_tokens.begin(), all_tokens.end());
  while (!tokens.empty() && tokens.back() == st.eot) tokens.pop_back();

  WindowResult r;
  auto ts_units = [&](int32_t id) { return static_cast<int64_t>(id - st.timestamp_begin) * kUnitsPerTimestamp; };
  auto take_text = [&](size_t begin, size_t end, RawSegment* seg) {
    for (size_t i = begin; i < end; ++i)
      if (st.is_text(tokens[i])) {
        seg->tokens.push_back(tokens[i]);
        seg->positions.push_back(i);
      }
  };

  const size_t n = tokens.size();
  const bool single_ending = n >= 2 && !st.is_timestamp(tokens[n - 2]) && st.is_timestamp(tokens[n - 1]);
  // Cut points: positions where a timestamp directly follows a timestamp (a segment closes there).
  std::vector<size_t> cuts;
  for (size_t i = 1; i < n; ++i)
    if (st.is_timestamp(tokens[i - 1]) && st.is_timestamp(tokens[i])) cuts.push_back(i);

  if (!cuts.empty()) {
    if (single_ending) cuts.push_back(n);
    size_t begin = 0;
    for (size_t cut : cuts) {
      // tokens[begin] opens, tokens[cut-1] closes this segment
      RawSegment seg;
      // The model may place timestamps past the audio the window really holds (the rest of a
      // 30 s window is zero padding). A segment that opens there has no audio behind it: it is
      // dropped. One that only closes there is cut at the end of the audio.
      const int64_t t0 = ts_units(tokens[begin]);
      seg.t0 = window_offset + t0;
      seg.t1 = window_offset + std::clamp(ts_units(tokens[cut - 1]), t0, window_frames);
      take_text(begin, cut, &seg);
      if (!seg.tokens.empty() && t0 < window_frames) r.segments.push_back(std::move(seg));
      begin = cut;
    }
    if (single_ending) {
      r.consumed_frames = window_frames;
    } else {
      // the unfinished tail is decoded again from the last closing timestamp
      r.consumed_frames = std::clamp<int64_t>(ts_units(tokens[begin - 1]), 1, window_frames);
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
  RawSegment seg;
  seg.t0 = window_offset + start;
  seg.t1 = window_offset + std::min(end, window_frames);
  take_text(0, n, &seg);
  if (!seg.tokens.empty()) r.segments.push_back(std::move(seg));
  r.consumed_frames = window_frames;
  return r;
}

}  // namespace hark::decode
