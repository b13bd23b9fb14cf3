#include "transcribe/batched_pipeline.h"

#include <algorithm>
#include <chrono>
#include <string>

#include "decode/batched_search.h"
#include "decode/window_search.h"
#include "frontend/mel.h"
#include "runtime/error.h"
#include "runtime/stopwatch.h"
#include "transcribe/window_pipeline.h"

namespace hark {

namespace {

using Clock = std::chrono::steady_clock;

constexpr int64_t kUnitSamples = kSampleRate / 100;  // one 10 ms unit

}  // namespace

std::vector<AudioChunk> merge_speech_chunks(std::span<const VadSegment> speech, int64_t n_units, int64_t max_units) {
  HARK_CHECK(max_units >= 1, "merge_speech_chunks: max_units must be >= 1, got " + std::to_string(max_units));
  std::vector<AudioChunk> out;
  bool open = false;
  AudioChunk cur;
  for (const VadSegment& seg : speech) {
    const int64_t a = std::clamp<int64_t>(seg.t0, 0, n_units), b = std::clamp<int64_t>(seg.t1, 0, n_units);
    for (int64_t p0 = a; p0 < b; p0 += max_units) {
      const int64_t p1 = std::min(b, p0 + max_units);
      if (open && p1 - cur.t0 <= max_units) {
        cur.t1 = std::max(cur.t1, p1);
        continue;
      }
      int64_t from = p0;
      if (open) {
        from = std::max(p0, cur.t1);  // never back into the chunk before
        out.push_back(cur);
        open = false;
      }
      if (p1 > from) {
        cur = {from, p1};
        open = true;
      }
    }
  }
  if (open) out.push_back(cur);
  return out;
}

Transcript run_batched(const LoadedModel& m, decode::SearchModel& model, const JobRequest& req,
                       const TranscribeParams& p, std::span<const VadSegment> speech, JobControl& ctl,
                       const LongFormHooks& hooks) {
  const auto t_start = Clock::now();
  const SpecialTokens& st = m.file->vocab().special();
  const int n_text_ctx = model.n_text_ctx();

  Transcript out = empty_transcript(m, req, ctl.job().id());
  Timings& tm = out.timings;
  JobLanguage language(m, req, p, out);

  const int64_t n_units = static_cast<int64_t>((req.samples.size() + kUnitSamples - 1) / kUnitSamples);
  const std::vector<AudioChunk> chunks = merge_speech_chunks(speech, n_units, frontend::kWindowFrames);
  DecodePolicy policy = decode_policy(m, req, p, n_text_ctx);
  decode::WindowRequest& wreq = policy.request;
  // Chunks are independent: the hotwords and the initial prompt (if any) before every one, never
  // earlier text.
  wreq.prompt = window_prompt(req, req.prompt, n_text_ctx);

  WindowPipeline pipeline(m, model, req, p, policy.thresholds, n_units);
  const int B = std::min<int>(p.batch_size, std::max<int>(1, static_cast<int>(chunks.size())));
  model.reserve_windows(B);
  JobProgress progress(hooks.on_progress);
  // A lane's slots serve every temperature's search.
  int slots = 1;
  for (float t : policy.temperatures) {
    wreq.temperature = t;
    slots = std::max(slots, decode::search_slots(wreq));
  }
  decode::BatchDecoder dec(model, st, B, slots);

  // Lane l holds its chunk in window l from encode until the chunk's result is taken. Without
  // word timestamps a lane takes the next chunk as soon as its search ends (continuous batching:
  // steps stay full while chunks end at different times). Word timestamps align each chunk
  // against its window in slot 0, which a running lane uses, so then the lanes are filled
  // together and emptied together, after every search of the batch has ended.
  const bool continuous = !p.word_timestamps;
  struct Lane {
    int64_t chunk = -1;  // -1: free
    int pass = 0;        // the temperature it decodes at
    int64_t frames = 0;  // the chunk's mel frames (at most a window)
    int lang = 0;        // the chunk's language (multilingual: its own) and start sequence
    std::vector<int32_t> start;
  };
  std::vector<Lane> lanes(static_cast<size_t>(B));
  struct Result {
    decode::WindowTokens w;
    double ratio = 0.0;
    int64_t frames = 0;
    int lane = 0;
    int lang = 0;
    bool ready = false;
  };
  std::vector<Result> results(chunks.size());
  size_t next_chunk = 0, next_emit = 0;

  auto start_pass = [&](int lane) {
    Lane& ln = lanes[static_cast<size_t>(lane)];
    wreq.temperature = policy.temperatures[static_cast<size_t>(ln.pass)];
    wreq.start = ln.start;
    dec.start(lane, lane, wreq, mix_seed(p.seed, req.offset_units + chunks[static_cast<size_t>(ln.chunk)].t0, ln.pass));
  };
  // Encodes the next chunk into `lane`'s window and starts its search. False: aborted.
  auto fill = [&](int lane) {
    const AudioChunk& c = chunks[next_chunk];
    if (ctl.should_stop() || (hooks.on_encoder_begin && !hooks.on_encoder_begin()) || ctl.should_stop()) return false;
    auto t = Clock::now();
    const size_t s0 = static_cast<size_t>(c.t0 * kUnitSamples);
    const size_t s1 = std::min(req.samples.size(), static_cast<size_t>(c.t1 * kUnitSamples));
    const frontend::LogMel mel =
        frontend::log_mel_spectrogram(req.samples.data() + s0, s1 - s0, m.filters, req.n_threads,
                                      frontend::kWindowSamples, [&ctl] { return ctl.should_stop(); });
    tm.mel_ms += ms_since(t);
    if (mel.aborted) return false;
    Lane& ln = lanes[static_cast<size_t>(lane)];
    ln.chunk = static_cast<int64_t>(next_chunk);
    ln.pass = 0;
    ln.frames = std::min<int64_t>(static_cast<int64_t>(mel.n_content_frames), frontend::kWindowFrames);
    ++next_chunk;
    t = Clock::now();
    model.select_window(lane);
    if (model.encode(frontend::mel_window(mel, 0)) != ComputeStatus::Ok) return false;
    tm.encode_ms += ms_since(t);
    ++tm.n_windows;
    t = Clock::now();
    // The first chunk decides the language of the whole job, as the first window does
    // (multilingual: each chunk its own).
    if (!language.settle(model)) return false;
    ln.lang = language.id();
    ln.start = language.start();
    start_pass(lane);
    tm.decode_ms += ms_since(t);
    return true;
  };

  // A finished chunk's segments, in audio order.
  auto emit = [&](size_t k) {
    const AudioChunk& c = chunks[k];
    const Result& res = results[k];
    // Word timestamps align the chunk against its own window.
    if (p.word_timestamps) model.select_window(res.lane);
    WindowSegments ws = pipeline.segments({&res.w, res.ratio, c.t0, res.frames, res.lang, true, c.t1}, &tm.decode_ms);
    out.windows.push_back(ws.window);
    if (ws.window.skipped_as_silence) return true;
    if (ws.speaker_turn_first && !out.segments.empty()) out.segments.back().speaker_turn_next = true;
    if (ws.aborted) return false;
    for (const Segment& seg : ws.segments) out.segments.push_back(seg);
    if (hooks.on_segments && !ws.segments.empty()) hooks.on_segments(std::move(ws.segments));
    progress.update(c.t1, n_units, 99);
    return true;
  };

  while (!out.aborted) {
    // Free lanes take the next chunks (in the batch-at-a-time mode only when all are free).
    const bool all_free = std::all_of(lanes.begin(), lanes.end(), [](const Lane& l) { return l.chunk < 0; });
    if (continuous || all_free) {
      for (int l = 0; l < B && next_chunk < chunks.size(); ++l) {
        if (lanes[static_cast<size_t>(l)].chunk >= 0) continue;
        if (!fill(l)) {
          out.aborted = true;
          break;
        }
      }
      if (out.aborted) break;
    }
    if (!dec.any_running()) break;
    auto t = Clock::now();
    if (dec.step() != ComputeStatus::Ok) {
      out.aborted = true;
      break;
    }
    // Each ended search: kept, or (OpenAI's decode_with_fallback) decoded again on its window at
    // the next temperature while its text fails the thresholds.
    for (const auto& [lane, w] : dec.finished()) {
      Lane& ln = lanes[static_cast<size_t>(lane)];
      tm.n_decode_tokens += w.n_sampled;
      const double ratio = text_compression_ratio(m, w);
      if (static_cast<size_t>(ln.pass) + 1 < policy.temperatures.size() &&
          decode::needs_fallback(policy.thresholds, ratio, w.avg_logprob, w.no_speech_prob)) {
        if (ln.pass == 0) ++out.n_fallback_windows;
        ++ln.pass;
        if (hooks.on_fallback) {
          const AudioChunk& c = chunks[static_cast<size_t>(ln.chunk)];
          hooks.on_fallback({req.offset_units + c.t0, req.offset_units + c.t1,
                             policy.temperatures[static_cast<size_t>(ln.pass)], ratio, w.avg_logprob});
        }
        start_pass(lane);
        continue;
      }
      results[static_cast<size_t>(ln.chunk)] = {w, ratio, ln.frames, lane, ln.lang, true};
      if (continuous) ln.chunk = -1;
    }
    tm.decode_ms += ms_since(t);
    // Chunks are reported in audio order; with word timestamps once the whole batch has ended.
    if (!continuous && dec.any_running()) continue;
    while (next_emit < next_chunk && results[next_emit].ready && !out.aborted) {
      if (!emit(next_emit)) out.aborted = true;
      results[next_emit].w = {};  // its tokens are segments now
      ++next_emit;
    }
    if (!continuous)
      for (Lane& l : lanes) l.chunk = -1;
  }
  tm.n_decode_steps += dec.n_steps();
  if (!out.aborted) progress.finish();
  tm.total_ms = ms_since(t_start);
  return out;
}

}  // namespace hark
