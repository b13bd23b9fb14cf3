// The job's language, decided once for the whole job (as Whisper does): the one asked for, or with
// "auto" what the first window's logits say; with TranscribeParams::multilingual, each window's
// own. Keeps the transcript's language fields and the window start sequence ([sot, language,
// task, (notimestamps)]) that follows from it.
#pragma once
#include <cstdint>
#include <vector>

#include "decode/search_model.h"
#include "hark/hark.hpp"
#include "transcribe/job_request.h"
#include "transcribe/loaded_model.h"

namespace hark {

// Whether a window in language `lang` is translated: with translate, except, when each window has
// its own language (multilingual), the English ones, which are transcribed (faster-whisper's
// output_language "en": English out, whatever each window spoke).
bool window_translates(const TranscribeParams& p, int lang);

class JobLanguage {
 public:
  JobLanguage(const LoadedModel& m, const JobRequest& req, const TranscribeParams& p, Transcript& out);
  // With a window encoded in `model`: when still unknown (or multilingual: each window), guesses
  // it (one decoder step, counted in the transcript's timings). False when the guess was aborted.
  bool settle(decode::SearchModel& model);
  bool known() const { return known_; }
  int id() const { return lang_; }
  const std::vector<int32_t>& start() const { return start_; }

 private:
  const LoadedModel& m_;
  const TranscribeParams& p_;
  Transcript& out_;
  int lang_;
  bool known_;
  std::vector<int32_t> start_;
};

}  // namespace hark
