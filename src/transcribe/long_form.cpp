#include "transcribe/long_form.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iterator>
#include <utility>
#include <vector>

#include "decode/greedy.h"
#include "frontend/mel.h"
#include "runtime/stopwatch.h"
#include "transcribe/timestamp_watch.h"
#include "transcribe/window_pipeline.h"

namespace hark {

namespace {

using Clock = std::chrono::steady_clock;

// A window shorter than this at the end of the audio is not decoded (too short to hold a word;
// Whisper-family models tend to invent text for such slivers).
constexpr int64_t kMinTailFrames = 10;
constexpr double kFramesPerSecond = 100.0;  // log-mel frames: 10 ms hops

// clip_timestamps (seconds: start, end, ...) as frame ranges within [0, content], as OpenAI's
// transcribe() makes its seek_clips: an odd count ends at the content's end; none is the whole.
std::vector<std::pair<int64_t, int64_t>> seek_clips(const std::vector<float>& seconds, int64_t content) {
  std::vector<int64_t> points;
  for (float s : seconds)
    points.push_back(std::min<int64_t>(content, std::llround(static_cast<double>(s) * kFramesPerSecond)));
  if (points.empty()) points.push_back(0);
  if (points.size() % 2 == 1) points.push_back(content);
  std::vector<std::pair<int64_t, int64_t>> clips;
  for (size_t i = 0; i + 1 < points.size(); i += 2) clips.emplace_back(points[i], points[i + 1]);
  return clips;
}

}  // namespace

Transcript run_long_form(const LoadedModel& m, decode::SearchModel& model, const JobRequest& req,
                         const TranscribeParams& p, JobControl& ctl, const LongFormHooks& hooks) {
  const auto t_start = Clock::now();
  const SpecialTokens& st = m.file->vocab().special();
  const int n_text_ctx = model.n_text_ctx();

  Transcript out = empty_transcript(m, req, ctl.job().id());
  Timings& tm = out.timings;
  JobLanguage language(m, req, p, out);

  auto t = Clock::now();
  const frontend::LogMel mel =
      frontend::log_mel_spectrogram(req.samples.data(), req.samples.size(), m.filters, req.n_threads,
                                    frontend::kWindowSamples, [&ctl] { return ctl.should_stop(); });
  tm.mel_ms = ms_since(t);
  if (mel.aborted) {
    out.aborted = true;
    tm.total_ms = ms_since(t_start);
    return out;
  }

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
  const size_t half = static_cast<size_t>(std::max(0, n_text_ctx / 2 - 1));
  // A window's context: the carried initial prompt and earlier text in what room the hotwords
  // leave (window_prompt() puts them in front).
  auto context = [&](bool has_prefix) {
    const size_t room = half - (has_prefix ? 0 : std::min(half, req.hotwords.size()));
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

  WindowPipeline pipeline(m, model, req, p, thresholds, content);
  // With tinydiarize, each window's last segment reaches on_segments with the next window's
  // segments: that window may open with the turn that ends it.
  std::vector<Segment> held;

  JobProgress progress(hooks.on_progress);
  // Inside a window, the text's latest timestamp says how far the decoding got.
  int64_t window_end = 0;
  TimestampWatch watch(model, st.timestamp_begin,
                       [&](int64_t frames) { progress.update(std::min(seek + frames, window_end), content, 99); });

  // The clips to decode, in frames (OpenAI's seek_clips): the whole audio, or clip_timestamps.
  const std::vector<std::pair<int64_t, int64_t>> clips = seek_clips(p.clip_timestamps, content);
  size_t clip = 0;
  seek = clips.front().first;
  // The prefix begins the first window decoded (after <|0.00|> with timestamps: the text starts
  // at the window's start), and only that one.
  std::vector<int32_t> prefix;
  if (!req.prefix.empty()) {
    if (p.timestamps) prefix.push_back(st.timestamp_begin);
    prefix.insert(prefix.end(), req.prefix.begin(), req.prefix.end());
  }
  while (clip < clips.size()) {
    if (ctl.should_stop()) {
      out.aborted = true;
      break;
    }
    const auto [clip_start, clip_end] = clips[clip];
    seek = std::max(seek, clip_start);
    if (seek >= clip_end) {
      if (++clip < clips.size()) seek = clips[clip].first;
      continue;
    }
    const int64_t window_frames = std::min<int64_t>(frontend::kWindowFrames, clip_end - seek);
    if (window_frames < kMinTailFrames && seek > 0) {
      seek = clip_end;  // too short to hold a word: the next clip, if any
      continue;
    }
    window_end = seek + window_frames;
    if (hooks.on_encoder_begin) {
      if (!hooks.on_encoder_begin() || ctl.should_stop()) {
        out.aborted = true;
        break;
      }
    }
    const std::vector<float> window =
        frontend::mel_window(mel, static_cast<size_t>(seek), static_cast<size_t>(window_frames));

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
    wreq.forced = std::move(prefix);
    prefix.clear();
    wreq.prompt = window_prompt(req, context(!wreq.forced.empty()), n_text_ctx, !wreq.forced.empty());

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
      if (k + 1 < temperatures.size()) {
        if (k == 0) ++out.n_fallback_windows;
        if (hooks.on_fallback)
          hooks.on_fallback(
              {req.offset_units + seek, req.offset_units + window_end, temperatures[k + 1], ratio, w.avg_logprob});
      }
    }
    tm.decode_ms += ms_since(t);
    if (aborted) {
      out.aborted = true;
      break;
    }

    WindowSegments ws = pipeline.segments({&w, ratio, seek, window_frames, language.id()}, &tm.decode_ms);
    out.windows.push_back(ws.window);
    if (!ws.window.skipped_as_silence && ws.speaker_turn_first && !out.segments.empty()) {
      // A turn before this window's first text ends the previous window's last segment (held
      // back from on_segments until now for this).
      out.segments.back().speaker_turn_next = true;
      if (!held.empty()) held.back().speaker_turn_next = true;
    }
    if (ws.aborted) {
      out.aborted = true;
      break;
    }
    if (!ws.window.skipped_as_silence && !ws.dropped) {
      for (const Segment& seg : ws.segments) {
        for (const TokenData& td : seg.tokens) all_tokens.push_back(td.id);
        out.segments.push_back(seg);
      }
      if (!condition_on_previous || w.temperature > p.prompt_reset_temperature) reset_since = all_tokens.size();
      if (hooks.on_segments) {
        std::vector<Segment> report = std::move(held);
        held.clear();
        report.insert(report.end(), std::make_move_iterator(ws.segments.begin()),
                      std::make_move_iterator(ws.segments.end()));
        if (req.speaker_turn >= 0 && !report.empty()) {
          held.push_back(std::move(report.back()));
          report.pop_back();
        }
        if (!report.empty()) hooks.on_segments(std::move(report));
      }
    }
    seek = ws.next_seek;
    progress.update(seek, content);
  }
  if (!held.empty() && hooks.on_segments) hooks.on_segments(std::move(held));
  // A tail too short to decode still completes the job.
  if (!out.aborted) progress.finish();
  tm.total_ms = ms_since(t_start);
  return out;
}

}  // namespace hark
