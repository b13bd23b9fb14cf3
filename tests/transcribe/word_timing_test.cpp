// Word timestamps in the long-form loop, driven by a ScriptedModel: the windows' tokens come from
// plans, and the scripted cross-attention puts each text token's row in a block of frames, so the
// words (after DTW and OpenAI's adjustments, worked out by hand below), the refined segment bounds,
// the seek from the last word and hallucination_silence_threshold's skips are all known exactly.
// The vocabulary is the tiny model's (../shared/model-headers), as in long_form_policy_test.
#include <gtest/gtest.h>

#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "decode/scripted_model.h"
#include "model/model_test_util.h"
#include "model/model_writer.h"
#include "transcribe/job_control.h"
#include "transcribe/loaded_model.h"
#include "transcribe/long_form.h"
#include "transcribe/test_params.h"
#include "transcribe/word_timing.h"

namespace hark::testing {
namespace {

// Where one window's text tokens are: row k of the alignment (k < n text tokens: the row whose
// DTW entry is token k's start; k = n: the tail after the last token) covers frames
// [starts[k], starts[k + 1]) (the last to the end). logit[k]: token k's logit over a flat 0.
struct Placement {
  std::vector<int> starts;
  std::vector<float> logit;
};

class WordTiming : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string vocab = model_header_path("for-tests-ggml-tiny.bin");
    if (vocab.empty()) return;
    file_ = new TempFile("word-timing");
    TestModelOptions o;
    EXPECT_TRUE(test_model_preset("micro", &o.hparams));
    o.vocab_from = vocab;
    write_test_model(o, file_->path());
    ContextParams cp;
    cp.device = "cpu";
    cp.n_threads = 1;
    model_ = new std::shared_ptr<const LoadedModel>(LoadedModel::load(file_->path(), cp));
  }
  static void TearDownTestSuite() {
    delete model_;
    delete file_;
  }
  void SetUp() override {
    if (!model_) GTEST_SKIP() << "no ../shared/model-headers";
  }
  static const LoadedModel& m() { return **model_; }
  static const SpecialTokens& st() { return m().file->vocab().special(); }
  static int32_t ts(int i) { return st().timestamp_begin + i; }
  static std::vector<int32_t> say(std::initializer_list<std::vector<int32_t>> parts) {
    std::vector<int32_t> r;
    for (const auto& p : parts) r.insert(r.end(), p.begin(), p.end());
    return r;
  }
  static std::vector<int32_t> text(const std::string& s) { return m().tokenizer->encode(s); }

  // Runs the loop on `seconds` of quiet noise with word timestamps; window w's alignment follows
  // places[w] (the last repeats).
  static Transcript run(TranscribeParams p, std::vector<WindowPlan> plans, std::vector<Placement> places,
                        double seconds, ScriptedModel** out_model = nullptr) {
    p.word_timestamps = true;
    static std::unique_ptr<ScriptedModel> sm;
    sm = std::make_unique<ScriptedModel>(m().file->hparams().n_text_ctx, plans_script(st(), plans));
    const int n_vocab = st().n_vocab;
    sm->align_script = [places, n_vocab](const ScriptedModel::AlignCall& c, decode::HeadWeights* qk,
                                         std::vector<float>* logits) {
      const Placement& pl = places[std::min(static_cast<size_t>(c.window), places.size() - 1)];
      const int n = static_cast<int>(c.tokens.size());
      const int n_sot = n - 2 - static_cast<int>(pl.logit.size());
      *qk = decode::HeadWeights(static_cast<int>(c.heads.size()), n, 1500);
      for (int h = 0; h < qk->n_heads; ++h)
        for (size_t k = 0; k < pl.starts.size(); ++k) {
          const int end = k + 1 < pl.starts.size() ? pl.starts[k + 1] : 1500;
          for (int f = pl.starts[k]; f < end; ++f) qk->at(h, n_sot + static_cast<int>(k), f) = 10.0f;
        }
      logits->assign(static_cast<size_t>(n) * static_cast<size_t>(n_vocab), 0.0f);
      for (size_t k = 0; k < pl.logit.size(); ++k) {
        const size_t row = static_cast<size_t>(n_sot) + k;
        (*logits)[row * static_cast<size_t>(n_vocab) + static_cast<size_t>(c.tokens[row + 1])] = pl.logit[k];
      }
    };
    std::vector<float> a(static_cast<size_t>(seconds * kSampleRate));
    uint32_t s = 99;
    for (float& v : a) {
      s = s * 1664525u + 1013904223u;
      v = (static_cast<float>(s >> 8) / 16777216.0f - 0.5f) * 0.02f;
    }
    const JobRequest req = check_request(m(), a, p);
    JobControl ctl(job_for(nullptr), nullptr);
    Transcript t = run_long_form(m(), *sm, req, p, ctl, {});
    jobs::remove(ctl.job().id());
    if (out_model) *out_model = sm.get();
    return t;
  }

  static inline TempFile* file_ = nullptr;
  static inline std::shared_ptr<const LoadedModel>* model_ = nullptr;
};

void expect_word(const Word& w, const std::string& text, int64_t t0, int64_t t1) {
  EXPECT_EQ(w.text, text);
  EXPECT_EQ(w.t0, t0) << text;
  EXPECT_EQ(w.t1, t1) << text;
}

// " one two three" after <|1.00|>, no closing timestamp: one segment to the window's end.
// DTW: " one" [0, 1.5) s, " two" [1.5, 2.0), " three" [2.0, 2.5), tail after. Durations 1.5,
// 0.5, 0.5: median 0.5. The segment starts 1.0 s, more than 0.5 s after the first word: the
// word is pulled in to max(0, min(1.5 - 0.5, 1.0)) = 1.0. Its end (10 s) is not within 0.5 s
// after the last word's: it ends with the last word, 2.5. The next window starts there.
TEST_F(WordTiming, WordsFromTheScriptedAttentionAndSeekFromTheLastWord) {
  const auto words = text(" one two three");
  ASSERT_EQ(words.size(), 3u);
  ScriptedModel* sm = nullptr;
  const Transcript t =
      run(testing::fast_params(), {{say({{ts(50)}, words})}, {{}}}, {{{0, 75, 100, 125}, {15, 15, 15}}}, 10.0, &sm);
  ASSERT_EQ(t.segments.size(), 1u);
  const Segment& s = t.segments[0];
  EXPECT_EQ(s.text, " one two three");
  EXPECT_EQ(s.t0, 100);
  EXPECT_EQ(s.t1, 250);
  ASSERT_EQ(s.words.size(), 3u);
  expect_word(s.words[0], " one", 100, 150);
  expect_word(s.words[1], " two", 150, 200);
  expect_word(s.words[2], " three", 200, 250);
  for (const Word& w : s.words) EXPECT_GT(w.p, 0.9f);
  ASSERT_GE(t.windows.size(), 2u);
  EXPECT_EQ(t.windows[1].t0, 250);  // from the last word, not the window's end
  // The alignment pass: [sot, en, transcribe, notimestamps, text..., eot], the model's heads
  // (micro: no preset, the last half of its 2 layers: layer 1, both heads).
  ASSERT_FALSE(sm->align_calls.empty());
  const auto& c = sm->align_calls[0];
  EXPECT_EQ(c.tokens, say({{st().sot, st().lang_first, st().transcribe, st().no_timestamps}, words, {st().eot}}));
  EXPECT_EQ(c.heads, (std::vector<decode::AlignmentHead>{{1, 0}, {1, 1}}));
}

// A segment whose text only continues a word of the segment before (no leading space) gets no
// word of its own: the merged word " twothree" belongs to the earlier segment. The window ends
// in two timestamps (not a single one), so the next one starts after the last word, and that
// segment is decoded again from there rather than kept (kept, its text would come out twice).
TEST_F(WordTiming, SegmentsAfterTheLastWordAreDecodedAgainNotKept) {
  const auto first = text(" one two");
  const auto rest = text("three");
  ASSERT_EQ(first.size(), 2u);
  ASSERT_EQ(rest.size(), 1u);
  const std::vector<WindowPlan> plans = {{say({{ts(50)}, first, {ts(100), ts(110)}, rest, {ts(125), ts(130)}})}, {{}}};
  const Transcript t = run(testing::fast_params(), plans, {{{0, 75, 100, 125}, {15, 15, 15}}}, 10.0);
  ASSERT_EQ(t.segments.size(), 1u);
  EXPECT_EQ(t.segments[0].text, " one two");
  ASSERT_EQ(t.segments[0].words.size(), 2u);
  expect_word(t.segments[0].words[0], " one", 80, 150);
  expect_word(t.segments[0].words[1], " twothree", 150, 250);
  ASSERT_GE(t.windows.size(), 2u);
  EXPECT_EQ(t.windows[1].t0, 250);  // "three" is heard again from here
}

// Punctuation joins the words the reference's way; every word's text together is the segment's.
TEST_F(WordTiming, PunctuationMergedAndWordsMakeUpTheText) {
  const auto words = text(" \"Hi,\" she said.");
  std::vector<int> starts;
  for (size_t k = 0; k <= words.size(); ++k) starts.push_back(static_cast<int>(k) * 20);
  TranscribeParams p = testing::fast_params();
  p.suppress_nst = false;  // the quote is one of OpenAI's non-speech symbols
  const Transcript t =
      run(p, {{say({{ts(0)}, words, {ts(150)}})}, {{}}}, {{starts, std::vector<float>(words.size(), 15.0f)}}, 10.0);
  ASSERT_EQ(t.segments.size(), 1u);
  std::string joined;
  std::vector<std::string> texts;
  for (const Word& w : t.segments[0].words) {
    joined += w.text;
    texts.push_back(w.text);
  }
  EXPECT_EQ(joined, t.segments[0].text);
  EXPECT_EQ(texts, (std::vector<std::string>{" \"Hi,\"", " she", " said."}));
}

// A low-probability, very short pair of words 5.5 s after the last real word and long before the
// next speech: with hallucination_silence_threshold 2 the segment is dropped and the next window
// starts at its start (8.0 s); without it, it stays.
TEST_F(WordTiming, HallucinationBetweenSilencesIsCutAndSkipped) {
  const auto real = text(" one two three");
  const auto hal = text(" la la");
  ASSERT_EQ(real.size(), 3u);
  ASSERT_EQ(hal.size(), 2u);
  const std::vector<WindowPlan> plans = {{say({{ts(50)}, real, {ts(125), ts(400)}, hal, {ts(450)}})}, {{}}};
  const std::vector<Placement> places = {{{0, 75, 100, 400, 405, 410}, {15, 15, 15, 0, 0}}};
  const Transcript keep = run(testing::fast_params(), plans, places, 20.0);
  ASSERT_EQ(keep.segments.size(), 2u);
  EXPECT_EQ(keep.segments[1].text, " la la");
  EXPECT_EQ(keep.segments[1].t0, 800);
  EXPECT_EQ(keep.segments[1].t1, 820);
  for (const Word& w : keep.segments[1].words) EXPECT_LT(w.p, 0.15f);
  EXPECT_EQ(keep.segments[0].t1, 250);  // the last word's end pulled back to the segment's (2.5 s)

  TranscribeParams p = testing::fast_params();
  p.hallucination_silence_threshold = 2.0f;
  const Transcript cut = run(p, plans, places, 20.0);
  ASSERT_EQ(cut.segments.size(), 1u);
  EXPECT_EQ(cut.segments[0].text, " one two three");
  ASSERT_GE(cut.windows.size(), 2u);
  EXPECT_EQ(cut.windows[1].t0, 800);
}

// A window whose first words are a suspected hallucination after more than the threshold of
// silence keeps nothing: the loop decodes again from the hallucination's start.
TEST_F(WordTiming, LeadingHallucinationAfterSilenceDropsTheWindow) {
  const auto hal = text(" la la");
  const auto real = text(" one two three");
  const std::vector<WindowPlan> plans = {{say({{ts(400)}, hal, {ts(450)}})}, {say({{ts(0)}, real, {ts(100)}})}, {{}}};
  const std::vector<Placement> places = {{{0, 405, 410}, {0, 0}}, {{0, 25, 50, 75}, {15, 15, 15}}};
  TranscribeParams p = testing::fast_params();
  p.hallucination_silence_threshold = 2.0f;
  p.max_initial_timestamp = -1.0f;  // the window may open at 8 s
  const Transcript t = run(p, plans, places, 20.0);
  ASSERT_GE(t.windows.size(), 2u);
  EXPECT_EQ(t.windows[1].t0, 800);  // 8.0 s: where the suspect started
  ASSERT_FALSE(t.segments.empty());
  EXPECT_EQ(t.segments[0].text, " one two three");
  EXPECT_GE(t.segments[0].t0, 800);
}

TEST_F(WordTiming, AnomalyScoreAsTheReference) {
  decode::SegmentWord w{" a", 1.0, 1.5, 0.9};
  EXPECT_DOUBLE_EQ(word_anomaly_score(w), 0.0);
  w.probability = 0.1;
  EXPECT_DOUBLE_EQ(word_anomaly_score(w), 1.0);
  w.end = 1.1;  // 0.1 s: (0.133 - 0.1) * 15 more
  EXPECT_NEAR(word_anomaly_score(w), 1.0 + 0.033 * 15, 1e-9);
  w = {" a", 0.0, 3.0, 0.9};  // 1 s over 2 s
  EXPECT_NEAR(word_anomaly_score(w), 1.0, 1e-9);
  decode::SegmentForWords s;
  s.words = {{" a", 0.0, 0.5, 0.9}, {".", 0.5, 0.5, 0.01}, {" b", 0.5, 1.0, 0.9}};
  EXPECT_FALSE(is_segment_anomaly(&s));  // the bare "." is punctuation, left out
  s.words[0].probability = 0.01;
  s.words[2].probability = 0.01;
  EXPECT_TRUE(is_segment_anomaly(&s));  // 2 improbable words of 2
  EXPECT_FALSE(is_segment_anomaly(nullptr));
}

TEST_F(WordTiming, BadValuesFailBeforeAnyCompute) {
  auto err = [](const std::function<void(TranscribeParams&)>& set) {
    TranscribeParams p = testing::fast_params();
    p.word_timestamps = true;
    set(p);
    return error_of([&] { resolve_alignment_heads(m(), p); });
  };
  EXPECT_TRUE(mentions(err([](auto& p) { p.dtw_preset = "huge"; }), {"unknown preset 'huge'", "tiny.en"}));
  EXPECT_TRUE(mentions(err([](auto& p) { p.dtw_preset = "large.v3"; }), {"large.v3", "32 layers x 20", "2 x 2"}));
  EXPECT_TRUE(mentions(err([](auto& p) { p.dtw_preset = "top-n"; }), {"dtw_n_top", "[1, 2]"}));
  EXPECT_TRUE(mentions(err([](auto& p) {
                         p.dtw_preset = "custom";
                         p.dtw_heads = "1,0 2,1";
                       }),
                       {"(2,1)", "layers 0..1"}));
  EXPECT_TRUE(mentions(err([](auto& p) {
                         p.dtw_preset = "custom";
                         p.dtw_heads = "1;0";
                       }),
                       {"expected ','"}));
  EXPECT_TRUE(
      mentions(err([](auto& p) { p.hallucination_silence_threshold = NAN; }), {"hallucination_silence_threshold"}));
  TranscribeParams ok = testing::fast_params();
  ok.word_timestamps = true;
  ok.dtw_preset = "top-n";
  ok.dtw_n_top = 2;
  EXPECT_EQ(resolve_alignment_heads(m(), ok).size(), 4u);
  ok.dtw_preset = "custom";
  ok.dtw_heads = "1,1 0,0";
  EXPECT_EQ(resolve_alignment_heads(m(), ok), (std::vector<decode::AlignmentHead>{{0, 0}, {1, 1}}));
  ok.word_timestamps = false;
  ok.dtw_preset = "huge";  // not read without word timestamps
  EXPECT_TRUE(resolve_alignment_heads(m(), ok).empty());
  // The public defaults are the reference's punctuation sets.
  EXPECT_EQ(TranscribeParams{}.prepend_punctuations, decode::kPrependPunctuations);
  EXPECT_EQ(TranscribeParams{}.append_punctuations, decode::kAppendPunctuations);
}

}  // namespace
}  // namespace hark::testing
