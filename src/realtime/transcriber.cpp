// The streaming transcriber: capture (the source's thread) writes the WAV and the ring; one
// worker thread takes audio from the ring into the slicer and transcribes on its own State:
// partial results of the open slice when it has caught up with capture, a final one when the
// slice closes. Events are built and delivered on the worker thread.
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "audio/audio.h"
#include "hark/hark.hpp"
#include "realtime/sample_ring.h"
#include "realtime/slicer.h"
#include "runtime/error.h"
#include "runtime/stopwatch.h"

namespace hark::realtime {
namespace {

constexpr double kDefaultAudioSec = 30;  // whisper.rn's default realtimeAudioSec

struct Resolved {  // the options with whisper.rn's fallbacks applied, in samples
  size_t max_samples, slice_samples, min_samples, partial_samples, ring_samples;
};

Resolved resolve(const RealtimeOptions& o) {
  HARK_CHECK(o.audio_min_sec >= 0, "realtime: audio_min_sec must be >= 0");
  HARK_CHECK(o.partial_sec >= 0, "realtime: partial_sec must be >= 0");
  HARK_CHECK(o.vad_ms >= 0 && o.vad_thold >= 0 && o.vad_freq_thold >= 0, "realtime: VAD options must be >= 0");
  HARK_CHECK_AS(InvalidArgument, "audio_output_bits", o.audio_output_bits == 16 || o.audio_output_bits == 32,
                "realtime: audio_output_bits must be 16 or 32, got " + std::to_string(o.audio_output_bits));
  HARK_CHECK_AS(InvalidArgument, "vad_threshold", o.vad_threshold >= 0 && o.vad_threshold <= 1,
                "realtime: vad_threshold must be in [0, 1], got " + std::to_string(o.vad_threshold));
  HARK_CHECK_AS(InvalidArgument, "vad_silence_ms", o.vad_silence_ms >= 0,
                "realtime: vad_silence_ms must be >= 0, got " + std::to_string(o.vad_silence_ms));
  HARK_CHECK_AS(InvalidArgument, "ring_sec", std::isfinite(o.ring_sec),
                "realtime: ring_sec must be a number of seconds (<= 0: the default)");
  Resolved r{};
  const double audio_sec = o.audio_sec > 0 ? o.audio_sec : kDefaultAudioSec;
  const double slice_sec = o.audio_slice_sec > 0 && o.audio_slice_sec < audio_sec ? o.audio_slice_sec : audio_sec;
  r.max_samples = size_t(audio_sec * kSampleRate);
  r.slice_samples = std::max<size_t>(size_t(slice_sec * kSampleRate), 1);
  r.min_samples = std::min(size_t(o.audio_min_sec * kSampleRate), r.slice_samples);
  r.partial_samples = size_t(o.partial_sec * kSampleRate);
  const double ring_sec = o.ring_sec > 0 ? o.ring_sec : std::min(2 * slice_sec + 5, audio_sec + 1);
  r.ring_samples = std::max<size_t>(size_t(ring_sec * kSampleRate), 1);
  return r;
}

class Transcriber final : public RealtimeTranscriber {
 public:
  // `own` is a state of the transcriber's own, or null when it runs on the caller's `state`.
  Transcriber(std::unique_ptr<State> own, State& state, std::shared_ptr<AudioSource> source, const RealtimeOptions& o,
              EventSink on_event)
      : opts_(o),
        r_(resolve(o)),
        source_(std::move(source)),
        on_event_(std::move(on_event)),
        own_state_(std::move(own)),
        state_(&state),
        ring_(r_.ring_samples),
        slicer_(slicer_config(o, r_)),
        live_(source_->live()) {
    base_ = o.transcribe ? *o.transcribe : TranscribeParams{};
    job_ = jobs::create();
    if (!o.audio_output_path.empty())
      wav_ = std::make_unique<audio::WavWriter>(
          o.audio_output_path, kSampleRate, 1,
          o.audio_output_bits == 16 ? audio::WavWriter::Format::kPcm16 : audio::WavWriter::Format::kFloat32);
    worker_ = std::thread([this] { work(); });
    try {
      source_->start([this](std::span<const float> s) { on_samples(s); },
                     [this](const std::string& error) { on_end(error); });
    } catch (...) {
      on_end("");
      worker_.join();
      throw;
    }
  }
  ~Transcriber() override {
    stop();
    wait();
    jobs::remove(job_->id());
  }

  void stop() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_requested_ = true;
    }
    cv_.notify_all();  // a blocked capture callback gives up waiting for room
    source_->stop();   // its on_end ends capture
  }
  void next_slice() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (capture_ended_) return;
      // A gap of no samples where capture is now: the worker closes the open slice there.
      if (gaps_.empty() || gaps_.back().at != queued_) gaps_.push_back({queued_, 0});
    }
    cv_.notify_all();
  }
  void wait() override {
    std::lock_guard<std::mutex> lock(join_mu_);
    if (worker_.joinable()) worker_.join();
  }
  bool running() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return !finished_;
  }
  int job_id() const override { return job_->id(); }

 private:
  static SlicerConfig slicer_config(const RealtimeOptions& o, const Resolved& r) {
    SlicerConfig c;
    c.slice_samples = r.slice_samples;
    c.min_samples = r.min_samples;
    c.energy_vad = o.use_vad;
    c.energy.vad_ms = o.vad_ms;
    c.energy.vad_thold = o.vad_thold;
    c.energy.freq_thold = o.vad_freq_thold;
    if (!o.vad_model_path.empty()) c.silero = VadModel::load(o.vad_model_path);
    c.silero_threshold = o.vad_threshold;
    c.silero_silence_samples = size_t(o.vad_silence_ms) * kSampleRate / 1000;
    return c;
  }

  // Capture thread: record, then queue for transcription. A live source's audio that finds the
  // ring full is dropped and counted (reported by the worker); other sources wait for room.
  void on_samples(std::span<const float> s) {
    std::unique_lock<std::mutex> lock(mu_);
    if (capture_ended_) return;
    const size_t n = std::min(s.size(), r_.max_samples - recorded_);
    s = s.first(n);
    if (wav_ && n) {
      try {
        wav_->write(s.data(), n);
      } catch (const std::exception& e) {
        if (wav_error_.empty()) wav_error_ = e.what();
      }
    }
    recorded_ += n;
    while (!s.empty()) {
      const size_t put = ring_.write(s);
      queued_ += int64_t(put);
      s = s.subspan(put);
      if (s.empty()) break;
      if (stop_requested_ || capture_ended_) break;  // capture is over: the rest was never "captured"
      if (live_) {
        dropped_ += int64_t(s.size());
        if (!gaps_.empty() && gaps_.back().at == queued_)
          gaps_.back().n += int64_t(s.size());
        else
          gaps_.push_back({queued_, int64_t(s.size())});
        break;
      }
      cv_.notify_all();
      cv_.wait(lock, [&] { return ring_.space() > 0 || stop_requested_ || capture_ended_; });
    }
    if (recorded_ >= r_.max_samples) capture_ended_ = true;  // realtimeAudioSec reached
    cv_.notify_all();
  }

  void on_end(const std::string& error) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      capture_ended_ = true;
      if (source_error_.empty()) source_error_ = error;
    }
    cv_.notify_all();
  }

  RealtimeEvent make_event(int code, const std::string& error) {
    RealtimeEvent e;
    e.job_id = job_->id();
    e.code = code;
    e.error = error;
    e.slices = slices_;
    e.slice_index = slices_.empty() ? 0 : slices_.back().index;
    if (!slices_.empty()) e.data = slices_.back().data;
    std::lock_guard<std::mutex> lock(mu_);
    e.is_capturing = !capture_ended_;
    e.recording_time_ms = double(recorded_) * 1000.0 / kSampleRate;
    e.dropped_samples = dropped_;
    return e;
  }

  void emit(RealtimeEvent e) {
    if (!on_event_) return;
    try {
      on_event_(e);
    } catch (...) {  // the caller's exception must not kill the worker; nothing to report it to
    }
  }

  // The open slice (partial) or the one just closed (final) transcribed and reported.
  void transcribe_slice(bool final) {
    const std::span<const float> audio = slicer_.slice();
    RealtimeSlice s;
    s.index = slice_index_;
    s.final = final;
    s.t0 = slicer_.start_sample() / 160;
    s.t1 = (slicer_.start_sample() + int64_t(audio.size())) / 160;
    if (job_->abort_requested()) return;
    const auto t0 = std::chrono::steady_clock::now();
    if (!audio.empty() && slicer_.had_speech()) {
      TranscribeParams p = base_;
      p.job = nullptr;
      p.should_abort = [this, user = base_.should_abort] { return job_->abort_requested() || (user && user()); };
      if (!prev_text_.empty()) p.initial_prompt = prev_text_;
      if (opts_.n_threads > 0) p.n_threads = opts_.n_threads;
      try {
        Transcript t = state_->transcribe(audio, p);
        if (t.aborted && job_->abort_requested()) return;  // the stream ends: work() marks the slice
        s.data.result = t.text();
        for (Segment& seg : t.segments) {  // times from the start of the recording
          seg.t0 += s.t0;
          seg.t1 += s.t0;
          for (Word& w : seg.words) w.t0 += s.t0, w.t1 += s.t0;
          for (TokenData& tk : seg.tokens)
            if (tk.t0 >= 0) tk.t0 += s.t0, tk.t1 += s.t0;
        }
        s.data.segments = std::move(t.segments);
      } catch (const std::exception& ex) {
        s.code = kCodeTranscribeFailed;
        s.error = ex.what();
      }
    }
    s.process_time_ms = ms_since(t0);
    if (!slices_.empty() && slices_.back().index == s.index)
      slices_.back() = s;
    else
      slices_.push_back(s);
    if (final && opts_.prompt_previous_slice) {
      prev_text_ = s.data.result;
      if (prev_text_.empty()) prev_text_ = base_.initial_prompt;  // nothing heard: back to the user's prompt
    }
    if (final) ++slice_index_;
    RealtimeEvent e = make_event(s.code, s.error);
    e.process_time_ms = s.process_time_ms;
    emit(std::move(e));
  }

  // abort: the open slice's audio is dropped untranscribed; its entry (a partial result, or a new
  // empty one) says so with whisper.rn's code for an aborted transcription.
  void mark_aborted() {
    if (slices_.empty() || slices_.back().index != slice_index_) {
      RealtimeSlice s;
      s.index = slice_index_;
      s.t0 = slicer_.start_sample() / 160;
      slices_.push_back(s);
    }
    RealtimeSlice& s = slices_.back();
    s.t1 = (slicer_.start_sample() + int64_t(slicer_.slice().size())) / 160;
    s.code = kCodeAborted;
    s.error.clear();
  }

  void report_vad_changes() {
    static constexpr const char* kNames[] = {"speech_start", "speech_continue", "speech_end"};
    for (const VadChange& c : slicer_.take_vad_changes()) {
      if (!opts_.vad_events) continue;
      RealtimeEvent e = make_event(0, "");
      e.vad = kNames[int(c.type)];
      e.vad_confidence = c.confidence;
      e.vad_t = c.sample / 160;
      emit(std::move(e));
    }
  }

  // Feeds audio to the slicer, transcribing each slice it closes.
  void slice_up(std::span<const float> audio, size_t* last_partial) {
    for (size_t off = 0; off < audio.size();) {
      off += slicer_.append(audio.subspan(off));
      report_vad_changes();
      if (slicer_.closed()) {
        transcribe_slice(true);
        slicer_.next();
        *last_partial = 0;
      }
    }
  }

  void work() {
    prev_text_ = base_.initial_prompt;
    std::vector<float> buf;
    std::vector<Gap> gaps;
    int64_t taken = 0;        // ring samples the worker has taken so far
    size_t last_partial = 0;  // open-slice size at its last partial result
    int64_t dropped_reported = 0;
    bool wav_reported = false;
    for (;;) {
      bool ended = false, caught_up = false;
      int64_t dropped = 0;
      std::string wav_error;
      buf.clear();
      gaps.clear();
      {
        std::unique_lock<std::mutex> lock(mu_);
        // Timed: jobs::abort(job_id) sets a flag of the job's without waking this thread.
        while (!cv_.wait_for(lock, std::chrono::milliseconds(100), [&] {
          return ring_.size() > 0 || !gaps_.empty() || capture_ended_ || dropped_ != dropped_reported ||
                 job_->abort_requested();
        })) {
        }
        ring_.drain_into(&buf);
        gaps.swap(gaps_);  // every gap so far lies within or at the end of what was just drained
        ended = capture_ended_;
        dropped = dropped_;
        wav_error = wav_error_;
      }
      cv_.notify_all();  // room in the ring for a waiting capture
      if (dropped != dropped_reported) {
        emit(make_event(kCodeOverflow, "capture ring overflow: " + std::to_string(dropped - dropped_reported) +
                                           " samples dropped (transcription is slower than real time; the saved "
                                           "WAV has them; the slice ends at the gap)"));
        dropped_reported = dropped;
      }
      if (!wav_error.empty() && !wav_reported) {
        emit(make_event(kCodeSourceFailed, "recording: " + wav_error));
        wav_reported = true;
      }
      // Audio on both sides of a gap is not continuous: the open slice closes there, and the next
      // starts after the dropped audio, so its times are times of the recording.
      size_t pos = 0;
      for (const Gap& g : gaps) {
        const size_t at = size_t(g.at - taken);
        slice_up(std::span<const float>(buf).subspan(pos, at - pos), &last_partial);
        pos = at;
        if (!slicer_.slice().empty()) {
          transcribe_slice(true);
          slicer_.next();
          last_partial = 0;
        }
        slicer_.skip(g.n);
      }
      slice_up(std::span<const float>(buf).subspan(pos), &last_partial);
      taken += int64_t(buf.size());
      if (ended || job_->abort_requested()) break;
      {
        std::lock_guard<std::mutex> lock(mu_);
        caught_up = ring_.size() == 0;
      }
      const size_t open = slicer_.slice().size();
      if (caught_up && r_.partial_samples > 0 && open >= std::max<size_t>(r_.min_samples, 1) &&
          open - last_partial >= r_.partial_samples && slicer_.had_speech()) {
        transcribe_slice(false);
        last_partial = open;
      }
    }
    const bool aborted = job_->abort_requested();
    if (aborted) on_end("");  // capture ends here, whatever the source still delivers
    source_->stop();          // joins a source thread that ended by itself or hit realtimeAudioSec
    if (!slicer_.slice().empty() && !aborted) transcribe_slice(true);
    if (aborted && !slicer_.slice().empty()) mark_aborted();
    if (wav_) {
      try {
        wav_->close();
      } catch (...) {  // the header was already right after the last write
      }
    }
    std::string source_error;
    bool by_action;
    {
      std::lock_guard<std::mutex> lock(mu_);
      source_error = source_error_;
      by_action = stop_requested_ || aborted;
    }
    RealtimeEvent last = make_event(source_error.empty() ? 0 : kCodeSourceFailed, source_error);
    last.is_capturing = false;
    last.is_stopped_by_action = by_action;
    emit(std::move(last));
    std::lock_guard<std::mutex> lock(mu_);
    finished_ = true;
  }

  RealtimeOptions opts_;
  Resolved r_;
  std::shared_ptr<AudioSource> source_;
  EventSink on_event_;
  TranscribeParams base_;
  std::shared_ptr<Job> job_;
  std::unique_ptr<State> own_state_;
  State* state_;
  std::unique_ptr<audio::WavWriter> wav_;

  mutable std::mutex mu_;  // guards ring_ and the capture flags/counters below
  std::condition_variable cv_;
  SampleRing ring_;
  size_t recorded_ = 0;
  int64_t queued_ = 0;  // samples written to the ring so far
  int64_t dropped_ = 0;
  struct Gap {
    int64_t at;  // the ring sample (counted from the first) the dropped audio came before
    int64_t n;   // 0: not a loss but next_slice()'s cut
  };
  std::vector<Gap> gaps_;  // not yet taken by the worker
  bool capture_ended_ = false;
  bool stop_requested_ = false;
  bool finished_ = false;
  std::string source_error_, wav_error_;

  // Worker thread only.
  Slicer slicer_;
  bool live_;
  std::vector<RealtimeSlice> slices_;
  int slice_index_ = 0;
  std::string prev_text_;

  std::mutex join_mu_;
  std::thread worker_;
};

}  // namespace
}  // namespace hark::realtime

namespace hark {

std::unique_ptr<RealtimeTranscriber> RealtimeTranscriber::start(Context& ctx, std::shared_ptr<AudioSource> source,
                                                                const RealtimeOptions& options, EventSink on_event) {
  HARK_CHECK(source != nullptr, "realtime: no audio source");
  std::unique_ptr<State> own = ctx.new_state(options.n_threads);
  State& state = *own;
  return std::make_unique<realtime::Transcriber>(std::move(own), state, std::move(source), options,
                                                 std::move(on_event));
}

std::unique_ptr<RealtimeTranscriber> RealtimeTranscriber::start(State& state, std::shared_ptr<AudioSource> source,
                                                                const RealtimeOptions& options, EventSink on_event) {
  HARK_CHECK(source != nullptr, "realtime: no audio source");
  return std::make_unique<realtime::Transcriber>(nullptr, state, std::move(source), options, std::move(on_event));
}

}  // namespace hark
