// Segments cut to a maximum text length (whisper.cpp's max_len and split_on_word), as a pure
// function over finished segments whose tokens carry their times.
//
// Tokens are taken in order, their bytes counted (UTF-8 bytes, as whisper.cpp counts); when the
// next token would pass max_len, the segment is cut before it, provided the segment keeps at least
// one token, the cut is not inside a character (a token that continues a character never starts
// a segment) and, with split_on_word, that token starts a word (its text begins with a space).
// The cut is at that token's start time: the first part ends there, the rest starts there. A
// segment that ran to a speaker turn keeps the mark on its last part only. A single token longer
// than max_len stays whole.
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "hark/hark.hpp"

namespace hark {

// text_of: the text of a run of tokens (the tokenizer's decode, so every part is valid UTF-8).
using TokensText = std::function<std::string(std::span<const TokenData>)>;

// max_len <= 0: the segments as they are.
std::vector<Segment> wrap_segments(std::vector<Segment> segments, int max_len, bool split_on_word,
                                   const TokensText& text_of);

}  // namespace hark
