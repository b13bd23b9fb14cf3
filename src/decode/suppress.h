// Tokens Whisper never lets a transcript contain: the non-speech symbols its training data used
// for sound effects and annotations (brackets, music notes, ...), so that the model writes the
// words, not a description. The symbol list is Whisper's published default ("suppress_tokens=-1");
// the ids are looked up in the model's own vocabulary.
#pragma once
#include <cstdint>
#include <vector>

#include "model/tokenizer.h"

namespace hark::decode {

// Sorted, unique ids: each listed symbol when it is one token (alone or after a space), plus the
// first token of the music-note characters, " -" and " '" (which can only start a non-speech
// token sequence at the start of a word).
std::vector<int32_t> non_speech_tokens(const Tokenizer& tok);

// Tokens that must not open a window's text: a lone space and end-of-text.
std::vector<int32_t> blank_tokens(const Tokenizer& tok);

}  // namespace hark::decode
