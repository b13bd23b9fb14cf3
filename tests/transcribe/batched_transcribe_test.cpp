// The batched long-audio pipeline (batch_size > 1) end to end: the micro model (random weights)
// with the real Silero VAD on the shared speech clip repeated between long silences. Checked: the
// same segments at every batch size (chunks are independent, so batching must not change them),
// greedy, with temperature fallback and with beams; times in order, inside the audio and inside
// their chunk's speech; callbacks on the same segments; fewer decoder graph runs when batched;
// silence, abort, and bad settings refused before any compute. Also the chunk merging itself.
#include <gtest/gtest.h>

#include <algorithm>

#include <cstdio>
#include <functional>
#include <utility>
#include <vector>

#include "transcribe/batched_pipeline.h"
#include "transcribe/micro_model.h"
#include "transcribe/state.h"
#include "vad/vad_test_util.h"

namespace hark::testing {
namespace {

TEST(MergeSpeechChunks, MergesNeighboursUpTo30sAndCutsLongSpeech) {
  using C = AudioChunk;
  const std::vector<VadSegment> speech = {{100, 900}, {1000, 2500}, {2600, 3200}, {3300, 3400}, {9000, 9100}};
  // 100..2500 fits 30 s; 2600 would reach 3200 - 100 > 3000: a new chunk, which takes 3300..3400.
  EXPECT_EQ(merge_speech_chunks(speech, 10000, 3000), (std::vector<C>{{100, 2500}, {2600, 3400}, {9000, 9100}}));
  // A segment longer than a chunk is cut into pieces; the last piece may take the next segment.
  const std::vector<VadSegment> long_one = {{0, 7000}, {7100, 7200}};
  EXPECT_EQ(merge_speech_chunks(long_one, 8000, 3000), (std::vector<C>{{0, 3000}, {3000, 6000}, {6000, 7200}}));
  // Clamped to the audio; empty segments skipped; nothing in, nothing out.
  const std::vector<VadSegment> edges = {{-5, 10}, {50, 50}, {90, 200}};
  EXPECT_EQ(merge_speech_chunks(edges, 150, 3000), (std::vector<C>{{0, 150}}));
  EXPECT_TRUE(merge_speech_chunks({}, 100, 3000).empty());
  EXPECT_THROW(merge_speech_chunks(speech, 10000, 0), Error);
}

std::vector<float> silence(double seconds) {
  return std::vector<float>(static_cast<size_t>(seconds * kSampleRate), 0.0f);
}

class BatchedTranscribeTest : public MicroModelTest {
 protected:
  void SetUp() override {
    vad_model_ = silero_model_path();
    const std::string wav = shared_vad_path("vad-three-clips.wav");
    if (vad_model_.empty() || wav.empty()) GTEST_SKIP() << "../shared/vad (Silero model and clip) not found";
    const std::vector<float> clip = load_audio(wav);
    // 3 s silence, then five times: the clip (~17.5 s of speech stretches) and 31 s of silence,
    // so no chunk holds two clips: at least five chunks.
    audio_ = silence(3);
    for (int i = 0; i < 5; ++i) {
      audio_.insert(audio_.end(), clip.begin(), clip.end());
      const std::vector<float> gap = silence(31);
      audio_.insert(audio_.end(), gap.begin(), gap.end());
    }
  }

  TranscribeParams batched(int batch_size) const {
    TranscribeParams p = testing::fast_params();
    p.batch_size = batch_size;
    p.vad_model_path = vad_model_;
    p.token_timestamps = true;
    p.max_tokens_per_window = 32;  // random weights talk on: keep the suite quick
    return p;
  }

  // The chunks the pipeline cuts (the VAD as it runs it).
  std::vector<AudioChunk> chunks(const TranscribeParams& p) const {
    VadOptions vo = p.vad_params;
    vo.max_speech_duration_s = std::min(vo.max_speech_duration_s, 30.0f);
    const auto vad = VadModel::load(vad_model_);
    const std::vector<VadSegment> speech = vad->detect_speech(audio_, vo).segments;
    return merge_speech_chunks(speech, static_cast<int64_t>(audio_.size() / 160), 3000);
  }

  static void expect_same(const Transcript& a, const Transcript& b, const std::string& what) {
    ASSERT_EQ(a.segments.size(), b.segments.size()) << what;
    for (size_t i = 0; i < a.segments.size(); ++i) {
      EXPECT_EQ(a.segments[i].text, b.segments[i].text) << what << ", segment " << i;
      EXPECT_EQ(a.segments[i].t0, b.segments[i].t0) << what << ", segment " << i;
      EXPECT_EQ(a.segments[i].t1, b.segments[i].t1) << what << ", segment " << i;
      ASSERT_EQ(a.segments[i].tokens.size(), b.segments[i].tokens.size()) << what << ", segment " << i;
      for (size_t k = 0; k < a.segments[i].tokens.size(); ++k) {
        EXPECT_EQ(a.segments[i].tokens[k].id, b.segments[i].tokens[k].id) << what;
        EXPECT_EQ(a.segments[i].tokens[k].t0, b.segments[i].tokens[k].t0) << what;
      }
    }
    ASSERT_EQ(a.windows.size(), b.windows.size()) << what;
    for (size_t i = 0; i < a.windows.size(); ++i) {
      EXPECT_EQ(a.windows[i].t0, b.windows[i].t0) << what;
      EXPECT_EQ(a.windows[i].skipped_as_silence, b.windows[i].skipped_as_silence) << what;
    }
  }

  std::string vad_model_;
  std::vector<float> audio_;
};

TEST_F(BatchedTranscribeTest, EveryBatchSizeGivesTheSameSegmentsWithExactTimes) {
  auto ctx = load();
  const std::vector<AudioChunk> cs = chunks(batched(4));
  ASSERT_GE(cs.size(), 5u) << "the audio should make several batches of 4";
  const int64_t end = static_cast<int64_t>(audio_.size() / 160);

  Transcript first;
  // (batch_size 1 is the sequential long-form loop; a batch of one chunk is checked below.)
  for (int B : {2, 4, 8}) {
    TranscribeParams p = batched(B);
    std::vector<Segment> reported;
    int last_progress = -1;
    p.on_new_segments = [&](const NewSegments& ns) {
      reported.insert(reported.end(), ns.segments.begin(), ns.segments.end());
    };
    p.on_progress = [&](int pct) {
      EXPECT_GE(pct, last_progress);
      last_progress = pct;
    };
    const Transcript t = ctx->transcribe(audio_, p);
    const std::string what = "batch " + std::to_string(B);
    EXPECT_FALSE(t.aborted);
    EXPECT_EQ(last_progress, 100) << what;
    EXPECT_EQ(t.timings.n_windows, static_cast<int>(cs.size())) << what << ": one encoder pass per chunk";
    EXPECT_GT(t.timings.vad_ms, 0.0);
    ASSERT_FALSE(t.segments.empty()) << what << ": the micro model wrote nothing: nothing to check";
    ASSERT_EQ(reported.size(), t.segments.size()) << what;
    for (size_t i = 0; i < t.segments.size(); ++i) {
      const Segment& s = t.segments[i];
      EXPECT_EQ(reported[i].text, s.text);
      EXPECT_EQ(reported[i].t0, s.t0);
      EXPECT_LE(s.t0, s.t1) << what;
      EXPECT_GE(s.t0, 0);
      EXPECT_LE(s.t1, end);
      if (i > 0) {
        EXPECT_GE(s.t0, t.segments[i - 1].t0) << what << ": segments in audio order";
      }
      // Inside one chunk: times are the chunk's offset plus the model's timestamps.
      bool in_chunk = false;
      for (const AudioChunk& c : cs) in_chunk = in_chunk || (s.t0 >= c.t0 && s.t1 <= c.t1);
      EXPECT_TRUE(in_chunk) << what << ", segment " << i << " [" << s.t0 << ", " << s.t1 << "]";
      for (const TokenData& td : s.tokens) {
        if (td.t0 >= 0) {
          EXPECT_TRUE(td.t0 >= s.t0 && td.t1 <= s.t1) << what;
        }
      }
    }
    for (size_t i = 0; i < t.windows.size(); ++i) EXPECT_EQ(t.windows[i].t0, cs[i].t0) << what;
    std::printf("  batch %d: %zu chunks, %zu segments, %d decoder steps, %d tokens\n", B, cs.size(), t.segments.size(),
                t.timings.n_decode_steps, t.timings.n_decode_tokens);
    if (B == 2) {
      first = t;
    } else {
      expect_same(t, first, what + " vs batch 2");
      EXPECT_EQ(t.timings.n_decode_tokens, first.timings.n_decode_tokens) << what;
      EXPECT_LT(t.timings.n_decode_steps, first.timings.n_decode_steps) << what << ": chunks share decoder steps";
    }
  }

  // Each chunk decoded on its own (the pipeline run on that chunk alone: a batch of one) gives
  // that chunk's segments: batching changed nothing.
  ContextParams cp;
  cp.n_threads = 2;
  const std::shared_ptr<const LoadedModel> lm = LoadedModel::load(file_->path(), cp);
  StateImpl state(lm, 2);
  const TranscribeParams p = batched(2);
  const JobRequest req = check_request(*lm, audio_, p);
  size_t at = 0;
  for (const AudioChunk& c : cs) {
    JobControl ctl(job_for(nullptr), nullptr);
    const std::vector<VadSegment> one = {{c.t0, c.t1}};
    const Transcript alone = state.run_batched(req, p, one, ctl, {});
    EXPECT_EQ(alone.timings.n_windows, 1);
    for (const Segment& s : alone.segments) {
      ASSERT_LT(at, first.segments.size());
      EXPECT_EQ(s.text, first.segments[at].text) << "chunk at " << c.t0;
      EXPECT_EQ(s.t0, first.segments[at].t0) << "chunk at " << c.t0;
      EXPECT_EQ(s.t1, first.segments[at].t1) << "chunk at " << c.t0;
      ++at;
    }
  }
  EXPECT_EQ(at, first.segments.size());
}

// Temperature fallback (the random model fails the checks on every chunk) and beam search (decoded
// chunk by chunk): still the same segments at every batch size.
TEST_F(BatchedTranscribeTest, FallbackAndBeamsGiveTheSameSegmentsAtEveryBatchSize) {
  auto ctx = load();
  TranscribeParams fb = batched(2);
  fb.temperature_inc = 0.4f;  // 0, 0.4, 0.8
  fb.best_of = 2;
  fb.max_tokens_per_window = 16;
  std::vector<Fallback> told;
  fb.on_fallback = [&](const Fallback& f) { told.push_back(f); };
  const Transcript a = ctx->transcribe(audio_, fb);
  EXPECT_GT(a.n_fallback_windows, 0) << "the random model should fail the fallback checks";
  // Each retry is told with its chunk (one of the transcript's windows) and the next temperature.
  EXPECT_GE(told.size(), static_cast<size_t>(a.n_fallback_windows));
  for (const Fallback& f : told) {
    EXPECT_TRUE(f.temperature == 0.4f || f.temperature == 0.8f) << f.temperature;
    EXPECT_TRUE(
        std::any_of(a.windows.begin(), a.windows.end(), [&](const Window& w) { return w.t0 == f.t0 && w.t1 == f.t1; }))
        << f.t0 << "-" << f.t1;
  }
  fb.on_fallback = nullptr;
  fb.batch_size = 5;
  expect_same(ctx->transcribe(audio_, fb), a, "fallback, batch 5 vs 2");

  TranscribeParams beams = batched(2);
  beams.beam_size = 2;
  beams.max_tokens_per_window = 16;
  const Transcript b = ctx->transcribe(audio_, beams);
  ASSERT_FALSE(b.segments.empty());
  beams.batch_size = 4;
  expect_same(ctx->transcribe(audio_, beams), b, "beams, batch 4 vs 2");
}

// A q8_0 cross-attention cache (ContextParams::cross_kv_type) under the batched pipeline, with
// beams and word timestamps on top: every chunk's window quantized, and still the same segments
// and words whichever chunks share a batch.
TEST_F(BatchedTranscribeTest, QuantizedCrossCacheGivesTheSameSegmentsAtEveryBatchSize) {
  ContextParams cp;
  cp.n_threads = 2;
  cp.cross_kv_type = KvCacheType::Q8_0;
  const auto ctx = Context::load(file_->path(), cp);
  TranscribeParams p = batched(2);
  p.beam_size = 2;
  p.word_timestamps = true;
  p.max_tokens_per_window = 16;
  const Transcript a = ctx->transcribe(audio_, p);
  ASSERT_FALSE(a.aborted);
  ASSERT_FALSE(a.segments.empty());
  p.batch_size = 4;
  const Transcript b = ctx->transcribe(audio_, p);
  expect_same(b, a, "q8_0 cross cache, beams and words, batch 4 vs 2");
  for (size_t i = 0; i < std::min(a.segments.size(), b.segments.size()); ++i) {
    ASSERT_EQ(a.segments[i].words.size(), b.segments[i].words.size()) << "segment " << i;
    for (size_t w = 0; w < a.segments[i].words.size(); ++w) {
      EXPECT_EQ(a.segments[i].words[w].t0, b.segments[i].words[w].t0) << "segment " << i << ", word " << w;
      EXPECT_EQ(a.segments[i].words[w].t1, b.segments[i].words[w].t1) << "segment " << i << ", word " << w;
    }
  }
}

// Word timestamps: each chunk's words come from its own window, so they do not depend on which
// chunks share a batch, and they lie inside their segment and their chunk.
TEST_F(BatchedTranscribeTest, WordTimestampsFromEachChunksOwnWindow) {
  auto ctx = load();
  TranscribeParams p = batched(2);
  p.word_timestamps = true;
  const Transcript a = ctx->transcribe(audio_, p);
  ASSERT_FALSE(a.aborted);
  size_t n_words = 0;
  const std::vector<AudioChunk> cs = chunks(p);
  for (const Segment& seg : a.segments) {
    n_words += seg.words.size();
    const auto chunk =
        std::find_if(cs.begin(), cs.end(), [&](const AudioChunk& c) { return seg.t0 >= c.t0 && seg.t0 < c.t1; });
    ASSERT_NE(chunk, cs.end()) << "segment at " << seg.t0 << " outside every chunk";
    for (const Word& w : seg.words) {
      EXPECT_LE(w.t0, w.t1);
      EXPECT_GE(w.t0, chunk->t0) << w.text;
      EXPECT_LE(w.t1, chunk->t0 + 3000) << w.text;
    }
    for (const TokenData& td : seg.tokens)
      if (td.t0 >= 0) {
        EXPECT_GE(td.t0, seg.t0);
        EXPECT_LE(td.t1, seg.t1);
      }
  }
  EXPECT_GT(n_words, 0u) << "the random model writes text in some chunk";
  p.batch_size = 5;
  const Transcript b = ctx->transcribe(audio_, p);
  expect_same(b, a, "words, batch 5 vs 2");
  ASSERT_EQ(a.segments.size(), b.segments.size());
  for (size_t i = 0; i < a.segments.size(); ++i) {
    ASSERT_EQ(a.segments[i].words.size(), b.segments[i].words.size()) << "segment " << i;
    for (size_t k = 0; k < a.segments[i].words.size(); ++k) {
      EXPECT_EQ(a.segments[i].words[k].text, b.segments[i].words[k].text);
      EXPECT_EQ(a.segments[i].words[k].t0, b.segments[i].words[k].t0);
      EXPECT_EQ(a.segments[i].words[k].t1, b.segments[i].words[k].t1);
    }
  }
}

TEST_F(BatchedTranscribeTest, SilenceAndAbort) {
  auto ctx = load();
  TranscribeParams p = batched(4);
  int last_progress = -1;
  bool encoder_ran = false;
  p.on_progress = [&](int pct) { last_progress = pct; };
  p.on_encoder_begin = [&] {
    encoder_ran = true;
    return true;
  };
  const Transcript quiet = ctx->transcribe(silence(40), p);
  EXPECT_TRUE(quiet.segments.empty());
  EXPECT_FALSE(quiet.aborted);
  EXPECT_FALSE(encoder_ran);
  EXPECT_EQ(last_progress, 100);

  TranscribeParams q = batched(4);
  q.should_abort = [] { return true; };
  const Transcript t = ctx->transcribe(audio_, q);
  EXPECT_TRUE(t.aborted);
  EXPECT_TRUE(t.segments.empty());

  // Stopped from on_encoder_begin at the third chunk: the first batch never completes.
  TranscribeParams r = batched(4);
  int begun = 0;
  r.on_encoder_begin = [&] { return ++begun < 3; };
  const Transcript u = ctx->transcribe(audio_, r);
  EXPECT_TRUE(u.aborted);
  EXPECT_EQ(begun, 3);
}

// Multilingual: each chunk is decoded in its own language, which the chunk decoded alone (a
// batch of one) detects too; hotwords go before every chunk. The same at every batch size.
TEST_F(BatchedTranscribeTest, MultilingualChunksAndHotwordsAtEveryBatchSize) {
  auto ctx = load();
  if (!ctx->info().multilingual) GTEST_SKIP() << "the micro test model is English-only";
  const std::vector<AudioChunk> cs = chunks(batched(4));
  Transcript first;
  for (int B : {2, 4}) {
    TranscribeParams p = batched(B);
    p.language = "auto";
    p.multilingual = true;
    p.hotwords = "hark whisper";
    const Transcript t = ctx->transcribe(audio_, p);
    ASSERT_EQ(t.windows.size(), cs.size());
    for (const Window& w : t.windows) EXPECT_FALSE(w.language.empty());
    if (B == 2) {
      first = t;
      continue;
    }
    expect_same(t, first, "batch " + std::to_string(B) + " vs batch 2");
    for (size_t i = 0; i < t.windows.size(); ++i) EXPECT_EQ(t.windows[i].language, first.windows[i].language);
  }
  // Each chunk alone detects the language its window was decoded in.
  for (size_t i = 0; i < cs.size(); ++i) {
    const std::vector<float> chunk(
        audio_.begin() + cs[i].t0 * 160,
        audio_.begin() + std::min<int64_t>(cs[i].t1 * 160, static_cast<int64_t>(audio_.size())));
    EXPECT_EQ(ctx->detect_language(chunk, {}).language, first.windows[i].language) << "chunk " << i;
  }
}

TEST_F(BatchedTranscribeTest, BadSettingsFailBeforeAnyCompute) {
  auto ctx = load();
  const std::pair<std::function<void(TranscribeParams&)>, std::string> cases[] = {
      {[](TranscribeParams& p) { p.batch_size = 0; }, "batch_size"},
      {[](TranscribeParams& p) { p.batch_size = -3; }, "batch_size"},
      {[](TranscribeParams& p) { p.batch_size = 33; }, "batch_size"},
      {[](TranscribeParams& p) { p.vad_model_path.clear(); }, "vad_model_path"},
      {[](TranscribeParams& p) { p.vad_model_path = "/nonexistent/silero.bin"; }, "/nonexistent/silero.bin"},
      {[](TranscribeParams& p) {
         p.word_timestamps = true;
         p.hallucination_silence_threshold = 2.0f;
       },
       "hallucination_silence_threshold"},
      {[](TranscribeParams& p) { p.n_processors = 2; }, "n_processors"},
      {[](TranscribeParams& p) { p.prefix = "Hello"; }, "prefix"},
      {[](TranscribeParams& p) { p.vad_params.threshold = 2.0f; }, "threshold"},
  };
  for (const auto& [set, what] : cases) {
    TranscribeParams p = batched(4);
    set(p);
    expect_refused_before_compute(*ctx, audio_, p, what);
  }
}

}  // namespace
}  // namespace hark::testing
