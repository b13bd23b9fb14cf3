// Context: one loaded model, one backend (with its thread pool), one job at a time; and the
// long-form transcription loop (Whisper's): cut the log-mel into 30 s windows, decode each one,
// keep the complete segments, and start the next window at the last complete timestamp, with the
// text so far as the prompt.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <mutex>
#include <thread>

#include "backend/registry.h"
#include "decode/greedy.h"
#include "decode/segments.h"
#include "decode/suppress.h"
#include "frontend/mel.h"
#include "hark/hark.hpp"
#include "model/model_file.h"
#include "model/tokenizer.h"
#include "model/whisper_runner.h"
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

int default_threads() {
  const unsigned hw = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(hw == 0 ? 4u : hw, 1u, 8u));
}

ModelInfo make_info(const ModelFile& m) {
  const HParams& hp = m.hparams();
  ModelInfo i;
  i.path = m.path();
  i.size_name = hp.size_name();
  i.weight_type = dtype_name(hp.weight_type());
  i.multilingual = hp.multilingual();
  i.n_vocab = hp.n_vocab;
  i.n_audio_ctx = hp.n_audio_ctx;
  i.n_audio_state = hp.n_audio_state;
  i.n_audio_head = hp.n_audio_head;
  i.n_audio_layer = hp.n_audio_layer;
  i.n_text_ctx = hp.n_text_ctx;
  i.n_text_state = hp.n_text_state;
  i.n_text_head = hp.n_text_head;
  i.n_text_layer = hp.n_text_layer;
  i.n_mels = hp.n_mels;
  i.ftype = hp.ftype;
  i.file_bytes = m.file_bytes();
  i.tensor_bytes = m.tensor_bytes();
  i.mapped = m.mapped();
  i.load_ms = m.load_ms();
  return i;
}

class ContextImpl final : public Context {
 public:
  ContextImpl(const std::string& path, const ContextParams& params) {
    Device* dev = Registry::global().find(params.device);
    if (!dev) {
      std::string names;
      for (Device* d : Registry::global().devices()) names += std::string(names.empty() ? "" : ", ") + d->name();
      throw Error("unknown device '" + params.device + "' (available: " + names + ")");
    }
    HARK_CHECK(params.n_threads >= 0, "n_threads must be >= 0 (0 = automatic), got " + std::to_string(params.n_threads));
    n_threads_ = params.n_threads > 0 ? params.n_threads : default_threads();
    LoadOptions lo;
    lo.populate = true;
    model_ = ModelFile::open(path, lo);
    backend_ = dev->init_backend({n_threads_});
    tokenizer_ = std::make_unique<Tokenizer>(model_->vocab());
    runner_ = std::make_unique<WhisperRunner>(*model_, *backend_);
    suppress_ = decode::non_speech_tokens(*tokenizer_);
    for (int32_t id : decode::default_suppressed(model_->vocab().special())) suppress_.push_back(id);
    blank_ = decode::blank_tokens(*tokenizer_);
    filters_ = model_->mel_filters();
    info_ = make_info(*model_);
  }

  const ModelInfo& info() const override { return info_; }

  Transcript transcribe(std::span<const float> samples, const TranscribeParams& params) override;

 private:
  std::vector<int32_t> start_sequence(int lang, bool translate, bool timestamps) const;

  std::unique_ptr<ModelFile> model_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<WhisperRunner> runner_;
  std::vector<int32_t> suppress_, blank_;
  frontend::MelFilters filters_;
  ModelInfo info_;
  int n_threads_ = 1;
  std::mutex job_mutex_;  // one job at a time: the runner's KV cache and compute memory are shared
};

std::vector<int32_t> ContextImpl::start_sequence(int lang, bool translate, bool timestamps) const {
  const SpecialTokens& st = model_->vocab().special();
  std::vector<int32_t> s = {st.sot};
  if (st.n_languages > 0) {  // English-only models take no language or task token
    s.push_back(st.language_token(lang));
    s.push_back(translate ? st.translate : st.transcribe);
  }
  if (!timestamps) s.push_back(st.no_timestamps);
  return s;
}

Transcript ContextImpl::transcribe(std::span<const float> samples, const TranscribeParams& p) {
  const auto t_start = Clock::now();
  std::lock_guard<std::mutex> lock(job_mutex_);
  const HParams& hp = model_->hparams();
  const SpecialTokens& st = model_->vocab().special();

  // ---- check the request before any work ----
  HARK_CHECK(!samples.empty(), "transcribe: no audio (0 samples)");
  HARK_CHECK(p.offset_ms >= 0 && p.duration_ms >= 0,
             "transcribe: offset_ms and duration_ms must be >= 0, got " + std::to_string(p.offset_ms) + " and " +
                 std::to_string(p.duration_ms));
  HARK_CHECK(p.n_threads >= 0, "transcribe: n_threads must be >= 0, got " + std::to_string(p.n_threads));
  const size_t offset = static_cast<size_t>(p.offset_ms) * kSampleRate / 1000;
  HARK_CHECK(offset < samples.size(), "transcribe: offset " + std::to_string(p.offset_ms) + " ms is past the end of the " +
                                          std::to_string(samples.size() * 1000 / kSampleRate) + " ms of audio");
  size_t n = samples.size() - offset;
  if (p.duration_ms > 0) n = std::min(n, static_cast<size_t>(p.duration_ms) * kSampleRate / 1000);
  int lang = 0;
  const bool auto_lang = p.language == "auto" || p.language.empty();
  if (!auto_lang) {
    lang = language_index(p.language);
    HARK_CHECK(lang >= 0, "transcribe: unknown language '" + p.language + "' (use a code such as en, de, zh, or auto)");
    HARK_CHECK(st.n_languages > 0 ? lang < st.n_languages : lang == 0,
               "transcribe: language '" + p.language + "' is not supported by this " +
                   (st.n_languages ? "model" : "English-only model"));
  }
  HARK_CHECK(!p.translate || st.n_languages > 0, "transcribe: translate needs a multilingual model");
  std::vector<int32_t> prompt;
  if (!p.initial_prompt.empty()) prompt = tokenizer_->encode(" " + p.initial_prompt);

  backend_->set_n_threads(p.n_threads > 0 ? p.n_threads : n_threads_);
  backend_->set_abort_callback(p.should_abort ? AbortCallback(p.should_abort) : AbortCallback());
  struct ResetAbort {
    Backend& b;
    ~ResetAbort() { b.set_abort_callback(nullptr); }
  } reset_abort{*backend_};

  Transcript out;
  Timings& tm = out.timings;
  tm.load_ms = model_->load_ms();
  tm.audio_seconds = static_cast<double>(n) / kSampleRate;

  auto t = Clock::now();
  const frontend::LogMel mel =
      frontend::log_mel_spectrogram(samples.data() + offset, n, filters_, p.n_threads > 0 ? p.n_threads : n_threads_);
  tm.mel_ms = ms_since(t);

  decode::WindowRequest req;
  req.rules.timestamps = p.timestamps;
  req.rules.suppress = suppress_;
  req.rules.blank_tokens = blank_;
  req.max_tokens = p.max_tokens_per_window > 0 ? std::min(p.max_tokens_per_window, hp.n_text_ctx / 2) : hp.n_text_ctx / 2;

  const auto content = static_cast<int64_t>(mel.n_content_frames);
  const int64_t offset_units = p.offset_ms / 10;
  int64_t seek = 0;
  bool language_known = !auto_lang || st.n_languages == 0;
  out.language = st.n_languages == 0 ? "en" : (auto_lang ? "" : p.language);
  std::vector<int32_t> start = start_sequence(lang, p.translate, p.timestamps);

  int progress = 0;
  while (seek < content) {
    if (p.should_abort && p.should_abort()) {
      out.aborted = true;
      break;
    }
    const int64_t window_frames = std::min<int64_t>(frontend::kWindowFrames, content - seek);
    if (window_frames < kMinTailFrames && seek > 0) break;
    const std::vector<float> window = frontend::mel_window(mel, static_cast<size_t>(seek));

    t = Clock::now();
    if (runner_->encode(window) != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    tm.encode_ms += ms_since(t);
    ++tm.n_windows;

    t = Clock::now();
    if (!language_known) {
      // The first window decides the language of the whole job, as in Whisper.
      std::vector<float> logits;
      if (runner_->decode(std::vector<int32_t>{st.sot}, 0, &logits) != ComputeStatus::Ok) {
        out.aborted = true;
        break;
      }
      ++tm.n_decode_tokens;
      lang = decode::detect_language(st, logits);
      out.language = language_code(lang);
      start = start_sequence(lang, p.translate, p.timestamps);
      language_known = true;
    }
    req.start = start;
    req.prompt = prompt;
    const decode::WindowTokens w = decode::decode_window_greedy(*runner_, st, req);
    tm.decode_ms += ms_since(t);
    tm.n_decode_tokens += w.n_steps;
    if (w.aborted) {
      out.aborted = true;
      break;
    }
    out.windows.push_back({offset_units + seek, offset_units + seek + window_frames, false});

    // Silence: the model says no one speaks, and is unsure of what it would write.
    if (w.no_speech_prob > kNoSpeechThreshold && w.avg_logprob < kLogprobThreshold && p.timestamps) {
      out.windows.back().skipped_as_silence = true;
      seek += window_frames;
      continue;
    }

    const decode::WindowResult r = decode::split_window(st, w.tokens, offset_units + seek, window_frames);
    for (const decode::RawSegment& rs : r.segments) {
      Segment seg;
      seg.t0 = rs.t0;
      seg.t1 = rs.t1;
      seg.text = tokenizer_->decode(rs.tokens);
      for (size_t k = 0; k < rs.tokens.size(); ++k) {
        TokenData td;
        td.id = rs.tokens[k];
        td.text = std::string(tokenizer_->token_bytes(td.id));
        td.p = w.probs[rs.positions[k]];
        seg.tokens.push_back(std::move(td));
      }
      prompt.insert(prompt.end(), rs.tokens.begin(), rs.tokens.end());
      out.segments.push_back(std::move(seg));
      if (p.on_segment) p.on_segment(out.segments.back(), static_cast<int>(out.segments.size()) - 1);
    }
    seek += std::max<int64_t>(r.consumed_frames, 1);
    progress = static_cast<int>(std::min<int64_t>(100, seek * 100 / std::max<int64_t>(content, 1)));
    if (p.on_progress) p.on_progress(progress);
  }
  // A tail too short to decode still completes the job.
  if (!out.aborted && progress < 100 && p.on_progress) p.on_progress(100);
  if (out.language.empty()) out.language = "en";
  tm.total_ms = ms_since(t_start);  // this job only: a loaded context serves many jobs
  return out;
}

}  // namespace

std::unique_ptr<Context> Context::load(const std::string& model_path, const ContextParams& params) {
  return std::make_unique<ContextImpl>(model_path, params);
}

}  // namespace hark
