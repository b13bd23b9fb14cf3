#include "transcribe/job_request.h"

#include <algorithm>
#include <cmath>
#include <regex>
#include <string>

#include "decode/split_window.h"
#include "decode/timestamp_rules.h"
#include "model/hparams.h"
#include "runtime/error.h"
#include "runtime/text.h"
#include "transcribe/word_timing.h"
#include "vad/speech_segments.h"

namespace hark {

namespace {

std::string num(double v) { return std::to_string(v); }

// A bad option: InvalidArgument, about that field of TranscribeParams. Each front end names the
// field in its own spelling; the message is the same through all of them.
#define CHECK_OPTION(field, cond, msg) \
  HARK_CHECK_AS(InvalidArgument, field, cond, "transcribe: " + std::string(field) + msg)
// A valid option this model or these other options cannot do.
#define CHECK_SUPPORTED(field, cond, msg) HARK_CHECK_AS(Unsupported, field, cond, "transcribe: " msg)

void check_decoding(const LoadedModel& m, const TranscribeParams& p, JobRequest* r) {
  const SpecialTokens& st = m.file->vocab().special();
  CHECK_OPTION("temperature", std::isfinite(p.temperature) && p.temperature >= 0.0f,
               " must be finite and >= 0, got " + num(p.temperature));
  CHECK_OPTION("temperature_inc", std::isfinite(p.temperature_inc) && p.temperature_inc >= 0.0f,
               " must be finite and >= 0 (0: no fallback), got " + num(p.temperature_inc));
  CHECK_OPTION("temperatures", p.temperatures.size() <= 32,
               " holds " + std::to_string(p.temperatures.size()) + " values; at most 32");
  for (float t : p.temperatures)
    CHECK_OPTION("temperatures", std::isfinite(t) && t >= 0.0f, ": each must be finite and >= 0, got " + num(t));
  CHECK_OPTION("logprob_low_threshold", !std::isnan(p.logprob_low_threshold), " must not be NaN");
  for (float t : p.clip_timestamps)
    CHECK_OPTION("clip_timestamps", std::isfinite(t) && t >= 0.0f,
                 ": each must be finite and >= 0 seconds, got " + num(t));
  if (!p.clip_timestamps.empty()) {
    CHECK_SUPPORTED("clip_timestamps", !p.vad && p.batch_size == 1 && p.n_processors == 1,
                    "clip_timestamps chooses the audio itself: not with vad, batch_size > 1 or n_processors > 1");
  }
  CHECK_OPTION("prompt_reset_temperature", !std::isnan(p.prompt_reset_temperature), " must not be NaN");
  CHECK_OPTION("best_of", p.best_of >= 1 && p.best_of <= 64, " must be in [1, 64], got " + std::to_string(p.best_of));
  CHECK_OPTION("length_penalty", std::isfinite(p.length_penalty),
               " must be finite (< 0: none), got " + num(p.length_penalty));
  CHECK_OPTION("beam_size", p.beam_size >= 1 && p.beam_size <= 64,
               " must be in [1, 64] (1: greedy), got " + std::to_string(p.beam_size));
  CHECK_OPTION("patience", std::isfinite(p.patience) && p.patience > 0.0f,
               " must be finite and > 0, got " + num(p.patience));
  CHECK_OPTION("repetition_penalty", std::isfinite(p.repetition_penalty) && p.repetition_penalty > 0.0f,
               " must be finite and > 0 (1: none), got " + num(p.repetition_penalty));
  CHECK_OPTION("no_repeat_ngram_size", p.no_repeat_ngram_size >= 0 && p.no_repeat_ngram_size <= 448,
               " must be in [0, 448] (0: none), got " + std::to_string(p.no_repeat_ngram_size));
  CHECK_OPTION("compression_ratio_threshold", !std::isnan(p.compression_ratio_threshold), " must not be NaN");
  CHECK_OPTION("logprob_threshold", !std::isnan(p.logprob_threshold), " must not be NaN");
  CHECK_OPTION("no_speech_threshold", !std::isnan(p.no_speech_threshold), " must not be NaN");
  CHECK_OPTION("max_initial_timestamp", !std::isnan(p.max_initial_timestamp), " must not be NaN (< 0: no limit)");
  CHECK_OPTION("max_context", p.max_context >= -1,
               " must be >= -1 (-1: the model's limit, 0: no previous text), got " + std::to_string(p.max_context));
  CHECK_OPTION("thold_pt", p.thold_pt >= 0.0f && p.thold_pt <= 1.0f, " must be in [0, 1], got " + num(p.thold_pt));
  CHECK_OPTION("thold_ptsum", p.thold_ptsum >= 0.0f && p.thold_ptsum <= 1.0f,
               " must be in [0, 1], got " + num(p.thold_ptsum));
  CHECK_OPTION("max_len", p.max_len >= 0, " must be >= 0 (0: no limit), got " + std::to_string(p.max_len));
  r->speaker_turn = -1;
  if (p.tdrz_enable) {
    r->speaker_turn = decode::speaker_turn_token(st, m.file->vocab().n_file_tokens());
    CHECK_SUPPORTED("tdrz_enable", r->speaker_turn >= 0,
                    "tdrz_enable needs a model with a speaker-turn token (<|startoflm|>, as tinydiarize models have); "
                    "this vocabulary has none");
  }
  r->suppress = p.suppress_nst ? m.suppress : decode::default_suppressed(st);
  for (size_t k = 0; k < p.suppress_tokens.size(); ++k) {
    const int32_t id = p.suppress_tokens[k];
    CHECK_OPTION("suppress_tokens", id >= 0 && id < st.n_vocab,
                 "[" + std::to_string(k) + "] is " + std::to_string(id) + ", outside the model's vocabulary [0, " +
                     std::to_string(st.n_vocab) + ")");
    r->suppress.push_back(id);
  }
  if (!p.suppress_regex.empty()) {
    std::regex re;
    try {
      re = std::regex(p.suppress_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error(ErrorCode::InvalidArgument,
                  "transcribe: suppress_regex '" + p.suppress_regex + "' does not compile: " + e.what(),
                  "suppress_regex");
    }
    // Ordinary text tokens only: end-of-text, timestamps and the other special tokens keep their rules.
    for (int32_t id = 0; id < st.eot; ++id) {
      const std::string_view text = m.tokenizer->token_bytes(id);
      if (std::regex_match(text.begin(), text.end(), re)) r->suppress.push_back(id);
    }
  }
  // With tinydiarize the turn token may be produced, unless the user suppresses it by id.
  if (r->speaker_turn >= 0 &&
      std::find(p.suppress_tokens.begin(), p.suppress_tokens.end(), r->speaker_turn) == p.suppress_tokens.end())
    std::erase(r->suppress, r->speaker_turn);
  std::sort(r->suppress.begin(), r->suppress.end());
  r->suppress.erase(std::unique(r->suppress.begin(), r->suppress.end()), r->suppress.end());
}

// The VAD's own checks name VadOptions' fields; in a request they are TranscribeParams::vad_params'.
void check_vad_params(const VadOptions& o) {
  try {
    vad::check_segment_options(o);
  } catch (const Error& e) {
    throw Error(e.code(), e.what(), "vad_params." + e.field());
  }
}

}  // namespace

std::span<const float> checked_audio(std::span<const float> samples, int64_t offset_ms, int64_t duration_ms,
                                     const char* what) {
  const std::string w = what;
  HARK_CHECK_AS(InvalidArgument, "samples", !samples.empty(), w + ": no audio (0 samples)");
  HARK_CHECK_AS(InvalidArgument, "offset_ms", offset_ms >= 0,
                w + ": offset_ms must be >= 0, got " + std::to_string(offset_ms));
  HARK_CHECK_AS(InvalidArgument, "duration_ms", duration_ms >= 0,
                w + ": duration_ms must be >= 0, got " + std::to_string(duration_ms));
  const size_t offset = static_cast<size_t>(offset_ms) * kSampleRate / 1000;
  // About this audio, not the option's value alone: no field (front ends treat a field's error as
  // a bad option, the same for every input).
  HARK_CHECK_AS(InvalidArgument, "", offset < samples.size(),
                w + ": offset " + std::to_string(offset_ms) + " ms is past the end of the " +
                    std::to_string(samples.size() * 1000 / kSampleRate) + " ms of audio");
  size_t n = samples.size() - offset;
  if (duration_ms > 0) n = std::min(n, static_cast<size_t>(duration_ms) * kSampleRate / 1000);
  // NaN or Inf would poison the spectrogram of a whole window: name the first one.
  for (size_t i = offset; i < offset + n; ++i)
    HARK_CHECK_AS(InvalidArgument, "samples", std::isfinite(samples[i]),
                  w + ": samples[" + std::to_string(i) + "] is " + (std::isnan(samples[i]) ? "NaN" : "infinite") +
                      "; audio must be finite");
  return samples.subspan(offset, n);
}

JobRequest check_request(const LoadedModel& m, std::span<const float> samples, const TranscribeParams& p) {
  const SpecialTokens& st = m.file->vocab().special();
  CHECK_OPTION("n_threads", p.n_threads >= 0, " must be >= 0 (0: the default), got " + std::to_string(p.n_threads));
  CHECK_OPTION("n_processors", p.n_processors >= 1 && p.n_processors <= 64,
               " must be in [1, 64], got " + std::to_string(p.n_processors));
  CHECK_OPTION("max_tokens_per_window", p.max_tokens_per_window >= 0,
               " must be >= 0 (0: the model's limit), got " + std::to_string(p.max_tokens_per_window));
  JobRequest r;
  r.samples = checked_audio(samples, p.offset_ms, p.duration_ms, "transcribe");
  r.offset_units = p.offset_ms / 10;
  r.auto_language = (p.language == "auto" || p.language.empty()) && st.n_languages > 0;
  if (!(p.language == "auto" || p.language.empty())) {
    r.lang = language_index(p.language);
    HARK_CHECK_AS(InvalidArgument, "language", r.lang >= 0,
                  "transcribe: unknown language '" + p.language + "' (use a code such as en, de, zh, or auto)");
    CHECK_SUPPORTED("language", st.n_languages > 0 ? r.lang < st.n_languages : r.lang == 0,
                    "language '" + p.language + "' is not supported by this " +
                        (st.n_languages ? "model" : "English-only model (use en or auto)"));
  }
  CHECK_SUPPORTED("translate", !p.translate || st.n_languages > 0, "translate needs a multilingual model");
  check_decoding(m, p, &r);
  if (p.vad) {
    CHECK_OPTION(
        "vad_model_path", !p.vad_model_path.empty(),
        " is empty but vad needs it: a Silero VAD model in whisper.cpp's format (e.g. ggml-silero-v6.2.0.bin)");
    check_vad_params(p.vad_params);
    HARK_CHECK_AS(InvalidArgument, "vad_params.samples_overlap", std::isfinite(p.vad_params.samples_overlap),
                  "transcribe: vad samples_overlap must be finite, got " + num(p.vad_params.samples_overlap));
    const int64_t end = static_cast<int64_t>((r.samples.size() + 159) / 160);
    int64_t after = 0;
    for (size_t i = 0; i < p.vad_speech.size(); ++i) {
      const VadSegment& v = p.vad_speech[i];
      CHECK_OPTION("vad_speech", v.t0 >= after && v.t0 < v.t1 && v.t1 <= end,
                   "[" + std::to_string(i) + "] = [" + std::to_string(v.t0) + ", " + std::to_string(v.t1) +
                       "] is not a stretch after the one before and inside the audio (0 to " + std::to_string(end) +
                       ", 10 ms units)");
      after = v.t1;
    }
  }
  CHECK_OPTION(
      "batch_size", p.batch_size >= 1 && p.batch_size <= kMaxBatchSize,
      " must be in [1, " + std::to_string(kMaxBatchSize) + "] (1: sequential), got " + std::to_string(p.batch_size));
  if (p.batch_size > 1) {
    CHECK_OPTION("vad_model_path", !p.vad_model_path.empty(),
                 " is empty but batch_size > 1 needs it: a Silero VAD model (the chunks are cut at the pauses it "
                 "finds; e.g. ggml-silero-v6.2.0.bin)");
    CHECK_SUPPORTED("hallucination_silence_threshold", !(p.word_timestamps && p.hallucination_silence_threshold > 0.0f),
                    "hallucination_silence_threshold is not supported with batch_size > 1 (it decodes again from a new "
                    "seek; batched chunks are decoded whole): use batch_size 1");
    CHECK_SUPPORTED("n_processors", p.n_processors == 1,
                    "batch_size > 1 and n_processors > 1 cannot be combined (got n_processors " +
                        std::to_string(p.n_processors) + ")");
    check_vad_params(p.vad_params);
  }
  r.alignment_heads = resolve_alignment_heads(m, p);
  if (!p.initial_prompt.empty()) r.prompt = m.tokenizer->encode(" " + p.initial_prompt);
  if (!p.initial_prompt_tokens.empty()) {
    CHECK_OPTION("initial_prompt_tokens", p.initial_prompt.empty(), ": give initial_prompt or its tokens, not both");
    const int32_t eot = m.file->vocab().special().eot;
    for (int32_t id : p.initial_prompt_tokens)
      CHECK_OPTION("initial_prompt_tokens", id >= 0 && id < eot,
                   ": " + std::to_string(id) + " is not a text token (0.." + std::to_string(eot - 1) + ")");
    r.prompt = p.initial_prompt_tokens;
  }
  // faster-whisper's hotwords and prefix: " " + the text stripped, at most half the text context.
  const size_t room = static_cast<size_t>(std::max(0, m.file->hparams().n_text_ctx / 2 - 1));
  auto words = [&](const std::string& text) {
    std::vector<int32_t> t = m.tokenizer->encode(" " + std::string(trim(text)));
    if (t.size() > room) t.resize(room);
    return t;
  };
  if (!trim(p.hotwords).empty()) r.hotwords = words(p.hotwords);
  if (!trim(p.prefix).empty()) {
    CHECK_SUPPORTED("prefix", p.batch_size == 1,
                    "prefix is not supported with batch_size > 1 (it begins the first window's text; every batched "
                    "chunk is a first window): use batch_size 1");
    r.prefix = words(p.prefix);
  }
  CHECK_SUPPORTED("multilingual", !p.multilingual || st.n_languages > 0,
                  "multilingual needs a multilingual model (this one is English-only)");
  r.n_threads = p.n_threads > 0 ? p.n_threads : m.n_threads;
  return r;
}

#undef CHECK_OPTION
#undef CHECK_SUPPORTED

std::vector<int32_t> window_prompt(const JobRequest& req, std::span<const int32_t> context, int n_text_ctx,
                                   bool has_prefix) {
  const size_t room = static_cast<size_t>(std::max(0, n_text_ctx / 2 - 1));
  std::vector<int32_t> prompt;
  if (!has_prefix)  // faster-whisper leaves the hotwords out where a prefix begins the text
    prompt.assign(req.hotwords.begin(),
                  req.hotwords.begin() + static_cast<std::ptrdiff_t>(std::min(req.hotwords.size(), room)));
  const size_t left = room - prompt.size();
  const size_t skip = context.size() > left ? context.size() - left : 0;
  prompt.insert(prompt.end(), context.begin() + static_cast<std::ptrdiff_t>(skip), context.end());
  return prompt;
}

Transcript empty_transcript(const LoadedModel& m, const JobRequest& req, int job_id) {
  Transcript out;
  out.job_id = job_id;
  out.timings.load_ms = m.file->load_ms();
  out.timings.audio_seconds = static_cast<double>(req.samples.size()) / kSampleRate;
  out.timings.n_threads = req.n_threads;
  // "en" only when it is: asked for, or an English-only model; auto fills it in later.
  const SpecialTokens& st = m.file->vocab().special();
  out.language = st.n_languages == 0 ? "en" : (req.auto_language ? "" : language_code(req.lang));
  return out;
}

}  // namespace hark
