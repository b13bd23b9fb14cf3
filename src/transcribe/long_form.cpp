#include "transcribe/long_form.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <regex>

#include "decode/fallback.h"
#include "decode/greedy.h"
#include "decode/segments.h"
#include "decode/token_timestamps.h"
#include "frontend/mel.h"
#include "runtime/error.h"
#include "transcribe/language_detect.h"
#include "transcribe/timestamp_watch.h"
#include "transcribe/word_timing.h"
#include "transcribe/max_len.h"
#include "vad/segments.h"

namespace hark {

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Above this temperature the kept window's text is not used as prompt for the next ones
// (OpenAI's prompt_reset_on_temperature: `result.temperature > 0.5`).
constexpr float kPromptResetTemperature = 0.5f;
// A window shorter than this at the end of the audio is not decoded (too short to hold a word;
// Whisper-family models tend to invent text for such slivers).
constexpr int64_t kMinTailFrames = 10;

}  // namespace


namespace {

std::string num(double v) { return std::to_string(v); }

void check_decoding(const LoadedModel& m, const TranscribeParams& p, JobRequest* r) {
  const SpecialTokens& st = m.file->vocab().special();
  HARK_CHECK(std::isfinite(p.temperature) && p.temperature >= 0.0f,
             "transcribe: temperature must be finite and >= 0, got " + num(p.temperature));
  HARK_CHECK(std::isfinite(p.temperature_inc) && p.temperature_inc >= 0.0f,
             "transcribe: temperature_inc must be finite and >= 0 (0: no fallback), got " + num(p.temperature_inc));
  HARK_CHECK(p.best_of >= 1 && p.best_of <= 64, "transcribe: best_of must be in [1, 64], got " + std::to_string(p.best_of));
  HARK_CHECK(std::isfinite(p.length_penalty), "transcribe: length_penalty must be finite (< 0: none), got " + num(p.length_penalty));
  HARK_CHECK(p.beam_size >= 1 && p.beam_size <= 64,
             "transcribe: beam_size must be in [1, 64] (1: greedy), got " + std::to_string(p.beam_size));
  HARK_CHECK(std::isfinite(p.patience) && p.patience > 0.0f, "transcribe: patience must be finite and > 0, got " + num(p.patience));
  HARK_CHECK(!std::isnan(p.compression_ratio_threshold) && !std::isnan(p.logprob_threshold) &&
                 !std::isnan(p.no_speech_threshold),
             "transcribe: compression_ratio_threshold, logprob_threshold and no_speech_threshold must not be NaN");
  HARK_CHECK(!std::isnan(p.max_initial_timestamp), "transcribe: max_initial_timestamp must not be NaN (< 0: no limit)");
  HARK_CHECK(p.max_context >= -1, "transcribe: max_context must be >= -1 (-1: the model's limit, 0: no previous text), got " +
                                      std::to_string(p.max_context));
  HARK_CHECK(p.thold_pt >= 0.0f && p.thold_pt <= 1.0f, "transcribe: thold_pt must be in [0, 1], got " + num(p.thold_pt));
  HARK_CHECK(p.thold_ptsum >= 0.0f && p.thold_ptsum <= 1.0f,
             "transcribe: thold_ptsum must be in [0, 1], got " + num(p.thold_ptsum));
  HARK_CHECK(p.max_len >= 0, "transcribe: max_len must be >= 0 (0: no limit), got " + std::to_string(p.max_len));
  r->speaker_turn = -1;
  if (p.tdrz_enable) {
    r->speaker_turn = decode::speaker_turn_token(st, m.file->vocab().n_file_tokens());
    HARK_CHECK(r->speaker_turn >= 0, "transcribe: tdrz_enable needs a model with a speaker-turn token "
                                     "(<|startoflm|>, as tinydiarize models have); this vocabulary has none");
  }
  r->suppress = p.suppress_nst ? m.suppress : decode::default_suppressed(st);
  for (int32_t id : p.suppress_tokens) {
    HARK_CHECK(id >= 0 && id < st.n_vocab, "transcribe: suppress_tokens holds " + std::to_string(id) +
                                               ", outside the model's vocabulary [0, " + std::to_string(st.n_vocab) + ")");
    r->suppress.push_back(id);
  }
  if (!p.suppress_regex.empty()) {
    std::regex re;
    try {
      re = std::regex(p.suppress_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      throw Error("transcribe: suppress_regex '" + p.suppress_regex + "' does not compile: " + e.what());
    }
    // Ordinary text tokens only: end-of-text, timestamps and the other special tokens keep their rules.
    for (int32_t id = 0; id < st.eot; ++id) {
      const std::string_view text = m.tokenizer->token_bytes(id);
      if (std::regex_match(text.begin(), text.end(), re)) r->suppress.push_back(id);
    }
  }
  // With tinydiarize the turn token may be produced, unless the user suppresses it by id.
  if (r->speaker_turn >= 0 && std::find(p.suppress_tokens.begin(), p.suppress_tokens.end(), r->speaker_turn) == p.suppress_tokens.end())
    std::erase(r->suppress, r->speaker_turn);
  std::sort(r->suppress.begin(), r->suppress.end());
  r->suppress.erase(std::unique(r->suppress.begin(), r->suppress.end()), r->suppress.end());
}

// OpenAI's single_timestamp_ending: the window's tokens (end-of-text aside) end in one timestamp
// after a text token, i.e. the model said "no more speech after this".
bool single_timestamp_ending(const SpecialTokens& st, std::span<const int32_t> tokens) {
  size_t n = tokens.size();
  while (n > 0 && tokens[n - 1] == st.eot) --n;
  return n >= 2 && !st.is_timestamp(tokens[n - 2]) && st.is_timestamp(tokens[n - 1]);
}

}  // namespace

// Token t0/t1 of one segment from the probabilities recorded at each token's step. (A search
// that recorded none leaves every token unsure: times shared by text length.)
void set_token_times(const SpecialTokens& st, const decode::WindowTokens& w, const decode::RawSegment& rs,
                     int64_t window_offset, const TranscribeParams& p, Segment* seg) {
  std::vector<decode::TimedTokenInput> in;
  for (size_t k = 0; k < rs.tokens.size(); ++k) {
    const size_t at = rs.positions[k];
    in.push_back({seg->tokens[k].text, at < w.ts_probs.size() ? w.ts_probs[at] : decode::TimestampProb{}});
  }
  const std::vector<decode::TokenTime> times =
      decode::assign_token_times(st, in, window_offset, seg->t0, seg->t1, p.thold_pt, p.thold_ptsum);
  for (size_t k = 0; k < times.size(); ++k) {
    seg->tokens[k].t0 = times[k].t0;
    seg->tokens[k].t1 = times[k].t1;
  }
}

uint64_t mix_seed(uint64_t seed, int64_t seek, int pass) {
  uint64_t z = seed ^ (0x9E3779B97F4A7C15ull * static_cast<uint64_t>(seek + 1)) ^
               (0xC2B2AE3D27D4EB4Full * static_cast<uint64_t>(pass + 1));
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::span<const float> checked_audio(std::span<const float> samples, int64_t offset_ms, int64_t duration_ms,
                                     const char* what) {
  const std::string w = what;
  HARK_CHECK(!samples.empty(), w + ": no audio (0 samples)");
  HARK_CHECK(offset_ms >= 0 && duration_ms >= 0, w + ": offset_ms and duration_ms must be >= 0, got " +
                                                     std::to_string(offset_ms) + " and " + std::to_string(duration_ms));
  const size_t offset = static_cast<size_t>(offset_ms) * kSampleRate / 1000;
  HARK_CHECK(offset < samples.size(), w + ": offset " + std::to_string(offset_ms) + " ms is past the end of the " +
                                          std::to_string(samples.size() * 1000 / kSampleRate) + " ms of audio");
  size_t n = samples.size() - offset;
  if (duration_ms > 0) n = std::min(n, static_cast<size_t>(duration_ms) * kSampleRate / 1000);
  // NaN or Inf would poison the spectrogram of a whole window: name the first one.
  for (size_t i = offset; i < offset + n; ++i)
    HARK_CHECK(std::isfinite(samples[i]), w + ": sample " + std::to_string(i) + " is " +
                                              (std::isnan(samples[i]) ? "NaN" : "infinite") + "; audio must be finite");
  return samples.subspan(offset, n);
}

JobRequest check_request(const LoadedModel& m, std::span<const float> samples, const TranscribeParams& p) {
  const SpecialTokens& st = m.file->vocab().special();
  HARK_CHECK(p.n_threads >= 0, "transcribe: n_threads must be >= 0, got " + std::to_string(p.n_threads));
  HARK_CHECK(p.n_processors >= 1 && p.n_processors <= 64,
             "transcribe: n_processors must be in [1, 64], got " + std::to_string(p.n_processors));
  HARK_CHECK(p.max_tokens_per_window >= 0,
             "transcribe: max_tokens_per_window must be >= 0, got " + std::to_string(p.max_tokens_per_window));
  JobRequest r;
  r.samples = checked_audio(samples, p.offset_ms, p.duration_ms, "transcribe");
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
  check_decoding(m, p, &r);
  if (p.vad) {
    HARK_CHECK(!p.vad_model_path.empty(), "transcribe: vad needs vad_model_path, a Silero VAD model in whisper.cpp's "
                                          "format (e.g. ggml-silero-v6.2.0.bin)");
    vad::check_segment_options(p.vad_params);
    HARK_CHECK(std::isfinite(p.vad_params.samples_overlap),
               "transcribe: vad samples_overlap must be finite, got " + num(p.vad_params.samples_overlap));
  }
  HARK_CHECK(p.batch_size >= 1 && p.batch_size <= kMaxBatchSize,
             "transcribe: batch_size must be in [1, " + std::to_string(kMaxBatchSize) + "] (1: sequential), got " +
                 std::to_string(p.batch_size));
  if (p.batch_size > 1) {
    HARK_CHECK(!p.vad_model_path.empty(), "transcribe: batch_size > 1 needs vad_model_path, a Silero VAD model "
                                          "(the chunks are cut at the pauses it finds; e.g. ggml-silero-v6.2.0.bin)");
    HARK_CHECK(!(p.word_timestamps && p.hallucination_silence_threshold > 0.0f),
               "transcribe: hallucination_silence_threshold is not supported with batch_size > 1 (it decodes again "
               "from a new seek; batched chunks are decoded whole): use batch_size 1");
    HARK_CHECK(p.n_processors == 1, "transcribe: batch_size > 1 and n_processors > 1 cannot be combined (got n_processors " +
                                        std::to_string(p.n_processors) + ")");
    vad::check_segment_options(p.vad_params);
  }
  r.alignment_heads = resolve_alignment_heads(m, p);
  if (!p.initial_prompt.empty()) r.prompt = m.tokenizer->encode(" " + p.initial_prompt);
  r.n_threads = p.n_threads > 0 ? p.n_threads : m.n_threads;
  return r;
}

DecodePolicy decode_policy(const LoadedModel& m, const JobRequest& req, const TranscribeParams& p, int n_text_ctx) {
  DecodePolicy d;
  decode::WindowRequest& wreq = d.request;
  wreq.rules.timestamps = p.timestamps;
  wreq.rules.suppress = req.suppress;
  wreq.rules.blank_tokens = m.blank;
  wreq.rules.suppress_blank = p.suppress_blank;
  wreq.rules.max_initial_timestamp_index =
      p.max_initial_timestamp < 0 ? -1 : static_cast<int>(std::lround(std::min(p.max_initial_timestamp, 60.0f) / 0.02f));
  wreq.max_tokens = p.max_tokens_per_window > 0 ? std::min(p.max_tokens_per_window, n_text_ctx / 2) : n_text_ctx / 2;
  wreq.best_of = p.best_of;
  wreq.length_penalty = p.length_penalty;
  wreq.beam_size = p.beam_size;  // used at temperature 0 only (best_of at T > 0), as OpenAI
  wreq.patience = p.patience;
  d.thresholds.compression_ratio = p.compression_ratio_threshold;
  d.thresholds.logprob = p.logprob_threshold;
  d.thresholds.no_speech = p.no_speech_threshold;
  // The temperatures of each window: the first, then up by temperature_inc to 1.0.
  d.temperatures = {p.temperature};
  if (p.temperature_inc > 0.0f)
    for (int k = 1; p.temperature + static_cast<float>(k) * p.temperature_inc <= 1.0f + 1e-6f; ++k)
      d.temperatures.push_back(p.temperature + static_cast<float>(k) * p.temperature_inc);
  return d;
}

double text_compression_ratio(const LoadedModel& m, const decode::WindowTokens& w) {
  const SpecialTokens& st = m.file->vocab().special();
  std::vector<int32_t> text;
  for (int32_t id : w.tokens)
    if (st.is_text(id)) text.push_back(id);
  return decode::compression_ratio(m.tokenizer->decode(text));
}

std::vector<Segment> window_segments(const LoadedModel& m, const decode::WindowTokens& w,
                                     std::span<const decode::RawSegment> raw, double compression_ratio,
                                     int64_t token_time_offset, const TranscribeParams& p, bool token_timestamps) {
  const SpecialTokens& st = m.file->vocab().special();
  std::vector<Segment> out;
  for (const decode::RawSegment& rs : raw) {
    Segment seg;
    seg.t0 = rs.t0;
    seg.t1 = rs.t1;
    seg.text = m.tokenizer->decode(rs.tokens);
    seg.temperature = w.temperature;
    seg.avg_logprob = w.avg_logprob;
    seg.compression_ratio = compression_ratio;
    seg.no_speech_prob = w.no_speech_prob;
    seg.speaker_turn_next = rs.speaker_turn_next;
    for (size_t k = 0; k < rs.tokens.size(); ++k) {
      TokenData td;
      td.id = rs.tokens[k];
      td.text = std::string(m.tokenizer->token_bytes(td.id));
      td.p = w.probs[rs.positions[k]];
      td.logp = w.logprobs[rs.positions[k]];
      seg.tokens.push_back(std::move(td));
    }
    if (token_timestamps) set_token_times(st, w, rs, token_time_offset, p, &seg);
    out.push_back(std::move(seg));
  }
  return out;
}

void keep_token_times_inside(std::vector<Segment>& segments) {
  for (Segment& seg : segments)
    for (TokenData& td : seg.tokens) {
      if (td.t0 < 0) continue;
      td.t0 = std::clamp(td.t0, seg.t0, seg.t1);
      td.t1 = std::clamp(td.t1, td.t0, seg.t1);
    }
}

std::vector<Segment> wrap_to_max_len(const LoadedModel& m, std::vector<Segment> segments, const TranscribeParams& p) {
  return wrap_segments(std::move(segments), p.max_len, p.split_on_word, [&m](std::span<const TokenData> toks) {
    std::vector<int32_t> ids;
    for (const TokenData& td : toks) ids.push_back(td.id);
    return m.tokenizer->decode(ids);
  });
}

JobLanguage::JobLanguage(const LoadedModel& m, const JobRequest& req, const TranscribeParams& p, Transcript& out)
    : m_(m), p_(p), out_(out), lang_(req.lang), known_(!req.auto_language),
      start_(m.start_sequence(req.lang, p.translate, p.timestamps)) {
  // "en" only when it is: asked for, or an English-only model; auto fills it in at settle().
  const SpecialTokens& st = m.file->vocab().special();
  out.language = st.n_languages == 0 ? "en" : (req.auto_language ? "" : language_code(lang_));
}

bool JobLanguage::settle(decode::Model& model) {
  if (known_) return true;
  const LanguageGuess g = guess_language(m_.file->vocab().special(), model);
  if (g.aborted) return false;
  ++out_.timings.n_decode_steps;
  lang_ = g.id;
  out_.language = language_code(lang_);
  out_.language_prob = g.probs[static_cast<size_t>(lang_)];
  start_ = m_.start_sequence(lang_, p_.translate, p_.timestamps);
  known_ = true;
  return true;
}

Transcript start_transcript(const LoadedModel& m, const JobRequest& req, JobControl& ctl) {
  Transcript out;
  out.job_id = ctl.job().id();
  out.timings.load_ms = m.file->load_ms();
  out.timings.audio_seconds = static_cast<double>(req.samples.size()) / kSampleRate;
  return out;
}

Transcript run_long_form(const LoadedModel& m, decode::Model& model, const JobRequest& req,
                         const TranscribeParams& p, JobControl& ctl, const LongFormHooks& hooks) {
  const auto t_start = Clock::now();
  const SpecialTokens& st = m.file->vocab().special();
  const int n_text_ctx = model.n_text_ctx();

  Transcript out = start_transcript(m, req, ctl);
  Timings& tm = out.timings;
  JobLanguage language(m, req, p, out);

  auto t = Clock::now();
  const frontend::LogMel mel = frontend::log_mel_spectrogram(req.samples.data(), req.samples.size(), m.filters,
                                                             req.n_threads, frontend::kWindowSamples,
                                                             [&ctl] { return ctl.should_stop(); });
  tm.mel_ms = ms_since(t);
  if (mel.aborted) {
    out.aborted = true;
    tm.total_ms = ms_since(t_start);
    return out;
  }

  // max_len cuts segments at token times, so it needs them (as in whisper.cpp).
  const bool token_timestamps = p.token_timestamps || p.max_len > 0;
  DecodePolicy policy = decode_policy(m, req, p, n_text_ctx);
  decode::WindowRequest& wreq = policy.request;
  const decode::Thresholds& thresholds = policy.thresholds;
  const std::vector<float>& temperatures = policy.temperatures;

  const auto content = static_cast<int64_t>(mel.n_content_frames);
  int64_t seek = 0;

  // OpenAI's prompt bookkeeping: all_tokens = the initial prompt, then every kept window's text;
  // a window's prompt is all_tokens[reset_since:], with reset_since moved to the end after a
  // window when the previous text must not condition the next (no_context, high temperature).
  const std::vector<int32_t>& initial = req.prompt;
  std::vector<int32_t> all_tokens = initial;
  size_t reset_since = 0;
  const bool condition_on_previous = !p.no_context && p.max_context != 0;
  const size_t room = static_cast<size_t>(std::max(0, n_text_ctx / 2 - 1));
  auto window_prompt = [&] {
    const size_t from = p.carry_initial_prompt ? std::max(initial.size(), reset_since) : reset_since;
    std::vector<int32_t> previous(all_tokens.begin() + static_cast<std::ptrdiff_t>(std::min(from, all_tokens.size())),
                                  all_tokens.end());
    if (p.max_context >= 0 && previous.size() > static_cast<size_t>(p.max_context))
      previous.erase(previous.begin(), previous.end() - p.max_context);
    std::vector<int32_t> prompt;
    if (p.carry_initial_prompt) {
      // The carried prompt stays in front; the previous text yields its oldest tokens first.
      prompt.assign(initial.begin(), initial.begin() + static_cast<std::ptrdiff_t>(std::min(initial.size(), room)));
      const size_t left = room - prompt.size();
      if (previous.size() > left) previous.erase(previous.begin(), previous.end() - static_cast<std::ptrdiff_t>(left));
    } else if (previous.size() > room) {
      previous.erase(previous.begin(), previous.end() - static_cast<std::ptrdiff_t>(room));
    }
    prompt.insert(prompt.end(), previous.begin(), previous.end());
    return prompt;
  };

  WordTimer words(m, model, p, req.alignment_heads, req.offset_units);
  // With tinydiarize, each window's last segment reaches on_segments with the next window's
  // segments: that window may open with the turn that ends it.
  std::vector<Segment> held;

  int progress = 0;
  auto report_progress = [&](int pct) {  // only rises
    if (pct <= progress) return;
    progress = pct;
    if (hooks.on_progress) hooks.on_progress(pct);
  };

  // Inside a window, the text's latest timestamp says how far the decoding got.
  int64_t window_end = 0;
  TimestampWatch watch(model, st.timestamp_begin, [&](int64_t frames) {
    const int64_t done = std::min(seek + frames, window_end);
    report_progress(static_cast<int>(std::min<int64_t>(99, done * 100 / std::max<int64_t>(content, 1))));
  });

  while (seek < content) {
    if (ctl.should_stop()) {
      out.aborted = true;
      break;
    }
    const int64_t window_frames = std::min<int64_t>(frontend::kWindowFrames, content - seek);
    if (window_frames < kMinTailFrames && seek > 0) break;
    window_end = seek + window_frames;
    if (hooks.on_encoder_begin) {
      if (!hooks.on_encoder_begin() || ctl.should_stop()) {
        out.aborted = true;
        break;
      }
    }
    const std::vector<float> window = frontend::mel_window(mel, static_cast<size_t>(seek));

    t = Clock::now();
    if (model.encode(window) != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    tm.encode_ms += ms_since(t);
    ++tm.n_windows;

    t = Clock::now();
    if (!language.settle(model)) {
      out.aborted = true;
      break;
    }
    wreq.start = language.start();
    wreq.prompt = window_prompt();

    // Temperature fallback (OpenAI's decode_with_fallback).
    decode::WindowTokens w;
    double ratio = 0.0;
    bool aborted = false;
    for (size_t k = 0; k < temperatures.size(); ++k) {
      wreq.temperature = temperatures[k];
      wreq.seed = mix_seed(p.seed, req.offset_units + seek, static_cast<int>(k));
      watch.start_window();
      w = decode::decode_window(watch, st, wreq);
      tm.n_decode_tokens += w.n_sampled;
      tm.n_decode_steps += w.n_steps;
      if (w.aborted) {
        aborted = true;
        break;
      }
      ratio = text_compression_ratio(m, w);
      if (!decode::needs_fallback(thresholds, ratio, w.avg_logprob, w.no_speech_prob)) break;
      if (k + 1 < temperatures.size() && k == 0) ++out.n_fallback_windows;
    }
    tm.decode_ms += ms_since(t);
    if (aborted) {
      out.aborted = true;
      break;
    }
    out.windows.push_back({req.offset_units + seek, req.offset_units + seek + window_frames, false});

    // Silence: the model says no one speaks, and is unsure of what it would write.
    if (decode::is_silence(thresholds, w.avg_logprob, w.no_speech_prob)) {
      out.windows.back().skipped_as_silence = true;
      seek += window_frames;
      report_progress(static_cast<int>(std::min<int64_t>(100, seek * 100 / std::max<int64_t>(content, 1))));
      continue;
    }

    decode::WindowResult r = decode::split_window(st, w.tokens, req.offset_units + seek, window_frames, req.speaker_turn);
    if (p.single_segment && !r.segments.empty()) {
      // The window's text as one segment, from its first opening time to the end of its audio.
      decode::RawSegment one;
      one.t0 = r.segments.front().t0;
      one.t1 = req.offset_units + seek + window_frames;
      for (const decode::RawSegment& rs : r.segments) {
        one.tokens.insert(one.tokens.end(), rs.tokens.begin(), rs.tokens.end());
        one.positions.insert(one.positions.end(), rs.positions.begin(), rs.positions.end());
        one.speaker_turn_next = one.speaker_turn_next || rs.speaker_turn_next;
      }
      r.segments.assign(1, std::move(one));
    }
    if (p.single_segment) r.consumed_frames = window_frames;
    // A turn before this window's first text ends the previous window's last segment (held back
    // from on_segments until now for this).
    if (r.speaker_turn_first && !out.segments.empty()) {
      out.segments.back().speaker_turn_next = true;
      if (!held.empty()) held.back().speaker_turn_next = true;
    }
    std::vector<Segment> fresh =
        window_segments(m, w, r.segments, ratio, req.offset_units + seek, p, token_timestamps);
    int64_t next_seek = seek + std::max<int64_t>(r.consumed_frames, 1);
    if (p.word_timestamps) {
      // Words, refined segment bounds and the next seek from the last word (word_timing.h).
      t = Clock::now();
      const WordOutcome wo = words.run({seek, window_frames, content, next_seek, single_timestamp_ending(st, w.tokens),
                                        language.id(), p.translate},
                                       fresh);
      tm.decode_ms += ms_since(t);
      if (wo.aborted) {
        out.aborted = true;
        break;
      }
      next_seek = wo.next_seek;
      if (wo.drop_window) {  // a leading hallucination: nothing of this window is kept
        seek = next_seek;
        report_progress(static_cast<int>(std::min<int64_t>(100, seek * 100 / std::max<int64_t>(content, 1))));
        continue;
      }
      if (token_timestamps) keep_token_times_inside(fresh);
    }
    // max_len last: it cuts at token times, and hands each part the words that start in it.
    fresh = wrap_to_max_len(m, std::move(fresh), p);
    for (const Segment& seg : fresh) {
      for (const TokenData& td : seg.tokens) all_tokens.push_back(td.id);
      out.segments.push_back(seg);
    }
    if (!condition_on_previous || w.temperature > kPromptResetTemperature) reset_since = all_tokens.size();
    if (hooks.on_segments) {
      std::vector<Segment> report = std::move(held);
      held.clear();
      report.insert(report.end(), std::make_move_iterator(fresh.begin()), std::make_move_iterator(fresh.end()));
      if (req.speaker_turn >= 0 && !report.empty()) {
        held.push_back(std::move(report.back()));
        report.pop_back();
      }
      if (!report.empty()) hooks.on_segments(std::move(report));
    }
    seek = next_seek;
    report_progress(static_cast<int>(std::min<int64_t>(100, seek * 100 / std::max<int64_t>(content, 1))));
  }
  if (!held.empty() && hooks.on_segments) hooks.on_segments(std::move(held));
  // A tail too short to decode still completes the job.
  if (!out.aborted && progress < 100) report_progress(100);
  tm.total_ms = ms_since(t_start);
  return out;
}

}  // namespace hark
