// Contexts, states and jobs on the micro model: jobs on one context (and on two contexts) at the
// same time give the texts they give alone; every way of stopping a job returns promptly with the
// segments finished so far; the registry's ids, abort_all and remove behave under running jobs;
// callbacks that throw stop the job and their exception reaches the caller; n_processors parts
// come back in order with the times of the whole audio.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <mutex>
#include <random>
#include <stdexcept>
#include <thread>

#include "hark/hark.hpp"
#include "transcribe/micro_model.h"

namespace hark {
namespace {

std::vector<float> tones(double seconds, double base_hz = 180.0) {
  return testing::speech_like_tones(seconds, base_hz);
}

std::string text_of(const Transcript& t) {
  std::string all;
  for (const Segment& s : t.segments) all += std::to_string(s.t0) + "-" + std::to_string(s.t1) + ":" + s.text + "\n";
  return all;
}

class Jobs : public testing::MicroModelTest {};

TEST_F(Jobs, TwoJobsOnOneContextGiveTheTextsTheyGiveAlone) {
  auto ctx = load(2);
  const std::vector<float> a = tones(40.0, 180.0), b = tones(25.0, 260.0);
  const std::string alone_a = text_of(ctx->transcribe(a, testing::fast_params())),
                    alone_b = text_of(ctx->transcribe(b, testing::fast_params()));
  ASSERT_FALSE(alone_a.empty());
  ASSERT_FALSE(alone_b.empty());
  for (int round = 0; round < 2; ++round) {
    std::string got_a, got_b;
    std::thread ta([&] { got_a = text_of(ctx->transcribe(a, testing::fast_params())); });
    std::thread tb([&] { got_b = text_of(ctx->transcribe(b, testing::fast_params())); });
    ta.join();
    tb.join();
    EXPECT_EQ(got_a, alone_a) << "round " << round;
    EXPECT_EQ(got_b, alone_b) << "round " << round;
  }
}

TEST_F(Jobs, TwoContextsSideBySide) {
  auto c1 = load(2), c2 = load(2);
  const std::vector<float> a = tones(20.0);
  const std::string alone = text_of(c1->transcribe(a, testing::fast_params()));
  std::string r1, r2;
  std::thread t1([&] { r1 = text_of(c1->transcribe(a, testing::fast_params())); });
  std::thread t2([&] { r2 = text_of(c2->transcribe(a, testing::fast_params())); });
  t1.join();
  t2.join();
  EXPECT_EQ(r1, alone);
  EXPECT_EQ(r2, alone);
}

TEST_F(Jobs, AStateOfOnesOwnGivesTheSameTextAndReportsItsBytes) {
  auto ctx = load(2);
  const std::vector<float> a = tones(12.0);
  const std::unique_ptr<State> st = ctx->new_state(1);
  EXPECT_GT(st->bytes(), 0u);
  EXPECT_EQ(text_of(st->transcribe(a, testing::fast_params())), text_of(ctx->transcribe(a, testing::fast_params())));
  // A state keeps the model alive after its context is gone.
  ctx.reset();
  EXPECT_FALSE(text_of(st->transcribe(a, testing::fast_params())).empty());
}

// A state made for n threads runs its jobs on n unless their params name a count; the context's
// own jobs keep the context's count. (Jobs on a 1-thread state used to take the context's count,
// so several such states oversubscribed the cores.)
TEST_F(Jobs, AStateRunsItsJobsOnItsOwnThreadCount) {
  auto ctx = load(2);
  const std::vector<float> a = tones(3.0);
  const std::unique_ptr<State> one = ctx->new_state(1);
  EXPECT_EQ(one->transcribe(a, testing::fast_params()).timings.n_threads, 1);
  TranscribeParams three = testing::fast_params();
  three.n_threads = 3;
  EXPECT_EQ(one->transcribe(a, three).timings.n_threads, 3);
  EXPECT_EQ(ctx->new_state(0)->transcribe(a, testing::fast_params()).timings.n_threads, 2);
  EXPECT_EQ(ctx->transcribe(a, testing::fast_params()).timings.n_threads, 2);
  EXPECT_EQ(ctx->transcribe(a, three).timings.n_threads, 3);
}

TEST_F(Jobs, EveryTranscriptionIsAJobWithItsOwnId) {
  auto ctx = load(1);
  const Transcript t1 = ctx->transcribe(tones(2.0), testing::fast_params());
  const Transcript t2 = ctx->transcribe(tones(2.0), testing::fast_params());
  EXPECT_GT(t1.job_id, 0);
  EXPECT_GT(t2.job_id, t1.job_id);
  const std::shared_ptr<Job> job = jobs::create();
  EXPECT_EQ(jobs::get(job->id()), job);
  TranscribeParams p = testing::fast_params();
  p.job = job;
  EXPECT_EQ(ctx->transcribe(tones(2.0), p).job_id, job->id());
  EXPECT_FALSE(job->running());
  EXPECT_TRUE(jobs::remove(job->id()));
  EXPECT_EQ(jobs::get(job->id()), nullptr);
  EXPECT_FALSE(jobs::remove(job->id()));
  EXPECT_FALSE(jobs::abort(job->id()));
}

TEST_F(Jobs, AJobAbortedBeforeItStartsDoesNothing) {
  auto ctx = load(1);
  const std::shared_ptr<Job> job = jobs::create();
  job->abort();
  TranscribeParams p = testing::fast_params();
  p.job = job;
  int progress_calls = 0;
  p.on_progress = [&](int) { ++progress_calls; };
  const Transcript t = ctx->transcribe(tones(10.0), p);
  EXPECT_TRUE(t.aborted);
  EXPECT_TRUE(t.segments.empty());
  EXPECT_EQ(progress_calls, 0);
  jobs::remove(job->id());
}

// Abort from another thread at random moments: the job always returns, promptly, with only whole
// segments, and the context goes on serving.
TEST_F(Jobs, AbortAtRandomMomentsAlwaysReturnsWithTheSegmentsDoneSoFar) {
  auto ctx = load(2);
  const std::vector<float> audio = tones(65.0);
  const Transcript full = ctx->transcribe(audio, testing::fast_params());
  ASSERT_GE(full.segments.size(), 2u);
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> delay_us(0, 400000);
  int n_aborted = 0;
  for (int run = 0; run < 12; ++run) {
    const std::shared_ptr<Job> job = jobs::create();
    TranscribeParams p = testing::fast_params();
    p.job = job;
    std::atomic<bool> returned{false};
    std::chrono::steady_clock::time_point aborted_at;
    std::thread stopper([&, d = delay_us(rng)] {
      std::this_thread::sleep_for(std::chrono::microseconds(d));
      aborted_at = std::chrono::steady_clock::now();
      job->abort();
    });
    const Transcript t = ctx->transcribe(audio, p);
    const auto returned_at = std::chrono::steady_clock::now();
    returned = true;
    stopper.join();
    // What was finished is what the full run has, in the same order.
    ASSERT_LE(t.segments.size(), full.segments.size());
    for (size_t i = 0; i < t.segments.size(); ++i) EXPECT_EQ(t.segments[i].text, full.segments[i].text) << run;
    if (t.aborted) {
      ++n_aborted;
      // Not a speed check, a liveness one: a stop that is ignored would take the whole job.
      EXPECT_LT(std::chrono::duration<double>(returned_at - aborted_at).count(), 5.0);
    }
    jobs::remove(job->id());
  }
  EXPECT_GT(n_aborted, 0) << "no run was stopped: the test proved nothing";
  EXPECT_EQ(text_of(ctx->transcribe(audio, testing::fast_params())), text_of(full));
}

TEST_F(Jobs, AbortAllStopsFourRunningJobs) {
  auto ctx = load(1);
  const std::vector<float> audio = tones(95.0);
  std::vector<std::shared_ptr<Job>> js;
  for (int i = 0; i < 4; ++i) js.push_back(jobs::create());
  std::vector<Transcript> results(4);
  std::vector<std::thread> threads;
  std::atomic<int> started{0};
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      TranscribeParams p = testing::fast_params();
      p.job = js[static_cast<size_t>(i)];
      p.n_threads = 1;
      p.on_encoder_begin = [&] {
        started.fetch_add(1);
        return true;
      };
      results[static_cast<size_t>(i)] = ctx->transcribe(audio, p);
    });
  while (started.load() < 4) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(jobs::is_transcribing());
  jobs::abort_all();
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(results[static_cast<size_t>(i)].aborted) << "job " << i;
    EXPECT_EQ(results[static_cast<size_t>(i)].job_id, js[static_cast<size_t>(i)]->id());
    jobs::remove(js[static_cast<size_t>(i)]->id());
  }
  EXPECT_FALSE(jobs::is_transcribing());
}

TEST_F(Jobs, AJobRemovedWhileRunningRunsToTheEnd) {
  auto ctx = load(2);
  const std::vector<float> audio = tones(35.0);
  const std::string alone = text_of(ctx->transcribe(audio, testing::fast_params()));
  const std::shared_ptr<Job> job = jobs::create();
  const int id = job->id();
  TranscribeParams p = testing::fast_params();
  p.job = job;
  p.on_encoder_begin = [&] {
    jobs::remove(id);  // from inside the job: the registry forgets it, the job goes on
    return true;
  };
  const Transcript t = ctx->transcribe(audio, p);
  EXPECT_FALSE(t.aborted);
  EXPECT_EQ(text_of(t), alone);
  EXPECT_EQ(jobs::get(id), nullptr);
  EXPECT_FALSE(jobs::abort(id));
}

TEST_F(Jobs, CallbacksThatThrowStopTheJobAndTheirExceptionReachesTheCaller) {
  auto ctx = load(2);
  const std::vector<float> audio = tones(65.0);
  TranscribeParams p = testing::fast_params();
  p.on_new_segments = [](const NewSegments&) { throw std::runtime_error("segment callback failed"); };
  EXPECT_THROW(
      {
        try {
          ctx->transcribe(audio, p);
        } catch (const std::runtime_error& e) {
          EXPECT_STREQ(e.what(), "segment callback failed");
          throw;
        }
      },
      std::runtime_error);
  p = {};
  int calls = 0;
  p.should_abort = [&] {
    if (++calls > 20) throw Error("abort callback failed");
    return false;
  };
  EXPECT_THROW(ctx->transcribe(audio, p), Error);
  p = {};
  p.on_progress = [](int) { throw 42; };
  EXPECT_THROW(ctx->transcribe(audio, p), int);
  // The context is still whole.
  EXPECT_FALSE(ctx->transcribe(tones(3.0), testing::fast_params()).aborted);
}

TEST_F(Jobs, EncoderBeginCanCancelAndShouldAbortStops) {
  auto ctx = load(2);
  const std::vector<float> audio = tones(65.0);
  int windows = 0;
  TranscribeParams p = testing::fast_params();
  p.on_encoder_begin = [&] { return ++windows < 2; };
  int last_progress = -1;
  p.on_progress = [&](int pct) { last_progress = pct; };
  const Transcript t = ctx->transcribe(audio, p);
  EXPECT_TRUE(t.aborted);
  EXPECT_EQ(t.windows.size(), 1u);
  EXPECT_LT(last_progress, 100);
}

TEST_F(Jobs, ParallelPartsComeBackInOrderWithTheTimesOfTheWholeAudio) {
  auto ctx = load(2);
  const double seconds = 64.0;
  const std::vector<float> audio = tones(seconds);
  TranscribeParams p = testing::fast_params();
  p.n_processors = 2;
  int last_progress = -1, seen = 0;
  int64_t last_t0 = -1;
  p.on_progress = [&](int pct) {
    EXPECT_GE(pct, last_progress);
    last_progress = pct;
  };
  p.on_new_segments = [&](const NewSegments& ns) {
    for (const Segment& s : ns.segments) {
      EXPECT_GE(s.t0, last_t0) << "segments out of order";
      last_t0 = s.t0;
    }
    seen += ns.n_new;
    EXPECT_EQ(ns.total, seen);
  };
  const Transcript t = ctx->transcribe(audio, p);
  EXPECT_FALSE(t.aborted);
  EXPECT_EQ(last_progress, 100);
  EXPECT_EQ(seen, static_cast<int>(t.segments.size()));
  // The second part starts halfway: its windows and segments carry the whole audio's times.
  bool second_half = false;
  for (const Window& w : t.windows) second_half |= w.t0 == 3200;
  EXPECT_TRUE(second_half) << "no window starts at the second part (32 s)";
  EXPECT_EQ(t.windows.back().t1, 6400);
  for (size_t i = 1; i < t.segments.size(); ++i) EXPECT_GE(t.segments[i].t0, t.segments[i - 1].t0);
  for (const Segment& s : t.segments) EXPECT_LE(s.t1, 6400);
  // The second half alone, transcribed from its start, has the same text as the second part.
  TranscribeParams half = testing::fast_params();
  half.offset_ms = 32000;
  const Transcript h = ctx->transcribe(audio, half);
  std::string tail;
  for (const Segment& s : t.segments)
    if (s.t0 >= 3200) tail += s.text;
  std::string alone;
  for (const Segment& s : h.segments) alone += s.text;
  EXPECT_EQ(tail, alone);
}

TEST_F(Jobs, LogCallbackHearsTheLoadAndNothingIsPrintedWithoutOne) {
  std::mutex m;
  std::vector<std::string> lines;
  set_log_callback([&](LogLevel level, const std::string& msg) {
    std::lock_guard<std::mutex> lock(m);
    lines.push_back(std::string(log_level_name(level)) + ": " + msg);
  });
  load(1);
  set_log_callback(nullptr);
  ASSERT_FALSE(lines.empty());
  EXPECT_NE(lines[0].find("info: loaded"), std::string::npos) << lines[0];
  const size_t n = lines.size();
  load(1);
  EXPECT_EQ(lines.size(), n);
  ::testing::internal::CaptureStderr();
  load(1)->transcribe(tones(2.0), testing::fast_params());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
}

TEST_F(Jobs, DeviceChoiceFallsBackToTheCpuWithAReason) {
  auto ctx = load(1);
  EXPECT_EQ(ctx->device().name, "cpu");
  EXPECT_FALSE(ctx->device().gpu);
  EXPECT_NE(ctx->device().reason_no_gpu.find("no GPU"), std::string::npos) << ctx->device().reason_no_gpu;
  ContextParams cp;
  cp.use_gpu = false;
  auto plain = Context::load(file_->path(), cp);
  EXPECT_EQ(plain->device().name, "cpu");
  cp.device = "cpu-ref";
  auto ref = Context::load(file_->path(), cp);
  EXPECT_EQ(ref->device().name, "cpu-ref");
  const std::vector<DeviceChoice> all = devices();
  ASSERT_GE(all.size(), 2u);
  EXPECT_EQ(all[0].name, "cpu");
}

TEST_F(Jobs, BadParamsAreClearErrors) {
  auto ctx = load(1);
  TranscribeParams p = testing::fast_params();
  p.n_processors = 0;
  try {
    ctx->transcribe(tones(1.0), p);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("n_processors"), std::string::npos) << e.what();
  }
  EXPECT_THROW(ctx->new_state(-1), Error);
  EXPECT_THROW(ctx->bench(-2), Error);
}

}  // namespace
}  // namespace hark

namespace hark {
namespace {

TEST_F(Jobs, BenchGivesFinitePositiveFiguresForEveryField) {
  auto ctx = load(1);
  const BenchResult b = ctx->bench(1);
  EXPECT_EQ(b.n_threads, 1);
  EXPECT_NE(b.config.find("AVX"), std::string::npos) << b.config;
  for (double v : {b.encode_ms, b.decode_ms, b.batch_ms, b.prompt_ms}) {
    EXPECT_TRUE(std::isfinite(v));
    EXPECT_GT(v, 0.0);
  }
  EXPECT_EQ(b.to_json().front(), '[');
  // The context still transcribes after a bench (the bench ran on a state of its own).
  EXPECT_FALSE(ctx->transcribe(tones(3.0), testing::fast_params()).aborted);
}

TEST_F(Jobs, JobsMadeForACallLeaveTheRegistryWithIt) {
  auto ctx = load(1);
  const Transcript t = ctx->transcribe(tones(2.0), testing::fast_params());
  EXPECT_EQ(jobs::get(t.job_id), nullptr);
}

TEST_F(Jobs, PlainAttentionGivesTheSameText) {
  ContextParams cp;
  cp.n_threads = 2;
  cp.flash_attn = false;
  auto plain = Context::load(file_->path(), cp);
  auto fused = load(2);
  const std::vector<float> a = tones(20.0);
  EXPECT_EQ(text_of(plain->transcribe(a, testing::fast_params())),
            text_of(fused->transcribe(a, testing::fast_params())));
}

}  // namespace
}  // namespace hark

namespace hark {
namespace {

// The spectrogram of a long input is computed before the first window; an abort must not wait
// for it either.
TEST_F(Jobs, AbortDuringTheSpectrogramOfLongAudioReturnsAtOnce) {
  auto ctx = load(2);
  const std::vector<float> audio = tones(40 * 60.0);  // 40 minutes
  const std::shared_ptr<Job> job = jobs::create();
  TranscribeParams p = testing::fast_params();
  p.job = job;
  int progress_calls = 0;
  p.on_progress = [&](int) { ++progress_calls; };
  std::thread stopper([&] {
    while (!job->running()) std::this_thread::yield();
    job->abort();
  });
  const Transcript t = ctx->transcribe(audio, p);
  stopper.join();
  EXPECT_TRUE(t.aborted);
  EXPECT_EQ(t.timings.n_windows, 0) << "the abort waited for the spectrogram and the first window";
  EXPECT_EQ(progress_calls, 0);
  jobs::remove(job->id());
}

}  // namespace
}  // namespace hark
