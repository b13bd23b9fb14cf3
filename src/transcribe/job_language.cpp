#include "transcribe/job_language.h"

#include "model/hparams.h"
#include "transcribe/language_detect.h"

namespace hark {

bool window_translates(const TranscribeParams& p, int lang) { return p.translate && !(p.multilingual && lang == 0); }

JobLanguage::JobLanguage(const LoadedModel& m, const JobRequest& req, const TranscribeParams& p, Transcript& out)
    : m_(m),
      p_(p),
      out_(out),
      lang_(req.lang),
      known_(!req.auto_language),
      start_(m.start_sequence(req.lang, window_translates(p, req.lang), p.timestamps)) {}

bool JobLanguage::settle(decode::SearchModel& model) {
  if (known_ && !p_.multilingual) return true;
  const LanguageGuess g = guess_language(m_.file->vocab().special(), model);
  if (g.aborted) return false;
  ++out_.timings.n_decode_steps;
  lang_ = g.id;
  if (!known_) {  // the job's language: the one asked for, else the first window's
    out_.language = language_code(lang_);
    out_.language_prob = g.probs[static_cast<size_t>(lang_)];
  }
  start_ = m_.start_sequence(lang_, window_translates(p_, lang_), p_.timestamps);
  known_ = true;
  return true;
}

}  // namespace hark
