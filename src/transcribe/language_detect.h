// Spoken-language detection as a call of its own (OpenAI's detect_language, whisper.cpp's
// whisper_lang_auto_detect): the 30 s of audio from an offset go through the encoder once, and the
// distribution over the model's language tokens right after <|startoftranscript|> is the answer.
// The long-form loop asks the same question (guess_language) of its first window when the
// language is "auto", so both give the same probabilities for the same audio and offset.
#pragma once
#include <functional>
#include <span>
#include <vector>

#include "decode/search_model.h"
#include "hark/hark.hpp"
#include "model/vocab.h"
#include "transcribe/loaded_model.h"

namespace hark {

struct LanguageGuess {
  int id = -1;               // the most likely language (index of its token); -1 when aborted
  std::vector<float> probs;  // one per language of the model, summing to 1
  bool aborted = false;
};

// The model must hold the encoded window. One decoder step on <|startoftranscript|> alone.
LanguageGuess guess_language(const SpecialTokens& st, decode::SearchModel& model);

// The whole call on a state's model: checks the request (multilingual model, finite audio, offset
// inside it), computes the window's log-mel, encodes it and guesses. `stop` is polled by the
// log-mel; the backend polls its own abort callback.
LanguageDetection detect_language_on(const LoadedModel& m, decode::SearchModel& model, std::span<const float> samples,
                                     const DetectLanguageParams& p, const std::function<bool()>& stop);

}  // namespace hark
