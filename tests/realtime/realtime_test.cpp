// The streaming transcriber on the micro model: slices and their final text, stop() mid-slice,
// chunking and delivery speed that must not change the result, overflow that must be reported,
// and the recording (sample-exact, a valid WAV even after kill -9).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "audio/audio.h"
#include "transcribe/micro_model.h"

namespace hark::testing {
namespace {

// Collects events on the worker thread; the test reads them after wait().
struct Events {
  std::mutex mu;
  std::vector<RealtimeEvent> all;
  RealtimeTranscriber::EventSink sink() {
    return [this](const RealtimeEvent& e) {
      std::lock_guard<std::mutex> lock(mu);
      all.push_back(e);
    };
  }
  // The final slices of the last event.
  std::vector<RealtimeSlice> finals() const {
    std::vector<RealtimeSlice> out;
    for (const RealtimeSlice& s : all.back().slices)
      if (s.final) out.push_back(s);
    return out;
  }
};

std::string temp_path(const std::string& tag) {
  const char* tmp = std::getenv("TMPDIR");
  return std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-rt-" + std::to_string(::getpid()) + "-" + tag;
}

RealtimeOptions slice_options() {
  RealtimeOptions o;
  o.audio_sec = 60;
  o.audio_slice_sec = 2;
  o.audio_min_sec = 0.5;
  o.partial_sec = 0;  // partials depend on timing; the finals under test do not
  auto p = std::make_shared<TranscribeParams>(testing::fast_params());
  p->max_tokens_per_window = 8;  // random weights: keep each slice's decode short
  o.transcribe = p;
  return o;
}

// What the streaming transcriber must give: each 2 s slice transcribed with the one before's text as prompt.
std::vector<std::string> by_slices(Context& ctx, const std::vector<float>& audio, const RealtimeOptions& o) {
  auto state = ctx.new_state();
  std::vector<std::string> texts;
  std::string prompt;
  const size_t n = size_t(o.audio_slice_sec * kSampleRate);
  for (size_t pos = 0; pos < audio.size(); pos += n) {
    TranscribeParams p = *o.transcribe;
    p.initial_prompt = prompt;
    const Transcript t =
        state->transcribe(std::span<const float>(audio).subspan(pos, std::min(n, audio.size() - pos)), p);
    texts.push_back(t.text());
    prompt = texts.back();
  }
  return texts;
}

class RealtimeTest : public MicroModelTest {};

// Holds the worker inside its first transcription (at the encoder's start) until open(), so a
// test can act while a slice is being transcribed.
struct Gate {
  std::mutex mu;
  std::condition_variable cv;
  bool entered = false, opened = false;
  // Params whose first encoder window waits at the gate.
  std::shared_ptr<TranscribeParams> params(const TranscribeParams& base) {
    auto p = std::make_shared<TranscribeParams>(base);
    p->on_encoder_begin = [this] {
      std::unique_lock<std::mutex> lock(mu);
      entered = true;
      cv.notify_all();
      cv.wait(lock, [&] { return opened; });
      return true;
    };
    return p;
  }
  void wait_entered() {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return entered; });
  }
  void open() {
    std::lock_guard<std::mutex> lock(mu);
    opened = true;
    cv.notify_all();
  }
};

TEST_F(RealtimeTest, FileInFastModeGivesTheSlicesTextAndEndsOnItsOwn) {
  const std::vector<float> audio = speech_like_tones(5.0);
  const std::string wav = temp_path("in.wav");
  {
    audio::WavWriter w(wav, kSampleRate, 1, audio::WavWriter::Format::kFloat32);
    w.write(audio.data(), audio.size());
  }
  auto ctx = load();
  const RealtimeOptions o = slice_options();
  Events ev;
  auto rt = RealtimeTranscriber::start(*ctx, open_file_source(wav, 0.0), o, ev.sink());
  rt->wait();
  std::remove(wav.c_str());
  ASSERT_FALSE(ev.all.empty());
  const RealtimeEvent& last = ev.all.back();
  EXPECT_FALSE(last.is_capturing);
  EXPECT_FALSE(last.is_stopped_by_action);
  EXPECT_EQ(last.code, 0) << last.error;
  EXPECT_DOUBLE_EQ(last.recording_time_ms, 5000.0);
  const std::vector<RealtimeSlice> finals = ev.finals();
  const std::vector<std::string> want = by_slices(*ctx, audio, o);
  ASSERT_EQ(finals.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(finals[i].index, int(i));
    EXPECT_EQ(finals[i].data.result, want[i]) << "slice " << i;
    EXPECT_EQ(finals[i].t0, int64_t(i) * 200);
    for (const Segment& s : finals[i].data.segments) EXPECT_GE(s.t0, finals[i].t0);  // recording time
  }
  EXPECT_EQ(finals.back().t1, 500);
  bool some_text = false;  // the comparison above means something only when there is text
  for (const std::string& t : want) some_text = some_text || !t.empty();
  EXPECT_TRUE(some_text);
  EXPECT_FALSE(to_json(last).empty());
}

TEST_F(RealtimeTest, OddChunksAndGapsGiveTheSameFinals) {
  const std::vector<float> audio = speech_like_tones(5.0);
  auto ctx = load();
  const RealtimeOptions o = slice_options();
  Events ev;
  auto src = open_push_source(/*live=*/false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  const size_t sizes[] = {1, 7, 333, 4097, 160, 12345, 2};
  size_t pos = 0;
  for (int i = 0; pos < audio.size(); ++i) {
    const size_t n = std::min(sizes[i % 7], audio.size() - pos);
    src->push(std::span<const float>(audio).subspan(pos, n));
    pos += n;
    if (i % 50 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // gaps in delivery
  }
  src->finish();
  rt->wait();
  const std::vector<RealtimeSlice> finals = ev.finals();
  const std::vector<std::string> want = by_slices(*ctx, audio, o);
  ASSERT_EQ(finals.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(finals[i].data.result, want[i]) << "slice " << i;
  EXPECT_EQ(ev.all.back().dropped_samples, 0);
}

// On a state the caller lends (a server's pooled one): the same finals as on a state of its own,
// and the state is usable again once the transcriber is gone.
TEST_F(RealtimeTest, OnTheCallersStateGivesTheSameFinals) {
  const std::vector<float> audio = speech_like_tones(5.0);
  auto ctx = load();
  const RealtimeOptions o = slice_options();
  auto state = ctx->new_state(1);
  Events ev;
  auto src = open_push_source(/*live=*/false);
  auto rt = RealtimeTranscriber::start(*state, src, o, ev.sink());
  src->push(audio);
  src->finish();
  rt->wait();
  rt.reset();
  const std::vector<RealtimeSlice> finals = ev.finals();
  const std::vector<std::string> want = by_slices(*ctx, audio, o);
  ASSERT_EQ(finals.size(), want.size());
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(finals[i].data.result, want[i]) << "slice " << i;
  EXPECT_FALSE(state->transcribe(audio, *o.transcribe).aborted);
}

TEST_F(RealtimeTest, StopMidSliceFinishesTheSliceAndSaysSo) {
  const std::vector<float> audio = speech_like_tones(1.5);
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.partial_sec = 0.5;  // partials allowed: stop must still end with a final
  Events ev;
  auto src = open_push_source();
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  src->push(audio);
  rt->stop();
  rt->wait();
  EXPECT_FALSE(rt->running());
  const RealtimeEvent& last = ev.all.back();
  EXPECT_TRUE(last.is_stopped_by_action);
  EXPECT_FALSE(last.is_capturing);
  ASSERT_EQ(last.slices.size(), 1u);
  EXPECT_TRUE(last.slices[0].final);
  EXPECT_EQ(last.slices[0].t1, 150);  // all audio pushed before stop() is in the slice
  EXPECT_DOUBLE_EQ(last.recording_time_ms, 1500.0);
  auto state = ctx->new_state();
  EXPECT_EQ(last.slices[0].data.result, state->transcribe(audio, *o.transcribe).text());
  for (const RealtimeEvent& e : ev.all) EXPECT_EQ(e.code, 0) << e.error;
}

TEST_F(RealtimeTest, MaxAudioSecEndsCapture) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.audio_sec = 1.0;  // realtimeAudioSec
  Events ev;
  auto src = open_push_source(false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  src->push(speech_like_tones(3.0));
  rt->wait();  // ends without stop()
  EXPECT_DOUBLE_EQ(ev.all.back().recording_time_ms, 1000.0);
  EXPECT_FALSE(ev.all.back().is_stopped_by_action);
}

TEST_F(RealtimeTest, RingOverflowIsReported) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.ring_sec = 0.1;
  const std::string wav = temp_path("overflow.wav");
  o.audio_output_path = wav;
  Events ev;
  auto src = open_push_source(/*live=*/true);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  const std::vector<float> audio = speech_like_tones(3.0);
  src->push(audio);  // 3 s at once into a 0.1 s ring: most of it cannot fit
  src->finish();
  rt->wait();
  bool reported = false;
  for (const RealtimeEvent& e : ev.all)
    if (e.code == kCodeOverflow) reported = e.error.find("overflow") != std::string::npos;
  EXPECT_TRUE(reported);
  EXPECT_GE(ev.all.back().dropped_samples, int64_t(audio.size() - 1600));
  EXPECT_EQ(load_audio(wav), audio);  // the recording keeps what transcription had to drop
  std::remove(wav.c_str());
}

// Audio dropped on overflow still counts: the slice open at the gap ends there, and later slices
// and segments keep times from the start of the recording.
TEST_F(RealtimeTest, TimesAfterAnOverflowCountTheDroppedAudio) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.audio_slice_sec = 1;
  o.ring_sec = 1.5;
  Gate gate;
  o.transcribe = gate.params(*o.transcribe);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<RealtimeEvent> events;
  auto src = open_push_source(/*live=*/true);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, [&](const RealtimeEvent& e) {
    std::lock_guard<std::mutex> lock(mu);
    events.push_back(e);
    cv.notify_all();
  });
  const std::vector<float> audio = speech_like_tones(4.5);
  auto part = [&](double from, double to) {
    return std::span<const float>(audio).subspan(size_t(from * kSampleRate), size_t((to - from) * kSampleRate));
  };
  src->push(part(0, 1));  // slice 0, whose transcription waits at the gate
  gate.wait_entered();
  src->push(part(1, 2.5));    // fills the 1.5 s ring
  src->push(part(2.5, 3.5));  // finds it full: dropped
  gate.open();
  {  // the overflow is reported once the worker has taken the ring's audio: room for the rest
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return !events.empty() && events.back().code == kCodeOverflow; });
  }
  src->push(part(3.5, 4.5));
  src->finish();
  rt->wait();
  const RealtimeEvent& last = events.back();
  EXPECT_EQ(last.dropped_samples, int64_t(kSampleRate));
  EXPECT_DOUBLE_EQ(last.recording_time_ms, 4500.0);
  std::vector<std::pair<int64_t, int64_t>> bounds;
  for (const RealtimeSlice& s : last.slices) {
    EXPECT_TRUE(s.final);
    bounds.emplace_back(s.t0, s.t1);
  }
  // 0-1 s, 1-2 s (a full slice), 2-2.5 s (ended by the gap), then 3.5-4.5 s after the dropped second
  const std::vector<std::pair<int64_t, int64_t>> want = {{0, 100}, {100, 200}, {200, 250}, {350, 450}};
  EXPECT_EQ(bounds, want);
  auto state = ctx->new_state();
  TranscribeParams p = *slice_options().transcribe;
  p.initial_prompt = last.slices[2].data.result;
  const Transcript after = state->transcribe(part(3.5, 4.5), p);
  EXPECT_EQ(last.slices[3].data.result, after.text());
  ASSERT_EQ(last.slices[3].data.segments.size(), after.segments.size());
  for (size_t i = 0; i < after.segments.size(); ++i) {
    EXPECT_EQ(last.slices[3].data.segments[i].t0, after.segments[i].t0 + 350);
    EXPECT_EQ(last.slices[3].data.segments[i].t1, after.segments[i].t1 + 350);
  }
}

// stop() while a slice is being transcribed: that transcription runs to its end (not aborted),
// then the slice is finalised with all audio pushed before stop(), and the last event says so.
TEST_F(RealtimeTest, StopDuringATranscriptionLetsItFinishThenFinalises) {
  const std::vector<float> audio = speech_like_tones(1.5);
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.partial_sec = 0.5;
  Gate gate;
  o.transcribe = gate.params(*o.transcribe);
  Events ev;
  auto src = open_push_source(/*live=*/false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  src->push(audio);  // the worker takes all 1.5 s and starts a partial: it waits at the gate
  gate.wait_entered();
  rt->stop();
  EXPECT_TRUE(rt->running());
  gate.open();
  rt->wait();
  EXPECT_FALSE(rt->running());
  auto state = ctx->new_state();
  const std::string want = state->transcribe(audio, *slice_options().transcribe).text();
  ASSERT_GE(ev.all.size(), 3u);  // the partial, the final, the closing event
  const RealtimeEvent& partial = ev.all[0];
  ASSERT_EQ(partial.slices.size(), 1u);
  EXPECT_FALSE(partial.slices[0].final);
  EXPECT_EQ(partial.code, 0) << partial.error;
  EXPECT_EQ(partial.slices[0].data.result, want);  // finished, not cut short
  const RealtimeEvent& last = ev.all.back();
  EXPECT_TRUE(last.is_stopped_by_action);
  EXPECT_FALSE(last.is_capturing);
  ASSERT_EQ(last.slices.size(), 1u);
  EXPECT_TRUE(last.slices[0].final);
  EXPECT_EQ(last.slices[0].t1, 150);
  EXPECT_EQ(last.slices[0].data.result, want);
  EXPECT_FALSE(want.empty());
  for (const RealtimeEvent& e : ev.all) EXPECT_EQ(e.code, 0) << e.error;
}

// The abort path: jobs::abort(job_id) abandons the transcription in progress and what is left.
TEST_F(RealtimeTest, AbortByJobIdEndsWithoutFinishingTheSlice) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.partial_sec = 0.5;
  Gate gate;
  o.transcribe = gate.params(*o.transcribe);
  Events ev;
  auto src = open_push_source(/*live=*/false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  src->push(speech_like_tones(1.5));
  gate.wait_entered();  // a partial is being transcribed
  EXPECT_TRUE(jobs::abort(rt->job_id()));
  gate.open();
  rt->wait();  // no stop(): the abort alone ends the stream
  EXPECT_FALSE(rt->running());
  ASSERT_FALSE(ev.all.empty());
  const RealtimeEvent& last = ev.all.back();
  EXPECT_TRUE(last.is_stopped_by_action);
  EXPECT_FALSE(last.is_capturing);
  for (const RealtimeSlice& s : last.slices) EXPECT_FALSE(s.final) << "slice " << s.index;
  src->push(speech_like_tones(0.5));  // after the end: ignored, never blocks
}

// jobs::abort with audio in the open slice: the slice says it was abandoned (whisper.rn's -999),
// every transcribed slice carries its own code and time.
TEST_F(RealtimeTest, AbortMarksTheOpenSliceAborted) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.audio_slice_sec = 20;
  o.partial_sec = 0.5;
  Gate gate;
  o.transcribe = gate.params(*o.transcribe);
  Events ev;
  auto src = open_push_source(false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  src->push(speech_like_tones(1.5));
  gate.wait_entered();
  jobs::abort(rt->job_id());
  gate.open();
  rt->wait();
  ASSERT_FALSE(ev.all.back().slices.empty());
  const RealtimeSlice& open = ev.all.back().slices.back();
  EXPECT_FALSE(open.final);
  EXPECT_EQ(open.code, kCodeAborted);
  EXPECT_NE(to_json(ev.all.back()).find("\"code\":-999"), std::string::npos);
}

TEST_F(RealtimeTest, EachSliceHasItsOwnCodeAndTime) {
  auto ctx = load();
  Events ev;
  auto src = open_push_source(false);
  auto rt = RealtimeTranscriber::start(*ctx, src, slice_options(), ev.sink());
  src->push(speech_like_tones(5.0));
  src->finish();
  rt->wait();
  const std::vector<RealtimeSlice> finals = ev.finals();
  ASSERT_GE(finals.size(), 3u);
  for (const RealtimeSlice& s : finals) {
    EXPECT_EQ(s.code, 0) << s.error;
    EXPECT_GT(s.process_time_ms, 0.0) << "slice " << s.index;
  }
  const std::string json = to_json(ev.all.back());
  EXPECT_NE(json.find("\"processTime\""), json.rfind("\"processTime\"")) << "per slice and per event";
}

// next_slice(): the open slice closes where capture is now and is transcribed as final.
TEST_F(RealtimeTest, NextSliceClosesTheOpenSliceAtTheAudioSoFar) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.audio_slice_sec = 20;
  Events ev;
  auto src = open_push_source(false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  src->push(speech_like_tones(1.3));
  rt->next_slice();
  src->push(speech_like_tones(0.7));
  src->finish();
  rt->wait();
  const std::vector<RealtimeSlice> finals = ev.finals();
  ASSERT_EQ(finals.size(), 2u);
  EXPECT_EQ(finals[0].t0, 0);
  EXPECT_EQ(finals[0].t1, 130);
  EXPECT_EQ(finals[1].t0, 130);
  EXPECT_EQ(finals[1].t1, 200);
  rt->next_slice();  // after the end: nothing, no error
}

// The recording as whisper.rn writes it (16-bit PCM), or refused for a width that does not exist.
TEST_F(RealtimeTest, SavedWavIn16Bits) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  const std::string wav = temp_path("saved16.wav");
  o.audio_output_path = wav;
  o.audio_output_bits = 16;
  const std::vector<float> audio = speech_like_tones(1.0);
  Events ev;
  auto src = open_push_source(false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  src->push(audio);
  src->finish();
  rt->wait();
  const std::vector<float> back = load_audio(wav);
  ASSERT_EQ(back.size(), audio.size());
  for (size_t i = 0; i < audio.size(); ++i) ASSERT_NEAR(back[i], audio[i], 1.0 / 32768 + 1e-6) << i;
  std::remove(wav.c_str());
  o.audio_output_bits = 24;
  try {
    RealtimeTranscriber::start(*ctx, open_push_source(false), o, ev.sink());
    ADD_FAILURE() << "24-bit recording accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::InvalidArgument);
    EXPECT_EQ(e.field(), "audio_output_bits");
  }
}

TEST_F(RealtimeTest, SavedWavIsSampleExact) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  const std::string wav = temp_path("saved.wav");
  o.audio_output_path = wav;
  std::vector<float> audio = speech_like_tones(2.5);
  audio[100] = 1.0f;  // full scale and tiny values survive too
  audio[101] = -1.0f;
  audio[102] = 1e-9f;
  Events ev;
  auto src = open_push_source(false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  for (size_t pos = 0; pos < audio.size(); pos += 999)
    src->push(std::span<const float>(audio).subspan(pos, std::min<size_t>(999, audio.size() - pos)));
  rt->stop();
  rt->wait();
  EXPECT_EQ(load_audio(wav), audio);
  std::remove(wav.c_str());
}

// The RIFF and data sizes a WAV's header gives agree with the file's length.
void expect_consistent_header(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  ASSERT_NE(f, nullptr);
  std::vector<unsigned char> b(1 << 20);
  b.resize(std::fread(b.data(), 1, b.size(), f));
  std::fclose(f);
  ASSERT_GE(b.size(), 44u);
  auto u32 = [&](size_t at) {
    return uint32_t(b[at]) | uint32_t(b[at + 1]) << 8 | uint32_t(b[at + 2]) << 16 | uint32_t(b[at + 3]) << 24;
  };
  EXPECT_EQ(std::memcmp(b.data(), "RIFF", 4), 0);
  EXPECT_EQ(u32(4), b.size() - 8);
  for (size_t at = 12; at + 8 <= b.size(); at += 8 + u32(at + 4)) {
    if (std::memcmp(&b[at], "data", 4) == 0) {
      EXPECT_EQ(at + 8 + u32(at + 4), b.size()) << "data chunk size";
      return;
    }
  }
  ADD_FAILURE() << "no data chunk";
}

TEST_F(RealtimeTest, SavedWavIsValidAfterKill9) {
  const std::string wav = temp_path("killed.wav");
  const std::vector<float> audio = speech_like_tones(2.3);
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {  // records, says so, and waits to be killed
    ::close(ready[0]);
    try {
      auto ctx = load(1);
      RealtimeOptions o = slice_options();
      o.audio_output_path = wav;
      auto src = open_push_source(false);
      auto rt = RealtimeTranscriber::start(*ctx, src, o, nullptr);
      for (size_t pos = 0; pos < audio.size(); pos += 1234)
        src->push(std::span<const float>(audio).subspan(pos, std::min<size_t>(1234, audio.size() - pos)));
      const char c = 'r';
      if (::write(ready[1], &c, 1) != 1) ::_exit(2);
      for (;;) ::pause();
    } catch (...) {
      ::_exit(3);
    }
  }
  ::close(ready[1]);
  char c = 0;
  ASSERT_EQ(::read(ready[0], &c, 1), 1) << "the child failed before recording";
  ::close(ready[0]);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFSIGNALED(status));
  expect_consistent_header(wav);
  EXPECT_EQ(load_audio(wav), audio);
  std::remove(wav.c_str());
}

TEST(RealtimeSources, Pcm16FromADescriptorInOddByteCounts) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::vector<int16_t> pcm = {0, 1, -1, 32767, -32768, 1234, -4321};
  for (int i = 0; i < 3000; ++i) pcm.push_back(int16_t(i * 7));
  auto src = open_pcm16_fd_source(fds[0]);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<float> got;
  bool ended = false;
  std::string end_error = "unset";
  src->start(
      [&](std::span<const float> s) {
        std::lock_guard<std::mutex> lock(mu);
        got.insert(got.end(), s.begin(), s.end());
      },
      [&](const std::string& e) {
        std::lock_guard<std::mutex> lock(mu);
        ended = true;
        end_error = e;
        cv.notify_all();
      });
  const auto* bytes = reinterpret_cast<const char*>(pcm.data());
  const size_t n = pcm.size() * 2;
  for (size_t pos = 0, k = 1; pos < n; pos += k, k = k * 3 % 1001 + 1)
    ASSERT_EQ(::write(fds[1], bytes + pos, std::min(k, n - pos)), ssize_t(std::min(k, n - pos)));
  ::close(fds[1]);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ended; });
  }
  src->stop();
  ::close(fds[0]);
  EXPECT_EQ(end_error, "");
  ASSERT_EQ(got.size(), pcm.size());
  for (size_t i = 0; i < pcm.size(); ++i) EXPECT_EQ(got[i], float(pcm[i]) / 32768.0f) << i;
}

// 44.1 kHz stereo pushed in 100 ms chunks reaches the transcriber as 16 kHz mono: the recording
// is the 16 kHz audio (up to the two resamplings) and the final texts are those of the 16 kHz push.
TEST_F(RealtimeTest, PushAtOtherRatesAndChannelsIsConverted) {
  const std::vector<float> mono = speech_like_tones(4.5);
  const std::vector<float> up = audio::resample(mono.data(), mono.size(), kSampleRate, 44100);
  std::vector<float> stereo(up.size() * 2);
  for (size_t i = 0; i < up.size(); ++i) stereo[2 * i] = 1.5f * up[i], stereo[2 * i + 1] = 0.5f * up[i];
  auto ctx = load();
  auto run = [&](std::shared_ptr<PushSource> src, const std::vector<float>& audio, size_t chunk,
                 const std::string& wav) {
    RealtimeOptions o = slice_options();
    o.audio_output_path = wav;
    Events ev;
    auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
    for (size_t pos = 0; pos < audio.size(); pos += chunk)
      src->push(std::span<const float>(audio).subspan(pos, std::min(chunk, audio.size() - pos)));
    src->finish();
    rt->wait();
    std::vector<std::string> texts;
    for (const RealtimeSlice& sl : ev.finals()) texts.push_back(sl.data.result);
    EXPECT_DOUBLE_EQ(ev.all.back().recording_time_ms, 4500.0);
    return texts;
  };
  const std::string wav = temp_path("converted.wav");
  const std::vector<std::string> want = run(open_push_source(false), mono, 1600, "");
  const std::vector<std::string> got = run(open_push_source(false, 44100, 2), stereo, 2 * 4410, wav);
  const std::vector<float> heard = load_audio(wav);
  std::remove(wav.c_str());
  ASSERT_EQ(heard.size(), mono.size());
  float worst = 0;
  for (size_t i = 0; i < mono.size(); ++i) worst = std::max(worst, std::fabs(heard[i] - mono[i]));
  EXPECT_LT(worst, 0.02f);  // tones under 1.2 kHz pass both resamplings almost untouched
  EXPECT_EQ(got, want);
}

TEST(RealtimeSources, BadPushFormatsSayWhatIsWrong) {
  auto refused = [](const std::function<void()>& f, const std::string& word) {
    try {
      f();
      ADD_FAILURE() << word << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  };
  refused([] { open_push_source(true, 0, 1); }, "sample rate 0");
  refused([] { open_push_source(true, 1000000, 1); }, "sample rate 1000000");
  refused([] { open_push_source(true, 44100, 0); }, "channel count 0");
  refused([] { open_pcm16_fd_source(0, 16000, 300); }, "channel count 300");
  auto src = open_push_source(false, 48000, 2);
  std::vector<float> got;
  src->start([&](std::span<const float> s) { got.insert(got.end(), s.begin(), s.end()); }, nullptr);
  const std::vector<float> three = {0.1f, 0.2f, 0.3f};
  refused([&] { src->push(three); }, "not a whole number of frames of 2 channels");
  const std::vector<float> nan = {0.1f, 0.2f, std::nanf(""), 0.0f};
  refused([&] { src->push(nan); }, "NaN");
  src->stop();
}

TEST(RealtimeSources, Pcm16AtOtherRatesAndChannels) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  std::vector<int16_t> pcm(48000 * 2);  // 1 s of 48 kHz stereo: a 440 Hz tone left, silence right
  for (size_t f = 0; f < 48000; ++f) pcm[2 * f] = int16_t(16000 * std::sin(2 * M_PI * 440.0 * double(f) / 48000));
  auto src = open_pcm16_fd_source(fds[0], 48000, 2);
  std::mutex mu;
  std::condition_variable cv;
  std::vector<float> got;
  bool ended = false;
  src->start(
      [&](std::span<const float> s) {
        std::lock_guard<std::mutex> lock(mu);
        got.insert(got.end(), s.begin(), s.end());
      },
      [&](const std::string&) {
        std::lock_guard<std::mutex> lock(mu);
        ended = true;
        cv.notify_all();
      });
  const auto* bytes = reinterpret_cast<const char*>(pcm.data());
  const size_t n = pcm.size() * 2;
  for (size_t pos = 0, k = 3; pos < n; pos += k, k = k * 7 % 3001 + 1)  // part frames on every read
    ASSERT_EQ(::write(fds[1], bytes + pos, std::min(k, n - pos)), ssize_t(std::min(k, n - pos)));
  ::close(fds[1]);
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return ended; });
  }
  src->stop();
  ::close(fds[0]);
  ASSERT_EQ(got.size(), 16000u);              // 1 s at 16 kHz, the resampler's tail included
  for (size_t i = 1000; i < 15000; i += 997)  // the average of the channels: half the left tone
    EXPECT_NEAR(got[i], 0.5 * 16000.0 / 32768.0 * std::sin(2 * M_PI * 440.0 * double(i) / 16000), 0.01) << i;
}

TEST(RealtimeSources, MissingCaptureDeviceSaysSo) {
  // No sound server at this address: opening the default device must fail with a reason.
  ::setenv("PULSE_SERVER", "unix:/nonexistent/hark-no-server", 1);
  try {
    open_capture_source("default");
    ADD_FAILURE() << "opened a capture device with no sound server";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("no capture device"), std::string::npos) << e.what();
  }
  EXPECT_THROW(list_capture_devices(), Error);
  ::unsetenv("PULSE_SERVER");
}

}  // namespace
}  // namespace hark::testing

namespace hark::testing {
namespace {

// Partial results come at a bounded rate: never before audio_min_sec, and at least partial_sec
// of new audio apart within a slice; a slice's last word is always a final.
TEST_F(RealtimeTest, PartialsAreBoundedAndEachSliceEndsFinal) {
  auto ctx = load();
  RealtimeOptions o = slice_options();
  o.partial_sec = 0.5;
  Events ev;
  auto src = open_push_source(false);
  auto rt = RealtimeTranscriber::start(*ctx, src, o, ev.sink());
  const std::vector<float> audio = speech_like_tones(4.5);
  for (size_t pos = 0; pos < audio.size(); pos += 1600) {
    src->push(std::span<const float>(audio).subspan(pos, std::min<size_t>(1600, audio.size() - pos)));
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  src->finish();
  rt->wait();
  std::map<int, int64_t> last_partial_end;
  for (const RealtimeEvent& e : ev.all) {
    if (e.slices.empty()) continue;
    const RealtimeSlice& s = e.slices.back();
    if (s.final) continue;
    EXPECT_GE(s.t1 - s.t0, 50) << "a partial before audio_min_sec";
    if (last_partial_end.count(s.index)) {
      EXPECT_GE(s.t1 - last_partial_end[s.index], 50);
    }
    last_partial_end[s.index] = s.t1;
  }
  const std::vector<RealtimeSlice> finals = ev.finals();
  ASSERT_EQ(finals.size(), 3u);
  EXPECT_EQ(ev.all.back().slices.size(), 3u);
}

}  // namespace
}  // namespace hark::testing
