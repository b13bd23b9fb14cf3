#include "transcribe/job_strategies.h"

#include <algorithm>
#include <chrono>
#include <thread>

#include "runtime/stopwatch.h"
#include "transcribe/vad_audio.h"

namespace hark {

using Clock = std::chrono::steady_clock;

namespace {

// Delivers segments to on_new_segments in audio order while the parts of an n_processors run
// finish in any order: the lowest unfinished part streams live, later parts wait in `pending`
// until every part before them is done. With one part it is a plain pass-through.
class SegmentMerger {
 public:
  SegmentMerger(const TranscribeParams& p, JobControl& ctl, std::vector<size_t> part_lengths)
      : p_(p),
        ctl_(ctl),
        lengths_(std::move(part_lengths)),
        pending_(lengths_.size()),
        done_(lengths_.size(), false),
        percent_(lengths_.size(), 0) {
    for (size_t n : lengths_) total_length_ += n;
  }

  void segments(size_t part, std::vector<Segment>&& segs) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (part == live_) {
      emit(segs);
    } else {
      for (Segment& s : segs) pending_[part].push_back(std::move(s));
    }
  }

  void progress(size_t part, int pct) {
    std::lock_guard<std::mutex> lock(mutex_);
    percent_[part] = pct;
    double done = 0;
    for (size_t k = 0; k < lengths_.size(); ++k)
      done += static_cast<double>(percent_[k]) * static_cast<double>(lengths_[k]);
    const int total = total_length_ ? static_cast<int>(done / static_cast<double>(total_length_)) : 100;
    if (total > reported_) {
      reported_ = total;
      if (p_.on_progress) ctl_.call([&] { p_.on_progress(total); });
    }
  }

  void part_done(size_t part) {
    std::lock_guard<std::mutex> lock(mutex_);
    done_[part] = true;
    while (live_ < done_.size() && done_[live_]) {
      ++live_;
      if (live_ < done_.size()) {
        emit(pending_[live_]);
        pending_[live_].clear();
      }
    }
  }

  // After all parts: whatever is still held back (parts after an aborted one) goes out in order.
  void flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t k = live_; k < pending_.size(); ++k) {
      emit(pending_[k]);
      pending_[k].clear();
    }
  }

 private:
  void emit(const std::vector<Segment>& segs) {
    if (segs.empty()) return;
    total_ += static_cast<int>(segs.size());
    if (!p_.on_new_segments) return;
    NewSegments ns;
    ns.segments = segs;
    ns.n_new = static_cast<int>(segs.size());
    ns.total = total_;
    for (const Segment& s : segs) ns.text += s.text;
    ctl_.call([&] { p_.on_new_segments(ns); });
  }

  const TranscribeParams& p_;
  JobControl& ctl_;
  std::vector<size_t> lengths_;
  size_t total_length_ = 0;
  std::mutex mutex_;
  std::vector<std::vector<Segment>> pending_;
  std::vector<bool> done_;
  std::vector<int> percent_;
  size_t live_ = 0;
  int total_ = 0;
  int reported_ = 0;
};

// vad_map: a VAD-assisted job's processed -> original times (nullptr: none), applied before the
// segments are reported, so callbacks see the caller's timeline.
LongFormHooks hooks_for(size_t part, const TranscribeParams& p, JobControl& ctl, SegmentMerger& merger,
                        const VadTimeMap* vad_map) {
  LongFormHooks h;
  h.on_segments = [part, &merger, vad_map](std::vector<Segment>&& segs) {
    if (vad_map)
      for (Segment& s : segs) vad_map->map(s);
    merger.segments(part, std::move(segs));
  };
  h.on_progress = [part, &merger](int pct) { merger.progress(part, pct); };
  if (p.on_fallback)
    h.on_fallback = [&p, &ctl, vad_map](const Fallback& f) {
      Fallback told = f;
      if (vad_map) {
        told.t0 = vad_map->to_original(f.t0);
        told.t1 = vad_map->to_original(f.t1);
      }
      ctl.call([&] { p.on_fallback(told); });
    };
  if (p.on_encoder_begin)
    h.on_encoder_begin = [&p, &ctl] {
      bool go = true;
      if (!ctl.call([&] { go = p.on_encoder_begin(); })) return false;
      return go;
    };
  return h;
}

// One part of a parallel run must hold at least this much audio, or splitting costs more (an
// encoder window each) than it saves.
constexpr size_t kMinPartSamples = 2 * kSampleRate;

void append(Transcript& all, Transcript&& part) {
  for (Segment& s : part.segments) all.segments.push_back(std::move(s));
  for (const Window& w : part.windows) all.windows.push_back(w);
  all.aborted |= part.aborted;
  Timings& a = all.timings;
  const Timings& b = part.timings;
  a.mel_ms += b.mel_ms;
  a.encode_ms += b.encode_ms;
  a.decode_ms += b.decode_ms;
  a.n_windows += b.n_windows;
  a.n_decode_tokens += b.n_decode_tokens;
  a.n_decode_steps += b.n_decode_steps;
  a.audio_seconds += b.audio_seconds;
}

}  // namespace

namespace {

// What every strategy is given: the checked request, the job's control and the time it started.
struct JobSetup {
  StateImpl& main;
  const StateLender& acquire;
  const TranscribeParams& p;
  const JobRequest& req;
  JobImpl& job;
  JobControl& ctl;
};

// The batched pipeline: the VAD's speech merged into chunks of up to 30 s, decoded in lanes.
Transcript run_batched_strategy(const JobSetup& s) {
  const LoadedModel& m = s.main.model();
  const TranscribeParams& p = s.p;
  const auto t_vad = Clock::now();
  const std::shared_ptr<VadModel> vad_model = m.vad_models->get(p.vad_model_path);  // before any compute
  VadOptions vo = p.vad_params;
  vo.max_speech_duration_s = std::min(vo.max_speech_duration_s, 30.0f);  // a chunk holds at most 30 s
  std::vector<VadSegment> speech;
  if (!s.ctl.should_stop()) speech = vad_model->detect_speech(s.req.samples, vo).segments;
  const double vad_ms = ms_since(t_vad);
  SegmentMerger merger(p, s.ctl, {s.req.samples.size()});
  Transcript out = empty_transcript(m, s.req, s.job.id());
  if (s.job.abort_requested() || s.ctl.should_stop()) {
    out.aborted = true;
  } else {
    try {
      out = s.main.run_batched(s.req, p, speech, s.ctl, hooks_for(0, p, s.ctl, merger, nullptr));
    } catch (...) {
      s.ctl.fail(std::current_exception());
      out.aborted = true;
    }
  }
  merger.part_done(0);
  merger.flush();
  s.ctl.rethrow_if_failed();
  out.timings.vad_ms = vad_ms;
  return out;
}

// The long-form loop over `work`, in n_processors parts side by side (whisper.cpp's
// whisper_full_parallel: equal parts, on 10 ms boundaries, threads shared out); one part is the
// plain sequential run. vad_map: the speech-only strategy's map back to the caller's times.
Transcript run_parts_strategy(const JobSetup& s, const JobRequest& work, const VadTimeMap* vad_map) {
  const TranscribeParams& p = s.p;
  const size_t n_parts = std::clamp<size_t>(static_cast<size_t>(p.n_processors), 1,
                                            std::max<size_t>(1, work.samples.size() / kMinPartSamples));
  std::vector<size_t> bounds(n_parts + 1, 0);
  constexpr size_t kUnit = kSampleRate / 100;
  for (size_t k = 1; k < n_parts; ++k) bounds[k] = work.samples.size() * k / n_parts / kUnit * kUnit;
  bounds[n_parts] = work.samples.size();
  std::vector<size_t> lengths;
  for (size_t k = 0; k < n_parts; ++k) lengths.push_back(bounds[k + 1] - bounds[k]);
  SegmentMerger merger(p, s.ctl, lengths);

  std::vector<JobRequest> parts(n_parts, work);
  for (size_t k = 0; k < n_parts; ++k) {
    parts[k].samples = work.samples.subspan(bounds[k], lengths[k]);
    parts[k].offset_units = work.offset_units + static_cast<int64_t>(bounds[k] / kUnit);
    parts[k].n_threads = std::max(1, work.n_threads / static_cast<int>(n_parts));
    if (k > 0) {  // a part does not know the text before it, nor begins the job's text
      parts[k].prompt.clear();
      parts[k].prefix.clear();
    }
  }

  std::vector<Transcript> results(n_parts);
  auto run_part = [&](size_t k, StateImpl& state) {
    try {
      results[k] = state.run(parts[k], p, s.ctl, hooks_for(k, p, s.ctl, merger, vad_map));
    } catch (...) {
      s.ctl.fail(std::current_exception());  // stops the other parts too
      results[k].aborted = true;
    }
    merger.part_done(k);
  };

  if (s.job.abort_requested()) {
    // Aborted before it started: nothing to do, and nothing to wait for.
    Transcript t = empty_transcript(s.main.model(), s.req, s.job.id());
    t.aborted = true;
    return t;
  }
  std::vector<std::shared_ptr<StateImpl>> extra;
  std::vector<std::thread> workers;
  try {
    for (size_t k = 1; k < n_parts; ++k) extra.push_back(s.acquire(parts[k].n_threads));
  } catch (...) {
    s.ctl.fail(std::current_exception());
  }
  if (extra.size() == n_parts - 1) {
    for (size_t k = 1; k < n_parts; ++k) workers.emplace_back(run_part, k, std::ref(*extra[k - 1]));
    run_part(0, s.main);
    for (std::thread& w : workers) w.join();
  }
  merger.flush();
  s.ctl.rethrow_if_failed();

  Transcript out = std::move(results[0]);
  for (size_t k = 1; k < n_parts; ++k) append(out, std::move(results[k]));
  return out;
}

// VAD-assisted: only the speech is transcribed (cut out and joined, vad_audio.h), by the parts
// strategy, and the times are mapped back to the caller's audio.
Transcript run_speech_only_strategy(const JobSetup& s) {
  const LoadedModel& m = s.main.model();
  const TranscribeParams& p = s.p;
  const auto t_vad = Clock::now();
  // Loaded before any Whisper compute: a missing or invalid file fails the call here.
  const std::shared_ptr<VadModel> vad_model = m.vad_models->get(p.vad_model_path);
  VadAudio speech;
  if (!s.ctl.should_stop()) {
    // The caller's own finding (params.hpp: vad_speech), or the VAD's.
    const std::vector<VadSegment> found =
        p.vad_speech.empty() ? vad_model->detect_speech(s.req.samples, p.vad_params).segments : p.vad_speech;
    speech = cut_speech(s.req.samples, found, p.vad_params.samples_overlap, s.req.offset_units);
  }
  const double vad_ms = ms_since(t_vad);
  if (s.ctl.should_stop() || speech.samples.empty()) {
    // Stopped while the VAD ran, or no speech at all: nothing for Whisper to do.
    Transcript t = empty_transcript(m, s.req, s.job.id());
    t.aborted = s.ctl.should_stop();
    t.timings.vad_ms = vad_ms;
    if (!t.aborted && p.on_progress) s.ctl.call([&] { p.on_progress(100); });
    s.ctl.rethrow_if_failed();
    return t;
  }
  JobRequest work = s.req;
  work.samples = speech.samples;
  work.offset_units = 0;  // the map adds the caller's offset back
  Transcript out = run_parts_strategy(s, work, &speech.map);
  speech.map.map(out);
  out.timings.vad_ms = vad_ms;
  out.timings.audio_seconds = static_cast<double>(s.req.samples.size()) / kSampleRate;  // the caller's audio
  return out;
}

}  // namespace

Transcript transcribe_job(StateImpl& main, const StateLender& acquire, std::span<const float> samples,
                          const TranscribeParams& p) {
  const auto t_start = Clock::now();
  JobRequest req = check_request(main.model(), samples, p);
  if (p.n_threads == 0 && main.default_threads() > 0) req.n_threads = main.default_threads();
  std::shared_ptr<JobImpl> job = job_for(p.job);
  // A job made here for a caller who brought none leaves the registry when the call returns; one
  // the caller made stays until the caller removes it.
  struct ForgetOwnJob {
    int id;
    ~ForgetOwnJob() {
      if (id) jobs::remove(id);
    }
  } forget{p.job ? 0 : job->id()};
  const auto running = job->start_running();
  JobControl ctl(job, p.should_abort);
  const JobSetup setup{main, acquire, p, req, *job, ctl};

  Transcript out = p.batch_size > 1 ? run_batched_strategy(setup)
                   : p.vad          ? run_speech_only_strategy(setup)
                                    : run_parts_strategy(setup, req, nullptr);
  out.job_id = job->id();
  out.timings.n_threads = req.n_threads;  // the job's, shared out among n_processors parts
  out.timings.total_ms = ms_since(t_start);
  return out;
}

}  // namespace hark
