#include "transcribe/language_detect.h"

#include <algorithm>
#include <cmath>

#include "decode/greedy.h"
#include "frontend/mel.h"
#include "runtime/error.h"
#include "transcribe/job_request.h"

namespace hark {

LanguageGuess guess_language(const SpecialTokens& st, decode::SearchModel& model) {
  LanguageGuess g;
  std::vector<float> logits;
  if (model.decode(std::vector<int32_t>{st.sot}, 0, &logits) != ComputeStatus::Ok) {
    g.aborted = true;
    return g;
  }
  g.id = decode::detect_language(st, logits, &g.probs);
  return g;
}

LanguageDetection detect_language_on(const LoadedModel& m, decode::SearchModel& model, std::span<const float> samples,
                                     const DetectLanguageParams& p, const std::function<bool()>& stop) {
  const SpecialTokens& st = m.file->vocab().special();
  HARK_CHECK_AS(Unsupported, "", st.n_languages > 0,
                "detect_language: the model is English-only (it has no language tokens); load a multilingual model");
  HARK_CHECK_AS(InvalidArgument, "n_threads", p.n_threads >= 0,
                "detect_language: n_threads must be >= 0, got " + std::to_string(p.n_threads));
  const int n_threads = p.n_threads > 0 ? p.n_threads : m.n_threads;
  frontend::LogMel mel;
  if (!p.mel.empty()) {
    // The caller's spectrogram, as it is.
    const size_t n_mels = static_cast<size_t>(m.filters.n_mels);
    HARK_CHECK_AS(InvalidArgument, "mel", p.mel.size() % n_mels == 0,
                  "detect_language: mel has " + std::to_string(p.mel.size()) + " values, not a whole number of " +
                      std::to_string(n_mels) + "-band frames (this model's n_mels)");
    for (size_t i = 0; i < p.mel.size(); ++i)
      HARK_CHECK_AS(InvalidArgument, "mel", std::isfinite(p.mel[i]),
                    "detect_language: mel value " + std::to_string(i) + " is not a finite number");
    mel.n_mels = static_cast<int>(n_mels);
    mel.n_frames = mel.n_content_frames = p.mel.size() / n_mels;
    mel.data = p.mel;
  } else {
    // The window transcribe() would see first with the same offset: the audio is cut at the
    // offset, as check_request cuts it, and its log-mel is taken whole (its floor is relative to
    // the loudest frame of all of it, so a 30 s cut would shift the values a little).
    const std::span<const float> audio = checked_audio(samples, p.offset_ms, 0, "detect_language");
    mel =
        frontend::log_mel_spectrogram(audio.data(), audio.size(), m.filters, n_threads, frontend::kWindowSamples, stop);
  }

  LanguageDetection out;
  if (mel.aborted || model.encode(frontend::mel_window(mel, 0)) != ComputeStatus::Ok) {
    out.aborted = true;
    return out;
  }
  LanguageGuess g = guess_language(st, model);
  if (g.aborted) {
    out.aborted = true;
    return out;
  }
  out.language = language_code(g.id);
  out.probability = g.probs[static_cast<size_t>(g.id)];
  out.probs = std::move(g.probs);
  return out;
}

}  // namespace hark
