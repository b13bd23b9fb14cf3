#include "transcribe/max_len.h"

#include <algorithm>
#include <cstdint>

namespace hark {

namespace {

// A token may start a segment unless its first byte continues a UTF-8 character.
bool starts_character(const std::string& text) {
  return text.empty() || (static_cast<unsigned char>(text[0]) & 0xC0) != 0x80;
}

size_t bytes_before(const Segment& s, size_t k) {
  size_t n = 0;
  for (size_t i = 0; i < k; ++i) n += s.tokens[i].text.size();
  return n;
}

// The part of `s` made of tokens [begin, end), timed [t0, t1]. Its words (word timestamps) are
// those that start in its bytes of the text: the words' texts and the tokens' bytes both make
// up the segment's text.
Segment part_of(const Segment& s, size_t begin, size_t end, int64_t t0, int64_t t1, const TokensText& text_of) {
  Segment p = s;  // the window's decoding fields (temperature, avg_logprob, ...) belong to every part
  p.tokens.assign(s.tokens.begin() + static_cast<std::ptrdiff_t>(begin),
                  s.tokens.begin() + static_cast<std::ptrdiff_t>(end));
  p.text = text_of(p.tokens);
  p.t0 = t0;
  p.t1 = t1;
  const size_t from = bytes_before(s, begin);
  const size_t to = end == s.tokens.size() ? SIZE_MAX : bytes_before(s, end);
  p.words.clear();
  size_t at = 0;
  for (const Word& w : s.words) {
    if (at >= from && at < to) p.words.push_back(w);
    at += w.text.size();
  }
  return p;
}

}  // namespace

std::vector<Segment> wrap_segments(std::vector<Segment> segments, int max_len, bool split_on_word,
                                   const TokensText& text_of) {
  if (max_len <= 0) return segments;
  std::vector<Segment> out;
  for (const Segment& s : segments) {
    size_t begin = 0;   // first token of the part being filled
    int64_t t0 = s.t0;  // its start
    size_t bytes = 0;   // its text so far
    for (size_t k = 0; k < s.tokens.size(); ++k) {
      const TokenData& tok = s.tokens[k];
      const bool over = bytes + tok.text.size() > static_cast<size_t>(max_len);
      const bool may_cut = k > begin && starts_character(tok.text) && (!split_on_word || tok.text.starts_with(' '));
      if (over && may_cut) {
        // The cut lies at the token's start, kept inside the segment and after the part's start.
        const int64_t at = std::clamp(tok.t0 >= 0 ? tok.t0 : t0, t0, std::max(t0, s.t1));
        Segment first = part_of(s, begin, k, t0, at, text_of);
        first.speaker_turn_next = false;  // the turn comes after the segment's last part
        out.push_back(std::move(first));
        begin = k;
        t0 = at;
        bytes = 0;
      }
      bytes += tok.text.size();
    }
    if (begin == 0) {
      out.push_back(s);  // not cut: as it was
    } else {
      out.push_back(part_of(s, begin, s.tokens.size(), t0, std::max(t0, s.t1), text_of));
    }
  }
  return out;
}

}  // namespace hark
