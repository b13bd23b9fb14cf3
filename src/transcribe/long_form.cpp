#include "transcribe/long_form.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "decode/greedy.h"
#include "decode/segments.h"
#include "frontend/mel.h"
#include "runtime/error.h"

namespace hark {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Whisper's defaults for dropping a window as silence: the model thinks no one speaks there and
// is unsure of the text it would produce anyway.
constexpr float kNoSpeechThreshold = 0.6f;
constexpr double kLogprobThreshold = -1.0;
// A window shorter than this at the end of the audio is not decoded (too short to hold a word;
// Whisper-family models tend to invent text for such slivers).
constexpr int64_t kMinTailFrames = 10;

}  // namespace

JobRequest check_request(const LoadedModel& m, std::span<const float> samples, const TranscribeParams& p) {
  const SpecialTokens& st = m.file->vocab().special();
  HARK_CHECK(!samples.empty(), "transcribe: no audio (0 samples)");
  HARK_CHECK(p.offset_ms >= 0 && p.duration_ms >= 0,
             "transcribe: offset_ms and duration_ms must be >= 0, got " + std::to_string(p.offset_ms) + " and " +
                 std::to_string(p.duration_ms));
  HARK_CHECK(p.n_threads >= 0, "transcribe: n_threads must be >= 0, got " + std::to_string(p.n_threads));
  HARK_CHECK(p.n_processors >= 1 && p.n_processors <= 64,
             "transcribe: n_processors must be in [1, 64], got " + std::to_string(p.n_processors));
  HARK_CHECK(p.max_tokens_per_window >= 0,
             "transcribe: max_tokens_per_window must be >= 0, got " + std::to_string(p.max_tokens_per_window));
  const size_t offset = static_cast<size_t>(p.offset_ms) * kSampleRate / 1000;
  HARK_CHECK(offset < samples.size(), "transcribe: offset " + std::to_string(p.offset_ms) + " ms is past the end of the " +
                                          std::to_string(samples.size() * 1000 / kSampleRate) + " ms of audio");
  size_t n = samples.size() - offset;
  if (p.duration_ms > 0) n = std::min(n, static_cast<size_t>(p.duration_ms) * kSampleRate / 1000);
  // NaN or Inf would poison the spectrogram of a whole window: name the first one.
  for (size_t i = 0; i < samples.size(); ++i)
    HARK_CHECK(std::isfinite(samples[i]), "transcribe: sample " + std::to_string(i) + " is " +
                                              (std::isnan(samples[i]) ? "NaN" : "infinite") + "; audio must be finite");

  JobRequest r;
  r.samples = samples.subspan(offset, n);
  r.offset_units = p.offset_ms / 10;
  r.auto_language = (p.language == "auto" || p.language.empty()) && st.n_languages > 0;
  if (!(p.language == "auto" || p.language.empty())) {
    r.lang = language_index(p.language);
    HARK_CHECK(r.lang >= 0, "transcribe: unknown language '" + p.language + "' (use a code such as en, de, zh, or auto)");
    HARK_CHECK(st.n_languages > 0 ? r.lang < st.n_languages : r.lang == 0,
               "transcribe: language '" + p.language + "' is not supported by this " +
                   (st.n_languages ? "model" : "English-only model"));
  }
  HARK_CHECK(!p.translate || st.n_languages > 0, "transcribe: translate needs a multilingual model");
  if (!p.initial_prompt.empty()) r.prompt = m.tokenizer->encode(" " + p.initial_prompt);
  r.n_threads = p.n_threads > 0 ? p.n_threads : m.n_threads;
  return r;
}

Transcript run_long_form(const LoadedModel& m, WhisperRunner& runner, const JobRequest& req,
                         const TranscribeParams& p, JobControl& ctl, const LongFormHooks& hooks) {
  const auto t_start = Clock::now();
  const HParams& hp = m.file->hparams();
  const SpecialTokens& st = m.file->vocab().special();

  Transcript out;
  out.job_id = ctl.job().id();
  Timings& tm = out.timings;
  tm.load_ms = m.file->load_ms();
  tm.audio_seconds = static_cast<double>(req.samples.size()) / kSampleRate;

  auto t = Clock::now();
  const frontend::LogMel mel = frontend::log_mel_spectrogram(req.samples.data(), req.samples.size(), m.filters,
                                                             req.n_threads, frontend::kWindowSamples,
                                                             [&ctl] { return ctl.should_stop(); });
  tm.mel_ms = ms_since(t);
  if (mel.aborted) {
    out.aborted = true;
    out.language = st.n_languages == 0 ? "en" : (req.auto_language ? "en" : language_code(req.lang));
    tm.total_ms = ms_since(t_start);
    return out;
  }

  decode::WindowRequest wreq;
  wreq.rules.timestamps = p.timestamps;
  wreq.rules.suppress = m.suppress;
  wreq.rules.blank_tokens = m.blank;
  wreq.max_tokens = p.max_tokens_per_window > 0 ? std::min(p.max_tokens_per_window, hp.n_text_ctx / 2) : hp.n_text_ctx / 2;

  const auto content = static_cast<int64_t>(mel.n_content_frames);
  int64_t seek = 0;
  int lang = req.lang;
  bool language_known = !req.auto_language;
  out.language = st.n_languages == 0 ? "en" : (req.auto_language ? "" : language_code(lang));
  std::vector<int32_t> start = m.start_sequence(lang, p.translate, p.timestamps);
  std::vector<int32_t> prompt = req.prompt;

  int progress = 0;
  auto report_progress = [&](int pct) {  // only rises
    if (pct <= progress) return;
    progress = pct;
    if (hooks.on_progress) hooks.on_progress(pct);
  };

  while (seek < content) {
    if (ctl.should_stop()) {
      out.aborted = true;
      break;
    }
    const int64_t window_frames = std::min<int64_t>(frontend::kWindowFrames, content - seek);
    if (window_frames < kMinTailFrames && seek > 0) break;
    if (hooks.on_encoder_begin) {
      if (!hooks.on_encoder_begin() || ctl.should_stop()) {
        out.aborted = true;
        break;
      }
    }
    const std::vector<float> window = frontend::mel_window(mel, static_cast<size_t>(seek));

    t = Clock::now();
    if (runner.encode(window) != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    tm.encode_ms += ms_since(t);
    ++tm.n_windows;

    t = Clock::now();
    if (!language_known) {
      // The first window decides the language of the whole job, as in Whisper.
      std::vector<float> logits;
      if (runner.decode(std::vector<int32_t>{st.sot}, 0, &logits) != ComputeStatus::Ok) {
        out.aborted = true;
        break;
      }
      ++tm.n_decode_tokens;
      lang = decode::detect_language(st, logits);
      out.language = language_code(lang);
      start = m.start_sequence(lang, p.translate, p.timestamps);
      language_known = true;
    }
    wreq.start = start;
    wreq.prompt = prompt;
    const decode::WindowTokens w = decode::decode_window_greedy(runner, st, wreq);
    tm.decode_ms += ms_since(t);
    tm.n_decode_tokens += w.n_steps;
    if (w.aborted) {
      out.aborted = true;
      break;
    }
    out.windows.push_back({req.offset_units + seek, req.offset_units + seek + window_frames, false});

    // Silence: the model says no one speaks, and is unsure of what it would write.
    if (w.no_speech_prob > kNoSpeechThreshold && w.avg_logprob < kLogprobThreshold && p.timestamps) {
      out.windows.back().skipped_as_silence = true;
      seek += window_frames;
      report_progress(static_cast<int>(std::min<int64_t>(100, seek * 100 / std::max<int64_t>(content, 1))));
      continue;
    }

    const decode::WindowResult r = decode::split_window(st, w.tokens, req.offset_units + seek, window_frames);
    std::vector<Segment> fresh;
    for (const decode::RawSegment& rs : r.segments) {
      Segment seg;
      seg.t0 = rs.t0;
      seg.t1 = rs.t1;
      seg.text = m.tokenizer->decode(rs.tokens);
      for (size_t k = 0; k < rs.tokens.size(); ++k) {
        TokenData td;
        td.id = rs.tokens[k];
        td.text = std::string(m.tokenizer->token_bytes(td.id));
        td.p = w.probs[rs.positions[k]];
        seg.tokens.push_back(std::move(td));
      }
      prompt.insert(prompt.end(), rs.tokens.begin(), rs.tokens.end());
      fresh.push_back(seg);
      out.segments.push_back(std::move(seg));
    }
    if (!fresh.empty() && hooks.on_segments) hooks.on_segments(std::move(fresh));
    seek += std::max<int64_t>(r.consumed_frames, 1);
    report_progress(static_cast<int>(std::min<int64_t>(100, seek * 100 / std::max<int64_t>(content, 1))));
  }
  // A tail too short to decode still completes the job.
  if (!out.aborted && progress < 100) report_progress(100);
  if (out.language.empty()) out.language = "en";
  tm.total_ms = ms_since(t_start);
  return out;
}

}  // namespace hark
