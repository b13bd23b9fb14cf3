// The decoding policy, pinned down: the real long-form loop (run_long_form) and window search
// (decode_window) driven by a ScriptedModel whose logits are chosen by hand. The LoadedModel (real
// vocabulary, special tokens, suppress lists) comes from a micro model written with the tiny
// model's vocabulary (../shared/model-headers).
#include <gtest/gtest.h>

// Plans are written as aggregates with their leading fields only.
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "decode/fallback.h"
#include "decode/greedy.h"
#include "decode/scripted_model.h"
#include "decode/split_window.h"
#include "frontend/mel.h"
#include "model/model_test_util.h"
#include "model/model_writer.h"
#include "transcribe/job_control.h"
#include "transcribe/loaded_model.h"
#include "transcribe/long_form.h"
#include "transcribe/test_params.h"

namespace hark::testing {
namespace {

std::shared_ptr<const LoadedModel> load_micro(const char* header, const char* preset, TempFile& f) {
  const std::string vocab = model_header_path(header);
  if (vocab.empty()) return nullptr;
  TestModelOptions o;
  EXPECT_TRUE(test_model_preset(preset, &o.hparams));
  o.vocab_from = vocab;
  write_test_model(o, f.path());
  ContextParams cp;
  cp.device = "cpu";
  cp.n_threads = 1;
  return LoadedModel::load(f.path(), cp);
}

class Policy : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    ml_file_ = new TempFile("policy-ml");
    en_file_ = new TempFile("policy-en");
    ml_ = new std::shared_ptr<const LoadedModel>(load_micro("for-tests-ggml-tiny.bin", "micro", *ml_file_));
    en_ = new std::shared_ptr<const LoadedModel>(load_micro("for-tests-ggml-tiny.en.bin", "micro.en", *en_file_));
  }
  static void TearDownTestSuite() {
    delete ml_;
    delete en_;
    delete ml_file_;
    delete en_file_;
  }
  void SetUp() override {
    if (!*ml_ || !*en_) GTEST_SKIP() << "no ../shared/model-headers";
  }

  static const LoadedModel& ml() { return **ml_; }
  static const LoadedModel& en() { return **en_; }
  static const SpecialTokens& st(const LoadedModel& m = ml()) { return m.file->vocab().special(); }
  static int32_t ts(int i, const LoadedModel& m = ml()) { return st(m).timestamp_begin + i; }
  static std::vector<int32_t> words(const std::string& s, const LoadedModel& m = ml()) {
    return m.tokenizer->encode(s);
  }
  static std::vector<int32_t> cat(std::initializer_list<std::vector<int32_t>> parts) {
    std::vector<int32_t> r;
    for (const auto& p : parts) r.insert(r.end(), p.begin(), p.end());
    return r;
  }

  // Deterministic low noise of `seconds`.
  static std::vector<float> audio(double seconds) {
    std::vector<float> a(static_cast<size_t>(seconds * kSampleRate));
    uint32_t s = 12345;
    for (float& v : a) {
      s = s * 1664525u + 1013904223u;
      v = (static_cast<float>(s >> 8) / 16777216.0f - 0.5f) * 0.02f;
    }
    return a;
  }

  struct Run {
    Transcript t;
    std::unique_ptr<ScriptedModel> model;
  };
  static Run run(const LoadedModel& m, const TranscribeParams& p, ScriptedModel::Script script, double seconds = 10.0,
                 const LongFormHooks& hooks = {}) {
    Run r;
    r.model = std::make_unique<ScriptedModel>(m.file->hparams().n_text_ctx, std::move(script));
    const std::vector<float> a = audio(seconds);
    const JobRequest req = check_request(m, a, p);
    JobControl ctl(job_for(nullptr), nullptr);
    r.t = run_long_form(m, *r.model, req, p, ctl, hooks);
    jobs::remove(ctl.job().id());
    return r;
  }
  static Run run_plans(const TranscribeParams& p, std::vector<WindowPlan> plans, double seconds = 10.0,
                       const LoadedModel& m = ml()) {
    return run(m, p, plans_script(st(m), std::move(plans)), seconds);
  }
  // The tokens fed back one at a time in window w: what was sampled (the last sampled token, when
  // it ended the pass, is never fed).
  // (Of the window's first pass: later passes are fallbacks.)
  static std::vector<int32_t> fed_back(const ScriptedModel& sm, int w) {
    std::vector<int32_t> r;
    for (const auto& c : sm.calls)
      if (c.window == w && c.pass == 0 && c.tokens.size() == 1 && c.n_past > 0 && c.tokens[0] != st().sot)
        r.push_back(c.tokens[0]);
    return r;
  }

  static inline TempFile* ml_file_ = nullptr;
  static inline TempFile* en_file_ = nullptr;
  static inline std::shared_ptr<const LoadedModel>* ml_ = nullptr;
  static inline std::shared_ptr<const LoadedModel>* en_ = nullptr;
};

// ---- the plain path: what is fed, where, and what comes out ----

TEST_F(Policy, FeedsPrefixPassesThenEachToken) {
  const auto hello = words(" Hello world");
  const auto r = run_plans({}, {{cat({{ts(0)}, hello, {ts(100)}})}});
  ASSERT_EQ(r.t.segments.size(), 1u);
  EXPECT_EQ(r.t.segments[0].text, " Hello world");
  EXPECT_EQ(r.t.segments[0].t0, 0);
  EXPECT_EQ(r.t.segments[0].t1, 200);  // ts 100 = 2.00 s
  EXPECT_EQ(r.t.language, "en");
  const auto& c = r.model->calls;
  ASSERT_GE(c.size(), 3u);
  EXPECT_EQ(c[0].tokens, (std::vector<int32_t>{st().sot}));  // no prompt: <|startoftranscript|> alone
  EXPECT_EQ(c[0].n_past, 0);
  EXPECT_EQ(c[1].tokens, (std::vector<int32_t>{st().lang_first + 0, st().transcribe}));
  EXPECT_EQ(c[1].n_past, 1);
  // then every sampled token but the last at n_past 3, 4, ...
  const std::vector<int32_t> said = cat({{ts(0)}, hello, {ts(100)}});
  ASSERT_EQ(c.size(), 2 + said.size());
  for (size_t k = 0; k < said.size(); ++k) {
    EXPECT_EQ(c[2 + k].tokens, (std::vector<int32_t>{said[k]}));
    EXPECT_EQ(c[2 + k].n_past, static_cast<int>(3 + k));
  }
  EXPECT_EQ(r.t.timings.n_decode_tokens, static_cast<int>(said.size()) + 1);  // + end-of-text
  EXPECT_EQ(r.t.segments[0].temperature, 0.0f);
  EXPECT_GT(r.t.segments[0].avg_logprob, -0.01);
  ASSERT_EQ(r.t.segments[0].tokens.size(), hello.size());
  EXPECT_NEAR(r.t.segments[0].tokens[0].logp, std::log(r.t.segments[0].tokens[0].p), 1e-5);
}

// ---- timestamp rules, through the loop ----

TEST_F(Policy, FirstTokenIsATimestampNoLaterThanMaxInitial) {
  const auto hello = words(" Hello");
  // wants text first: a timestamp is forced, the earliest allowed (all equal) = <|0.00|>
  auto r = run_plans({}, {{cat({hello, {ts(100)}})}});
  ASSERT_FALSE(fed_back(*r.model, 0).empty());
  EXPECT_EQ(fed_back(*r.model, 0)[0], ts(0));
  // wants <|2.00|> first: too late for max_initial_timestamp 1.0 s; with a second choice at
  // <|0.60|> that one is taken
  WindowPlan late{cat({{ts(100)}, hello, {ts(150)}})};
  late.extra[ts(30)] = 5.0f;
  r = run_plans({}, {late});
  EXPECT_EQ(fed_back(*r.model, 0)[0], ts(30));
  // max_initial_timestamp 3 s allows it
  TranscribeParams p = testing::fast_params();
  p.max_initial_timestamp = 3.0f;
  r = run_plans(p, {late});
  EXPECT_EQ(fed_back(*r.model, 0)[0], ts(100));
  // max_initial_timestamp 0.5 s: <|0.60|> is too late as well
  p.max_initial_timestamp = 0.5f;
  r = run_plans(p, {late});
  EXPECT_LE(fed_back(*r.model, 0)[0], ts(25));
}

TEST_F(Policy, TextFollowsAnOpeningTimestampAndPairsStayPaired) {
  const auto a = words(" one"), b = words(" two");
  // wants two timestamps in a row at the start: the second must be text
  WindowPlan plan{cat({{ts(0), ts(10)}, a, {ts(50)}})};
  plan.extra[a[0]] = 5.0f;
  auto r = run_plans({}, {plan});
  auto fb = fed_back(*r.model, 0);
  ASSERT_GE(fb.size(), 2u);
  EXPECT_FALSE(st().is_timestamp(fb[1])) << "text must follow the opening timestamp";
  // after a closing timestamp only a timestamp (or end) may follow: wants text there
  WindowPlan after_close{cat({{ts(0)}, a, {ts(50)}, b, {ts(60), ts(80)}})};
  after_close.extra[ts(60)] = 5.0f;  // the second choice there
  r = run_plans({}, {after_close});
  fb = fed_back(*r.model, 0);
  const size_t close = 1 + a.size();
  ASSERT_GT(fb.size(), close + 1);
  EXPECT_EQ(fb[close], ts(50));
  EXPECT_EQ(fb[close + 1], ts(60)) << "text right after a closing timestamp";
  // after a completed pair, text again (not a third timestamp)
  WindowPlan triple{cat({{ts(0)}, a, {ts(50), ts(50), ts(70)}, b, {ts(90)}})};
  r = run_plans({}, {triple});
  fb = fed_back(*r.model, 0);
  ASSERT_GT(fb.size(), close + 2);
  EXPECT_EQ(fb[close + 1], ts(50));
  EXPECT_FALSE(st().is_timestamp(fb[close + 2])) << "a third timestamp after a pair";
}

TEST_F(Policy, TimestampsNeverDecreaseAndSegmentsHaveLength) {
  const auto a = words(" one"), b = words(" two");
  // closing timestamp equal to the opening one (zero length): not allowed
  auto r = run_plans({}, {{cat({{ts(20)}, a, {ts(20)}})}});
  auto fb = fed_back(*r.model, 0);
  EXPECT_EQ(std::count(fb.begin(), fb.end(), ts(20)), 1) << "zero-length segment";
  for (int32_t id : fb) {
    if (st().is_timestamp(id)) {
      EXPECT_GE(id, ts(20));
    }
  }
  // next segment opening before the last closing: not allowed
  r = run_plans({}, {{cat({{ts(0)}, a, {ts(50), ts(40)}, b, {ts(90)}})}});
  fb = fed_back(*r.model, 0);
  int32_t last = -1;
  for (int32_t id : fb)
    if (st().is_timestamp(id)) {
      EXPECT_GE(id, last);
      last = id;
    }
  for (const Segment& s : r.t.segments) EXPECT_LT(s.t0, s.t1);
}

TEST_F(Policy, TimestampForcedWhenTheirMassBeatsTheBestText) {
  const auto a = words(" one");
  // at step 2 (after " one"), text wants another word at 6 but every timestamp sits at 0.5:
  // log(1450 * e^0.5) ~ 7.8 > 6: a timestamp must come
  WindowPlan p1{cat({{ts(0)}, a, a, a, {ts(100)}}), 6.0f};
  for (int i = 0; i <= 1500; ++i) p1.extra[ts(i)] = 0.5f;
  TranscribeParams once = testing::fast_params();
  once.temperature_inc = 0.0f;
  auto r = run_plans(once, {p1});
  auto fb = fed_back(*r.model, 0);
  ASSERT_GE(fb.size(), 3u);
  EXPECT_TRUE(st().is_timestamp(fb[1 + a.size()])) << "timestamp mass won: a timestamp must be forced";
  // with timestamps at -5 the text wins
  WindowPlan p2 = p1;
  for (int i = 0; i <= 1500; ++i) p2.extra[ts(i)] = -5.0f;
  p2.extra[ts(0)] = 0.0f;
  r = run_plans(once, {p2});
  fb = fed_back(*r.model, 0);
  ASSERT_GE(fb.size(), 3u);
  EXPECT_FALSE(st().is_timestamp(fb[1 + a.size()]));
}

TEST_F(Policy, NoTimestampsTokenIsNeverSampled) {
  const auto a = words(" one");
  auto r = run_plans({}, {{cat({{ts(0), st().no_timestamps}, a, {ts(100)}})}});
  for (int32_t id : fed_back(*r.model, 0)) EXPECT_NE(id, st().no_timestamps);
  TranscribeParams p = testing::fast_params();
  p.timestamps = false;
  r = run_plans(p, {{cat({{st().no_timestamps}, a})}});
  // the start sequence ends with <|notimestamps|>; it is never sampled, nor any timestamp
  EXPECT_EQ(r.model->calls[1].tokens.back(), st().no_timestamps);
  for (int32_t id : fed_back(*r.model, 0)) {
    EXPECT_NE(id, st().no_timestamps);
    EXPECT_FALSE(st().is_timestamp(id));
  }
}

TEST_F(Policy, BlankAndEndOfTextSuppressedAtTheStart) {
  TranscribeParams p = testing::fast_params();
  p.timestamps = false;
  const int32_t space = ml().tokenizer->find(" ");
  ASSERT_GE(space, 0);
  const auto a = words(" one");
  auto r = run_plans(p, {{cat({{space}, a})}});
  auto fb = fed_back(*r.model, 0);
  ASSERT_FALSE(fb.empty());
  EXPECT_NE(fb[0], space);
  // end-of-text first: suppressed too, so the window has text
  r = run_plans(p, {{{}}});
  EXPECT_FALSE(fed_back(*r.model, 0).empty());
  // the non-speech list never holds the bare space (a symbol's encoding may start with it when
  // the file lost the merged " \xe2" token)
  EXPECT_EQ(std::count(ml().suppress.begin(), ml().suppress.end(), space), 0);
  // suppress_blank off: the blank comes through
  p.suppress_blank = false;
  r = run_plans(p, {{cat({{space}, a})}});
  fb = fed_back(*r.model, 0);
  ASSERT_FALSE(fb.empty());
  EXPECT_EQ(fb[0], space);
}

// ---- seeking ----

TEST_F(Policy, SeeksToTheLastCompletePair) {
  const auto a = words(" one"), b = words(" two"), c = words(" three");
  // two complete segments, then an unfinished one: the next window starts at the last closing
  // timestamp (<|4.00|> = 400 frames) and the unfinished text is not kept
  const auto r = run_plans(
      {}, {{cat({{ts(0)}, a, {ts(100), ts(100)}, b, {ts(200), ts(200)}, c})}, {cat({{ts(0)}, c, {ts(50)}})}}, 40.0);
  ASSERT_GE(r.model->mels.size(), 2u);
  const frontend::LogMel mel = frontend::log_mel_spectrogram(audio(40.0).data(), audio(40.0).size(), ml().filters, 1);
  EXPECT_EQ(r.model->mels[0], frontend::mel_window(mel, 0));
  EXPECT_EQ(r.model->mels[1], frontend::mel_window(mel, 400));
  ASSERT_GE(r.t.segments.size(), 3u);
  EXPECT_EQ(r.t.segments[0].text, " one");
  EXPECT_EQ(r.t.segments[1].text, " two");
  EXPECT_EQ(r.t.segments[1].t1, 400);
  EXPECT_EQ(r.t.segments[2].text, " three");  // from the second window
  EXPECT_EQ(r.t.segments[2].t0, 400);
  EXPECT_EQ(r.t.windows[1].t0, 400);
}

TEST_F(Policy, SingleTrailingTimestampConsumesTheWholeWindow) {
  const auto a = words(" one"), b = words(" two");
  const auto r = run_plans({}, {{cat({{ts(0)}, a, {ts(100), ts(100)}, b, {ts(200)}})}}, 40.0);
  ASSERT_GE(r.model->mels.size(), 2u);
  const frontend::LogMel mel = frontend::log_mel_spectrogram(audio(40.0).data(), audio(40.0).size(), ml().filters, 1);
  EXPECT_EQ(r.model->mels[1], frontend::mel_window(mel, 3000));
  ASSERT_GE(r.t.segments.size(), 2u);
  EXPECT_EQ(r.t.segments[1].text, " two");
  EXPECT_EQ(r.t.segments[1].t1, 400);
}

TEST_F(Policy, NoClosingTimestampConsumesTheWholeWindow) {
  const auto a = words(" one");
  const auto r = run_plans({}, {{cat({{ts(0)}, a})}}, 40.0);
  ASSERT_EQ(r.t.windows.size(), 2u);
  EXPECT_EQ(r.t.windows[1].t0, 3000);
  ASSERT_GE(r.t.segments.size(), 1u);
  EXPECT_EQ(r.t.segments[0].t1, 3000);
}

TEST_F(Policy, SeekMovesAtLeastOneFrame) {
  // A closing timestamp at <|0.00|> (only split_window can see one: the rules never produce it)
  const std::vector<int32_t> toks = {ts(0), ts(0), words(" one")[0], st().eot};
  const decode::WindowResult w = decode::split_window(st(), toks, 0, 3000);
  EXPECT_EQ(w.consumed_frames, 1);
}

TEST_F(Policy, ProgressMovesWithTheTimestampsInsideAWindow) {
  const auto a = words(" one"), b = words(" two"), c = words(" three");
  // 40 s = 4000 frames; window 0 reaches <|2.00|> (200 frames: 5%) and <|4.00|> (400: 10%) and
  // seeks to 400; window 1 covers the rest.
  auto model = std::make_unique<ScriptedModel>(
      ml().file->hparams().n_text_ctx,
      plans_script(st(),
                   {{cat({{ts(0)}, a, {ts(100), ts(100)}, b, {ts(200), ts(200)}, c})}, {cat({{ts(0)}, c, {ts(50)}})}}));
  const std::vector<float> samples = audio(40.0);
  const TranscribeParams p;
  const JobRequest req = check_request(ml(), samples, p);
  JobControl ctl(job_for(nullptr), nullptr);
  std::vector<int> seen;
  LongFormHooks hooks;
  hooks.on_progress = [&](int pct) { seen.push_back(pct); };
  const Transcript t = run_long_form(ml(), *model, req, p, ctl, hooks);
  jobs::remove(ctl.job().id());
  ASSERT_GE(t.segments.size(), 3u);
  // 5 comes from <|2.00|> inside window 0, before its seek is known; then 10, then 100.
  ASSERT_GE(seen.size(), 3u);
  EXPECT_EQ(seen[0], 5);
  EXPECT_EQ(seen[1], 10);
  EXPECT_EQ(seen.back(), 100);
  EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
  EXPECT_EQ(std::adjacent_find(seen.begin(), seen.end()), seen.end());  // each value once
}

// ---- prompts ----

TEST_F(Policy, PreviousTextIsTheNextPrompt) {
  const auto a = words(" one"), b = words(" two"), c = words(" three");
  const std::vector<WindowPlan> plans = {{cat({{ts(0)}, a, {ts(100), ts(100)}, b, {ts(200), ts(200)}, c})},
                                         {cat({{ts(0)}, c, {ts(1400)}})}};
  auto r = run_plans({}, plans, 40.0);
  auto starts = r.model->pass_starts(1);
  ASSERT_FALSE(starts.empty());
  EXPECT_EQ(starts[0].tokens, cat({{st().prev}, a, b, {st().sot}}));
  // no_context: nothing before <|startoftranscript|>
  TranscribeParams p = testing::fast_params();
  p.no_context = true;
  r = run_plans(p, plans, 40.0);
  starts = r.model->pass_starts(1);
  ASSERT_FALSE(starts.empty());
  EXPECT_EQ(starts[0].tokens, (std::vector<int32_t>{st().sot}));
  // max_context 1: the last previous token only
  p = {};
  p.max_context = 1;
  r = run_plans(p, plans, 40.0);
  starts = r.model->pass_starts(1);
  EXPECT_EQ(starts[0].tokens, cat({{st().prev}, {b.back()}, {st().sot}}));
  // max_context 0: as no_context
  p.max_context = 0;
  r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, (std::vector<int32_t>{st().sot}));
}

TEST_F(Policy, InitialPromptAndCarry) {
  const auto a = words(" one"), c = words(" three");
  const std::vector<WindowPlan> plans = {{cat({{ts(0)}, a, {ts(100), ts(100)}, c})}, {cat({{ts(0)}, c, {ts(1400)}})}};
  TranscribeParams p = testing::fast_params();
  p.initial_prompt = "Glossary";
  const auto g = words(" Glossary");
  auto r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(0)[0].tokens, cat({{st().prev}, g, {st().sot}}));
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, cat({{st().prev}, g, a, {st().sot}}));  // OpenAI: all_tokens
  // no_context: the initial prompt conditions the first window only
  p.no_context = true;
  r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(0)[0].tokens, cat({{st().prev}, g, {st().sot}}));
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, (std::vector<int32_t>{st().sot}));
  // carry: in front of every window, also without previous text
  p.carry_initial_prompt = true;
  r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, cat({{st().prev}, g, {st().sot}}));
  p.no_context = false;
  r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, cat({{st().prev}, g, a, {st().sot}}));
}

TEST_F(Policy, PromptCappedAtHalfTheTextContextMinusOne) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += " w" + std::to_string(i);
  TranscribeParams p = testing::fast_params();
  p.initial_prompt = text;
  const auto all = words(" " + text);
  ASSERT_GT(all.size(), 223u);
  const auto r = run_plans(p, {{cat({{ts(0)}, words(" one"), {ts(100)}})}});
  const auto first = r.model->pass_starts(0)[0].tokens;
  const int room = ml().file->hparams().n_text_ctx / 2 - 1;  // 223
  ASSERT_EQ(first.size(), static_cast<size_t>(room + 2));
  EXPECT_EQ(first.front(), st().prev);
  EXPECT_EQ(first.back(), st().sot);
  EXPECT_TRUE(std::equal(first.begin() + 1, first.end() - 1, all.end() - room)) << "keeps the most recent tokens";
  // carried: the initial prompt stays in front, capped too
  p.carry_initial_prompt = true;
  const auto r2 = run_plans(p, {{cat({{ts(0)}, words(" one"), {ts(100)}})}});
  EXPECT_EQ(r2.model->pass_starts(0)[0].tokens.size(), static_cast<size_t>(room + 2));
}

TEST_F(Policy, CarriedPromptStaysInFrontWhenThePreviousTextOverflows) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += " w" + std::to_string(i);
  TranscribeParams p = testing::fast_params();
  p.initial_prompt = text;
  p.carry_initial_prompt = true;
  const auto g = words(" " + text);
  ASSERT_LT(g.size(), 200u);
  std::vector<int32_t> long_text = {ts(0)};
  for (int i = 0; i < 200; ++i) long_text.push_back(1000 + i);
  long_text.push_back(ts(100));
  const auto r = run_plans(p, {{long_text}, {cat({{ts(0)}, words(" one"), {ts(100)}})}}, 40.0);
  const auto first = r.model->pass_starts(1).at(0).tokens;
  ASSERT_EQ(first.size(), 225u);
  EXPECT_TRUE(std::equal(g.begin(), g.end(), first.begin() + 1)) << "the carried prompt was cut";
  EXPECT_EQ(first[first.size() - 2], 1000 + 199);  // then the most recent previous text
}

TEST_F(Policy, DecodeWindowCapsAPromptOnItsOwn) {
  // The loop caps the prompt before; decode_window does not trust its caller.
  decode::WindowRequest req;
  req.start = ml().start_sequence(0, false, true);
  for (int i = 0; i < 300; ++i) req.prompt.push_back(1000 + i);
  ScriptedModel sm(448, plans_script(st(), {{{ts(0)}}}));
  decode::decode_window(sm, st(), req);
  ASSERT_FALSE(sm.calls.empty());
  const auto& first = sm.calls[0].tokens;
  ASSERT_EQ(first.size(), 225u);  // <|startofprev|> + 223 + <|startoftranscript|>
  EXPECT_EQ(first[1], 1000 + 300 - 223);
}

// ---- silence, language, caps ----

TEST_F(Policy, NoSpeechWindowIsSkippedOnlyWhenTheTextIsUnsure) {
  const auto a = words(" one");
  // P(no speech) ~ 1 and the text unsure (margin 2 over 51k tokens): skipped
  WindowPlan silent{cat({{ts(0)}, a, {ts(100)}}), 2.0f, 30.0f};
  auto r = run_plans({}, {silent});
  ASSERT_EQ(r.t.windows.size(), 1u);
  EXPECT_TRUE(r.t.windows[0].skipped_as_silence);
  EXPECT_TRUE(r.t.segments.empty());
  EXPECT_EQ(r.t.n_fallback_windows, 0) << "silence is not retried";
  // the same no-speech probability but confident text: kept
  WindowPlan sure = silent;
  sure.margin = 20.0f;
  r = run_plans({}, {sure});
  EXPECT_FALSE(r.t.windows[0].skipped_as_silence);
  ASSERT_EQ(r.t.segments.size(), 1u);
  EXPECT_GT(r.t.segments[0].no_speech_prob, 0.99f);
  // unsure text but the model hears speech: kept (after fallback)
  WindowPlan speech = silent;
  speech.no_speech = 0.0f;
  r = run_plans({}, {speech});
  EXPECT_FALSE(r.t.windows[0].skipped_as_silence);
}

TEST_F(Policy, AutoLanguageOnMultilingualModels) {
  TranscribeParams p = testing::fast_params();
  p.language = "auto";
  WindowPlan de{cat({{ts(0)}, words(" eins"), {ts(100)}})};
  de.language = 2;  // "de"
  const auto r = run_plans(p, {de});
  EXPECT_EQ(r.t.language, "de");
  EXPECT_GT(r.t.language_prob, 0.99f);
  // detection: [sot] alone at 0; then the window's passes carry <|de|>
  ASSERT_GE(r.model->calls.size(), 3u);
  EXPECT_EQ(r.model->calls[0].tokens, (std::vector<int32_t>{st().sot}));
  EXPECT_EQ(r.model->calls[2].tokens, (std::vector<int32_t>{st().lang_first + 2, st().transcribe}));
  // a given language is used as given, with no detection
  p.language = "fr";
  const auto r2 = run_plans(p, {de});
  EXPECT_EQ(r2.t.language, "fr");
  EXPECT_EQ(r2.t.language_prob, 0.0f);
  EXPECT_EQ(r2.model->calls[1].tokens, (std::vector<int32_t>{st().lang_first + language_index("fr"), st().transcribe}));
}

TEST_F(Policy, EnglishOnlyModelsTakeNoLanguageTokens) {
  TranscribeParams p = testing::fast_params();
  p.language = "auto";
  const auto r = run_plans(p, {{cat({{ts(0, en())}, words(" one", en()), {ts(100, en())}})}}, 10.0, en());
  EXPECT_EQ(r.t.language, "en");
  ASSERT_GE(r.model->calls.size(), 2u);
  EXPECT_EQ(r.model->calls[0].tokens, (std::vector<int32_t>{st(en()).sot}));
  // no language/task pass: the next call is the first sampled token
  EXPECT_EQ(r.model->calls[1].tokens, (std::vector<int32_t>{ts(0, en())}));
  ASSERT_EQ(r.t.segments.size(), 1u);
  EXPECT_EQ(r.t.segments[0].text, " one");
}

TEST_F(Policy, LanguageIsEmptyWhenDetectionNeverRan) {
  TranscribeParams p = testing::fast_params();
  p.language = "auto";
  p.on_encoder_begin = [] { return false; };
  Run r;
  r.model = std::make_unique<ScriptedModel>(448, plans_script(st(), {{}}));
  const std::vector<float> a = audio(5.0);
  const JobRequest req = check_request(ml(), a, p);
  JobControl ctl(job_for(nullptr), nullptr);
  LongFormHooks hooks;
  hooks.on_encoder_begin = [] { return false; };
  r.t = run_long_form(ml(), *r.model, req, p, ctl, hooks);
  jobs::remove(ctl.job().id());
  EXPECT_TRUE(r.t.aborted);
  EXPECT_EQ(r.t.language, "");
}

TEST_F(Policy, TokenCapPerWindow) {
  std::vector<int32_t> many = {ts(0)};
  for (int i = 0; i < 50; ++i) many.push_back(words(" w" + std::to_string(i))[0]);
  TranscribeParams p = testing::fast_params();
  p.max_tokens_per_window = 5;
  p.temperature_inc = 0.0f;  // no fallback: exactly one pass
  const auto r = run_plans(p, {{many}});
  EXPECT_EQ(fed_back(*r.model, 0).size(), 4u);  // 5 sampled, the 5th not fed back
  EXPECT_EQ(r.t.timings.n_decode_tokens, 5);
  // default cap: n_text_ctx / 2 = 224 sampled tokens
  std::vector<int32_t> lots = {ts(0)};
  for (int i = 0; i < 300; ++i) lots.push_back(words(" w" + std::to_string(i % 50))[0]);
  const auto r2 = run_plans(p, {{lots}});
  p.max_tokens_per_window = 0;
  const auto r3 = run_plans(p, {{lots}});
  EXPECT_EQ(fed_back(*r3.model, 0).size(), 223u);
  EXPECT_EQ(r3.t.timings.n_decode_tokens, 224);
}

TEST_F(Policy, SingleSegmentMakesOneSegmentPerWindow) {
  const auto a = words(" one"), b = words(" two"), c = words(" three");
  TranscribeParams p = testing::fast_params();
  p.single_segment = true;
  const auto r = run_plans(p, {{cat({{ts(0)}, a, {ts(100), ts(100)}, b, {ts(200), ts(200)}, c})}}, 40.0);
  ASSERT_GE(r.t.windows.size(), 2u);
  EXPECT_EQ(r.t.windows[1].t0, 3000);  // the whole window consumed
  ASSERT_GE(r.t.segments.size(), 1u);
  EXPECT_EQ(r.t.segments[0].text, " one two");
  EXPECT_EQ(r.t.segments[0].t0, 0);
  EXPECT_EQ(r.t.segments[0].t1, 3000);
}

// ---- suppression ----

TEST_F(Policy, SuppressTokensRegexAndNonSpeech) {
  const auto a = words(" one"), b = words(" two");
  const std::vector<WindowPlan> plans = {{cat({{ts(0)}, a, {ts(100)}})}};
  TranscribeParams p = testing::fast_params();
  p.temperature_inc = 0.0f;
  p.suppress_tokens = {a[0]};
  auto r = run_plans(p, plans);
  for (int32_t id : fed_back(*r.model, 0)) EXPECT_NE(id, a[0]);
  p.suppress_tokens.clear();
  p.suppress_regex = " o.*";
  r = run_plans(p, plans);
  for (int32_t id : fed_back(*r.model, 0)) EXPECT_NE(id, a[0]);
  // whole-token match: " tw.*" does not touch " one"
  p.suppress_regex = " tw.*";
  r = run_plans(p, plans);
  EXPECT_EQ(fed_back(*r.model, 0)[1], a[0]);
  // non-speech symbols: suppressed by default, allowed with suppress_nst off
  p.suppress_regex.clear();
  const int32_t sym = ml().tokenizer->find(" (");
  ASSERT_GE(sym, 0);
  r = run_plans(p, {{cat({{ts(0), sym}, a, {ts(100)}})}});
  EXPECT_NE(fed_back(*r.model, 0)[1], sym);
  p.suppress_nst = false;
  r = run_plans(p, {{cat({{ts(0), sym}, a, {ts(100)}})}});
  EXPECT_EQ(fed_back(*r.model, 0)[1], sym);
  (void)b;
}

TEST_F(Policy, BadValuesAreErrorsBeforeAnyCompute) {
  const std::vector<float> a = audio(1.0);
  auto bad = [&](auto set, std::initializer_list<std::string> words) {
    TranscribeParams p = testing::fast_params();
    set(p);
    EXPECT_TRUE(mentions(error_of([&] { check_request(ml(), a, p); }), words));
  };
  bad([](TranscribeParams& p) { p.temperature = -0.1f; }, {"temperature", ">= 0"});
  bad([](TranscribeParams& p) { p.temperature = NAN; }, {"temperature"});
  bad([](TranscribeParams& p) { p.temperature_inc = -1.0f; }, {"temperature_inc"});
  bad([](TranscribeParams& p) { p.best_of = 0; }, {"best_of", "0"});
  bad([](TranscribeParams& p) { p.suppress_regex = "(["; }, {"suppress_regex", "(["});
  bad([](TranscribeParams& p) { p.suppress_tokens = {-1}; }, {"suppress_tokens", "-1"});
  bad([](TranscribeParams& p) { p.suppress_tokens = {51865}; }, {"suppress_tokens", "51865"});
  bad([](TranscribeParams& p) { p.max_context = -2; }, {"max_context"});
  bad([](TranscribeParams& p) { p.length_penalty = INFINITY; }, {"length_penalty"});
}

// ---- temperature fallback and best-of ----

TEST_F(Policy, FallbackOnLowLogprob) {
  const auto a = words(" one");
  // unsure at every temperature: all six are tried, the last kept
  WindowPlan unsure{cat({{ts(0)}, a, {ts(100)}}), 4.0f};
  TranscribeParams fb = testing::fast_params();
  fb.temperature_inc = 0.2f;  // OpenAI's temperatures 0, 0.2, ... 1.0
  // Each retry is told (on_fallback): the window, the next temperature, the failed figures.
  std::vector<Fallback> told;
  LongFormHooks hooks;
  hooks.on_fallback = [&](const Fallback& f) { told.push_back(f); };
  auto r = run(ml(), fb, plans_script(st(), {unsure}), 10.0, hooks);
  EXPECT_EQ(r.model->pass_starts(0).size(), 6u);
  EXPECT_EQ(r.t.n_fallback_windows, 1);
  for (const Segment& s : r.t.segments) EXPECT_FLOAT_EQ(s.temperature, 1.0f);
  ASSERT_EQ(told.size(), 5u) << "not after the last temperature";
  for (size_t k = 0; k < told.size(); ++k) {
    EXPECT_EQ(told[k].t0, 0);
    EXPECT_EQ(told[k].t1, 1000);  // the 10 s of audio
    EXPECT_FLOAT_EQ(told[k].temperature, 0.2f * static_cast<float>(k + 1));
    EXPECT_LT(told[k].avg_logprob, -1.0);
  }
  // sure from the third pass on (T = 0.4): that one is kept
  auto script = plan_script(st(), [&](const ScriptedModel::Call& c) {
    WindowPlan p = unsure;
    if (c.pass >= 2) p.margin = 20.0f;
    return p;
  });
  told.clear();
  r = run(ml(), fb, script, 10.0, hooks);
  EXPECT_EQ(r.model->pass_starts(0).size(), 3u);
  ASSERT_EQ(r.t.segments.size(), 1u);
  EXPECT_FLOAT_EQ(r.t.segments[0].temperature, 0.4f);
  EXPECT_GT(r.t.segments[0].avg_logprob, -1.0);
  ASSERT_EQ(told.size(), 2u);
  EXPECT_FLOAT_EQ(told[1].temperature, 0.4f);
  // temperature_inc 0 (hark's default): no fallback
  TranscribeParams p = testing::fast_params();
  p.temperature_inc = 0.0f;
  told.clear();
  r = run(ml(), p, plans_script(st(), {unsure}), 10.0, hooks);
  EXPECT_EQ(r.model->pass_starts(0).size(), 1u);
  EXPECT_EQ(r.t.n_fallback_windows, 0);
  EXPECT_TRUE(told.empty());
  ASSERT_FALSE(r.t.segments.empty());
  EXPECT_LT(r.t.segments[0].avg_logprob, -1.0);
}

TEST_F(Policy, FallbackOnCompressionRatio) {
  // " la" 120 times: confident but repetitive (ratio far above 2.4)
  std::vector<int32_t> rep = {ts(0)};
  const auto la = words(" la");
  for (int i = 0; i < 120; ++i) rep.insert(rep.end(), la.begin(), la.end());
  rep.push_back(ts(500));
  const std::vector<int32_t> plain = cat({{ts(0)}, words(" a quick brown fox"), {ts(100)}});
  auto script = plan_script(st(), [&](const ScriptedModel::Call& c) { return WindowPlan{c.pass == 0 ? rep : plain}; });
  TranscribeParams p = testing::fast_params();
  p.temperature_inc = 0.2f;
  p.best_of = 2;
  std::vector<Fallback> told;
  LongFormHooks hooks;
  hooks.on_fallback = [&](const Fallback& f) { told.push_back(f); };
  auto r = run(ml(), p, script, 10.0, hooks);
  ASSERT_EQ(r.t.segments.size(), 1u);
  EXPECT_EQ(r.t.segments[0].text, " a quick brown fox");
  EXPECT_FLOAT_EQ(r.t.segments[0].temperature, 0.2f);
  EXPECT_LT(r.t.segments[0].compression_ratio, 2.4);
  EXPECT_EQ(r.t.n_fallback_windows, 1);
  ASSERT_EQ(told.size(), 1u);
  EXPECT_FLOAT_EQ(told[0].temperature, 0.2f);
  EXPECT_GT(told[0].compression_ratio, 2.4) << "the repetitive text's ratio";
  // with the threshold raised the repetitive text is kept
  p.compression_ratio_threshold = 100.0f;
  r = run(ml(), p, script);
  ASSERT_EQ(r.t.segments.size(), 1u);
  EXPECT_GT(r.t.segments[0].compression_ratio, 2.4);
  EXPECT_EQ(r.t.segments[0].temperature, 0.0f);
}

TEST_F(Policy, NoPromptAfterAFallbackAboveHalf) {
  const auto a = words(" one"), c = words(" three");
  // window 0 is unsure until T = 0.6 (pass 3); window 1 is sure
  auto script = plan_script(st(), [&](const ScriptedModel::Call& call) {
    if (call.window == 0) return WindowPlan{cat({{ts(0)}, a, {ts(100), ts(100)}, c}), call.pass >= 3 ? 20.0f : 3.0f};
    return WindowPlan{cat({{ts(0)}, c, {ts(100)}})};
  });
  TranscribeParams fb = testing::fast_params();
  fb.temperature_inc = 0.2f;
  auto r = run(ml(), fb, script, 40.0);
  ASSERT_FALSE(r.t.segments.empty());
  EXPECT_FLOAT_EQ(r.t.segments[0].temperature, 0.6f);
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, (std::vector<int32_t>{st().sot}));
  // kept at T = 0.4: still the prompt
  auto script2 = plan_script(st(), [&](const ScriptedModel::Call& call) {
    if (call.window == 0) return WindowPlan{cat({{ts(0)}, a, {ts(100), ts(100)}, c}), call.pass >= 2 ? 20.0f : 3.0f};
    return WindowPlan{cat({{ts(0)}, c, {ts(100)}})};
  });
  r = run(ml(), fb, script2, 40.0);
  EXPECT_FLOAT_EQ(r.t.segments[0].temperature, 0.4f);
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, cat({{st().prev}, a, {st().sot}}));
}

// A window search on its own: best-of picks the best candidate, sampling repeats with its seed.
TEST_F(Policy, BestOfKeepsTheMostLikelyCandidate) {
  const auto a = words(" one"), b = words(" two");
  // Step after <|0.00|>: " one" and " two" equally likely (both at 8). After " one" the model is
  // sure (eot at 20), after " two" unsure (eot at 4).
  auto script = [&](const ScriptedModel::Call& c) {
    std::vector<float> l(static_cast<size_t>(st().n_vocab), 0.0f);
    const auto s = sampled_of(st(), c.context);
    if (c.context.back() == st().sot) return l;
    if (s.empty()) {
      l[static_cast<size_t>(ts(0))] = 20.0f;
    } else if (s.size() == 1) {
      l[static_cast<size_t>(a[0])] = 12.0f;
      l[static_cast<size_t>(b[0])] = 12.0f;
    } else if (s.size() == 2) {
      l[static_cast<size_t>(ts(50))] = s[1] == a[0] ? 20.0f : 4.0f;
    } else {
      l[static_cast<size_t>(st().eot)] = 20.0f;
    }
    return l;
  };
  decode::WindowRequest req;
  req.start = ml().start_sequence(0, false, true);
  req.rules.suppress = ml().suppress;
  req.temperature = 1.0f;
  int one = 0, two = 0;
  for (uint64_t seed = 0; seed < 40; ++seed) {
    ScriptedModel sm(448, script);
    req.seed = seed;
    req.best_of = 1;
    const auto w1 = decode::decode_window(sm, st(), req);
    ASSERT_GE(w1.tokens.size(), 2u);
    (w1.tokens[1] == a[0] ? one : two)++;
    // same seed, same tokens
    ScriptedModel sm2(448, script);
    EXPECT_EQ(decode::decode_window(sm2, st(), req).tokens, w1.tokens);
    // best of 5: " one" wins whenever some candidate drew it
    ScriptedModel sm5(448, script);
    req.best_of = 8;
    const auto w5 = decode::decode_window(sm5, st(), req);
    EXPECT_GE(w5.n_sampled, 8 * 3);
    if (w5.tokens[1] == b[0]) {
      ADD_FAILURE() << "seed " << seed << ": best-of kept the worse candidate (or all 5 drew it)";
    }
  }
  EXPECT_GT(one, 5);
  EXPECT_GT(two, 5);  // sampling does sample
}

TEST_F(Policy, SeededSamplingRepeatsThroughTheLoop) {
  auto script = [&](const ScriptedModel::Call& c) {
    std::vector<float> l(static_cast<size_t>(st().n_vocab), 0.0f);
    if (c.context.back() == st().sot) return l;
    const auto s = sampled_of(st(), c.context);
    if (s.empty()) {
      l[static_cast<size_t>(ts(0))] = 20.0f;
    } else if (s.size() < 8) {
      for (int i = 0; i < 10; ++i) l[static_cast<size_t>(1000 + 37 * i)] = 15.0f;
    } else {
      l[static_cast<size_t>(st().eot)] = 30.0f;
    }
    return l;
  };
  TranscribeParams p = testing::fast_params();
  p.temperature = 0.8f;
  p.seed = 7;
  const auto r1 = run(ml(), p, script);
  const auto r2 = run(ml(), p, script);
  ASSERT_FALSE(r1.t.segments.empty());
  EXPECT_EQ(r1.t.text(), r2.t.text());
  p.seed = 8;
  const auto r3 = run(ml(), p, script);
  EXPECT_NE(r1.t.text(), r3.t.text());
}

// ---- unit pieces ----

TEST(DecodePieces, LogSoftmax) {
  std::vector<float> x = {1.0f, 2.0f, 3.0f, -INFINITY};
  decode::log_softmax(x);
  double s = 0;
  for (float v : x) s += std::exp(static_cast<double>(v));
  EXPECT_NEAR(s, 1.0, 1e-6);
  EXPECT_NEAR(x[2] - x[1], 1.0f, 1e-6);
  EXPECT_EQ(x[3], -INFINITY);
  std::vector<float> big = {1000.0f, 1000.0f};  // no overflow
  decode::log_softmax(big);
  EXPECT_NEAR(big[0], -std::log(2.0f), 1e-4);
  std::vector<float> none = {-INFINITY, -INFINITY};
  decode::log_softmax(none);
  EXPECT_EQ(none[0], -INFINITY);
}

TEST(DecodePieces, DetectLanguage) {
  HParams hp;  // multilingual
  const SpecialTokens st = special_tokens(hp);
  std::vector<float> l(static_cast<size_t>(st.n_vocab), 0.0f);
  l[static_cast<size_t>(st.lang_first + 3)] = 5.0f;
  l[static_cast<size_t>(st.eot)] = 50.0f;  // not a language: ignored
  std::vector<float> probs;
  EXPECT_EQ(decode::detect_language(st, l, &probs), 3);
  ASSERT_EQ(probs.size(), static_cast<size_t>(st.n_languages));
  double s = 0;
  for (float p : probs) s += p;
  EXPECT_NEAR(s, 1.0, 1e-5);
  EXPECT_NEAR(probs[3], std::exp(5.0) / (std::exp(5.0) + st.n_languages - 1), 1e-5);
  HParams en;
  en.n_vocab = 51864;
  EXPECT_EQ(decode::detect_language(special_tokens(en), std::vector<float>(51864, 0.0f)), -1);
}

// ---- token timestamps, max_len, speaker turns ----

// The plan's tokens, with a timestamp made likely (not likely enough to be forced) at chosen steps.
ScriptedModel::Script with_timestamp_hints(const SpecialTokens& st, WindowPlan plan, std::map<size_t, int32_t> hints) {
  const ScriptedModel::Script base = plans_script(st, {plan});
  return [=](const ScriptedModel::Call& c) {
    std::vector<float> l = base(c);
    const auto it = hints.find(sampled_of(st, c.context).size());
    if (c.context.back() != st.sot && it != hints.end()) l[static_cast<size_t>(it->second)] = plan.margin - 3.0f;
    return l;
  };
}

TEST_F(Policy, TokenTimesComeFromTheTimestampProbabilitiesAtEachStep) {
  const auto hello = words(" Hello"), world = words(" world");
  ASSERT_EQ(hello.size(), 1u);
  ASSERT_EQ(world.size(), 1u);
  const WindowPlan plan{cat({{ts(0)}, hello, world, {ts(100)}})};
  // Step 1 (" Hello") follows the opening timestamp: timestamps are ruled out there, its hint is
  // not seen. Step 2 (" world") sees <|1.20|> as likely: it starts there.
  const auto script = [&] { return with_timestamp_hints(st(), plan, {{1, ts(30)}, {2, ts(60)}}); };
  TranscribeParams p = testing::fast_params();
  p.token_timestamps = true;
  const auto r = run(ml(), p, script());
  ASSERT_EQ(r.t.segments.size(), 1u);
  const auto& toks = r.t.segments[0].tokens;
  ASSERT_EQ(toks.size(), 2u);
  EXPECT_EQ(toks[0].t0, 0);
  EXPECT_EQ(toks[0].t1, 120);
  EXPECT_EQ(toks[1].t0, 120);
  EXPECT_EQ(toks[1].t1, 200);
  // A threshold above the hint's share ignores it: the two tokens share the time by length.
  p.thold_pt = 1.0f;
  const auto strict = run(ml(), p, script());
  EXPECT_EQ(strict.t.segments[0].tokens[0].t1, 100);
  // Off: no token times.
  const auto off = run(ml(), {}, script());
  EXPECT_EQ(off.t.segments[0].tokens[0].t0, -1);
  EXPECT_EQ(off.t.segments[0].tokens[1].t1, -1);
  // max_len turns them on and cuts at them.
  TranscribeParams ml6 = testing::fast_params();
  ml6.max_len = 6;
  const auto cut = run(ml(), ml6, script());
  ASSERT_EQ(cut.t.segments.size(), 2u);
  EXPECT_EQ(cut.t.segments[0].text, " Hello");
  EXPECT_EQ(cut.t.segments[0].t1, 120);
  EXPECT_EQ(cut.t.segments[1].text, " world");
  EXPECT_EQ(cut.t.segments[1].t0, 120);
  EXPECT_EQ(cut.t.segments[1].t1, 200);
}

TEST_F(Policy, SpeakerTurnEndsTheSegmentWithTinydiarizeAndIsSuppressedWithout) {
  const auto hello = words(" Hello"), world = words(" world");
  const int32_t turn = st().solm;
  const std::vector<WindowPlan> plans = {{cat({{ts(0)}, hello, {turn, ts(50), ts(50)}, world, {ts(100)}})}};
  auto n_turns = [&](const Run& run) {
    const std::vector<int32_t> fed = fed_back(*run.model, 0);
    return std::count(fed.begin(), fed.end(), turn);
  };
  TranscribeParams p = testing::fast_params();
  p.tdrz_enable = true;
  const auto r = run_plans(p, plans);
  ASSERT_EQ(r.t.segments.size(), 2u);
  EXPECT_EQ(r.t.segments[0].text, " Hello");
  EXPECT_TRUE(r.t.segments[0].speaker_turn_next);
  EXPECT_EQ(r.t.segments[0].t1, 100);
  EXPECT_EQ(r.t.segments[1].text, " world");
  EXPECT_FALSE(r.t.segments[1].speaker_turn_next);
  EXPECT_EQ(n_turns(r), 1);
  // Off (the default), the turn token is never produced.
  const auto off = run_plans({}, plans);
  EXPECT_EQ(n_turns(off), 0);
  for (const Segment& s : off.t.segments) EXPECT_FALSE(s.speaker_turn_next);
  // Suppressed by id, it stays suppressed with tinydiarize on.
  p.suppress_tokens = {turn};
  const auto by_id = run_plans(p, plans);
  EXPECT_EQ(n_turns(by_id), 0);
}

TEST_F(Policy, TokenTimestampOptionsAreCheckedBeforeAnyCompute) {
  const std::vector<float> a = audio(1.0);
  for (const auto& [set, word] : std::vector<std::pair<std::function<void(TranscribeParams&)>, std::string>>{
           {[](TranscribeParams& q) { q.thold_pt = -0.1f; }, "thold_pt"},
           {[](TranscribeParams& q) { q.thold_pt = 1.5f; }, "thold_pt"},
           {[](TranscribeParams& q) { q.thold_pt = NAN; }, "thold_pt"},
           {[](TranscribeParams& q) { q.thold_ptsum = NAN; }, "thold_ptsum"},
           {[](TranscribeParams& q) { q.max_len = -1; }, "max_len"}}) {
    TranscribeParams q = testing::fast_params();
    set(q);
    try {
      check_request(ml(), a, q);
      ADD_FAILURE() << word << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
    }
  }
}

TEST(DecodePieces, CompressionRatioAndFallbackVerdicts) {
  EXPECT_EQ(decode::compression_ratio(""), 0.0);
  std::string rep;
  for (int i = 0; i < 100; ++i) rep += " la";
  EXPECT_GT(decode::compression_ratio(rep), 2.4);
  EXPECT_LT(decode::compression_ratio(" The quick brown fox jumps over the lazy dog."), 2.4);
  // zlib level 6 of 300 bytes " la"*100: Python gives len(zlib.compress(b" la"*100)) == 15
  EXPECT_NEAR(decode::compression_ratio(rep), 300.0 / 15.0, 1e-9);
  const decode::Thresholds t;
  EXPECT_TRUE(decode::needs_fallback(t, 2.5, -0.5, 0.0));
  EXPECT_TRUE(decode::needs_fallback(t, 1.0, -1.5, 0.0));
  EXPECT_FALSE(decode::needs_fallback(t, 1.0, -0.5, 0.9));
  EXPECT_FALSE(decode::needs_fallback(t, 1.0, -1.5, 0.9));  // silence
  EXPECT_TRUE(decode::is_silence(t, -1.5, 0.9));
  EXPECT_TRUE(decode::is_silence(t, -1.0, 0.9));  // not above the threshold
  EXPECT_FALSE(decode::is_silence(t, -0.5, 0.9));
  EXPECT_FALSE(decode::is_silence(t, -1.5, 0.5));
  // logprob_low (faster-whisper's log_prob_low_threshold): below it, skipped whatever P(no speech).
  decode::Thresholds low = t;
  low.logprob_low = -2.0;
  EXPECT_TRUE(decode::is_silence(low, -2.5, 0.0));
  EXPECT_FALSE(decode::is_silence(low, -1.5, 0.0));
  EXPECT_FALSE(decode::is_silence(t, -50.0, 0.0));  // off by default
}

TEST(DecodePieces, CandidateScoreLengthPenalty) {
  EXPECT_DOUBLE_EQ(decode::candidate_score(-6.0, 3, -1.0f), -2.0);
  EXPECT_DOUBLE_EQ(decode::candidate_score(-6.0, 7, 1.0f), -6.0 / 2.0);  // (5 + 7) / 6 = 2
  EXPECT_DOUBLE_EQ(decode::candidate_score(-6.0, 7, 0.0f), -6.0);
}

TEST(DecodePieces, CandidateScoreLengthPower) {
  // CTranslate2's (faster-whisper's length_penalty): sum / length^alpha.
  EXPECT_DOUBLE_EQ(decode::candidate_score(-6.0, 4, 0.5f, true), -3.0);
  EXPECT_DOUBLE_EQ(decode::candidate_score(-6.0, 3, 1.0f, true), decode::candidate_score(-6.0, 3, -1.0f));
  EXPECT_DOUBLE_EQ(decode::candidate_score(-6.0, 7, 0.0f, true), -6.0);
  EXPECT_DOUBLE_EQ(decode::candidate_score(-8.0, 2, 2.0f, true), -2.0);
}

// ---- faster-whisper's prompt options: hotwords, prefix, multilingual ----

TEST_F(Policy, HotwordsGoBeforeEveryWindowsPrompt) {
  const auto a = words(" one"), c = words(" three");
  const std::vector<WindowPlan> plans = {{cat({{ts(0)}, a, {ts(100), ts(100)}, c})}, {cat({{ts(0)}, c, {ts(1400)}})}};
  TranscribeParams p = testing::fast_params();
  p.hotwords = "  Kubernetes Istio \n";  // stripped, then " " in front (faster-whisper's)
  const auto h = words(" Kubernetes Istio");
  auto r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(0)[0].tokens, cat({{st().prev}, h, {st().sot}}));
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, cat({{st().prev}, h, a, {st().sot}}));  // never in the text
  ASSERT_FALSE(r.t.segments.empty());
  EXPECT_EQ(r.t.segments[0].text, " one");
  // In front of the initial prompt; also with no_context, where the previous text goes.
  p.initial_prompt = "Glossary";
  p.no_context = true;
  r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(0)[0].tokens, cat({{st().prev}, h, words(" Glossary"), {st().sot}}));
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, cat({{st().prev}, h, {st().sot}}));
  // Blank hotwords are none.
  p = testing::fast_params();
  p.hotwords = " \t ";
  r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(0)[0].tokens, (std::vector<int32_t>{st().sot}));
}

TEST_F(Policy, HotwordsStayWholeWhenThePreviousTextOverflows) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += " h" + std::to_string(i);
  TranscribeParams p = testing::fast_params();
  p.hotwords = text;
  const auto h = words(text);  // text begins with its space
  ASSERT_LT(h.size(), 200u);
  std::vector<int32_t> long_text = {ts(0)};
  for (int i = 0; i < 200; ++i) long_text.push_back(1000 + i);
  long_text.push_back(ts(100));
  const auto r = run_plans(p, {{long_text}, {cat({{ts(0)}, words(" one"), {ts(100)}})}}, 40.0);
  const auto first = r.model->pass_starts(1).at(0).tokens;
  ASSERT_EQ(first.size(), 225u);  // <|startofprev|> + 223 + <|startoftranscript|>
  EXPECT_TRUE(std::equal(h.begin(), h.end(), first.begin() + 1)) << "the hotwords were cut";
  EXPECT_EQ(first[first.size() - 2], 1000 + 199);  // then the most recent previous text
}

TEST_F(Policy, PrefixBeginsTheFirstWindowsText) {
  const auto hello = words(" Hello"), world = words(" world"), c = words(" three");
  const std::vector<WindowPlan> plans = {{cat({{ts(0)}, hello, world, {ts(100), ts(100)}, c})},
                                         {cat({{ts(0)}, c, {ts(1400)}})}};
  TranscribeParams p = testing::fast_params();
  p.prefix = " Hello  ";
  auto r = run_plans(p, plans, 40.0);
  // Fed with the rest of the start sequence, after <|0.00|>: the search goes on from its end.
  ASSERT_GE(r.model->calls.size(), 3u);
  EXPECT_EQ(r.model->calls[1].tokens, cat({{st().lang_first, st().transcribe, ts(0)}, hello}));
  EXPECT_EQ(fed_back(*r.model, 0).at(0), world[0]);
  ASSERT_FALSE(r.t.segments.empty());
  EXPECT_EQ(r.t.segments[0].text, " Hello world");  // part of the text, as faster-whisper's
  EXPECT_EQ(r.t.segments[0].t0, 0);
  EXPECT_EQ(r.t.segments[0].tokens.at(0).p, 1.0f);  // given, not chosen
  // The first window only; the next is prompted with it as previous text.
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, cat({{st().prev}, hello, world, {st().sot}}));
  // Hotwords leave the prefixed window alone (faster-whisper's), and go before the next.
  p.hotwords = "Istio";
  r = run_plans(p, plans, 40.0);
  EXPECT_EQ(r.model->pass_starts(0)[0].tokens, (std::vector<int32_t>{st().sot}));
  EXPECT_EQ(r.model->pass_starts(1)[0].tokens, cat({{st().prev}, words(" Istio"), hello, world, {st().sot}}));
  // Beam search starts its beams from the prefix too.
  p.beam_size = 3;
  r = run_plans(p, plans, 40.0);
  ASSERT_FALSE(r.t.segments.empty());
  EXPECT_EQ(r.t.segments[0].text, " Hello world");
  // Without timestamps: no <|0.00|> before it.
  p = testing::fast_params();
  p.prefix = "Hello";
  p.timestamps = false;
  r = run_plans(p, {{cat({hello, world})}});
  EXPECT_EQ(r.model->calls[1].tokens, cat({{st().lang_first, st().transcribe, st().no_timestamps}, hello}));
  ASSERT_EQ(r.t.segments.size(), 1u);
  EXPECT_EQ(r.t.segments[0].text, " Hello world");
}

TEST_F(Policy, MultilingualDetectsEachWindowsLanguage) {
  TranscribeParams p = testing::fast_params();
  p.language = "auto";
  p.multilingual = true;
  WindowPlan de{cat({{ts(0)}, words(" eins"), {ts(1400)}})};
  de.language = language_index("de");
  WindowPlan fr{cat({{ts(0)}, words(" un"), {ts(1400)}})};
  fr.language = language_index("fr");
  auto r = run_plans(p, {de, fr}, 40.0);
  EXPECT_EQ(r.t.language, "de");  // the job's: the first window's
  ASSERT_EQ(r.t.windows.size(), 2u);
  EXPECT_EQ(r.t.windows[0].language, "de");
  EXPECT_EQ(r.t.windows[1].language, "fr");
  auto fed = [&](int w, int lang) {
    for (const auto& c : r.model->calls)
      if (c.window == w && c.tokens == std::vector<int32_t>{st().lang_first + lang, st().transcribe}) return true;
    return false;
  };
  EXPECT_TRUE(fed(1, fr.language)) << "window 1 decoded in French";
  // A given language is the job's; each window still decoded in its own.
  p.language = "en";
  r = run_plans(p, {de, fr}, 40.0);
  EXPECT_EQ(r.t.language, "en");
  EXPECT_EQ(r.t.windows.at(1).language, "fr");
  // Off: the first window decides for all.
  p.multilingual = false;
  p.language = "auto";
  r = run_plans(p, {de, fr}, 40.0);
  EXPECT_EQ(r.t.windows.at(1).language, "de");
  // English-only models have no languages to detect.
  p.multilingual = true;
  const std::vector<float> a = audio(5.0);
  try {
    check_request(en(), a, p);
    ADD_FAILURE() << "multilingual on an English-only model was accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.field(), "multilingual");
  }
}

// With translate too, English comes out whatever each window spoke: the windows in another
// language are translated, the English ones transcribed (faster-whisper's output_language "en").
TEST_F(Policy, MultilingualTranslateTranscribesOnlyTheEnglishWindows) {
  TranscribeParams p = testing::fast_params();
  p.language = "auto";
  p.multilingual = true;
  p.translate = true;
  WindowPlan en_w{cat({{ts(0)}, words(" one"), {ts(1400)}})};
  en_w.language = language_index("en");
  WindowPlan fr{cat({{ts(0)}, words(" one"), {ts(1400)}})};
  fr.language = language_index("fr");
  auto r = run_plans(p, {en_w, fr}, 40.0);
  ASSERT_EQ(r.t.windows.size(), 2u);
  auto fed = [&](int w, int lang, int32_t task) {
    for (const auto& c : r.model->calls)
      if (c.window == w && c.tokens == std::vector<int32_t>{st().lang_first + lang, task}) return true;
    return false;
  };
  EXPECT_TRUE(fed(0, en_w.language, st().transcribe)) << "the English window is transcribed";
  EXPECT_TRUE(fed(1, fr.language, st().translate)) << "the French window is translated";
  // Without multilingual, translate is the job's task for every window.
  p.multilingual = false;
  r = run_plans(p, {fr, fr}, 40.0);
  EXPECT_TRUE(fed(1, fr.language, st().translate));
}

}  // namespace
}  // namespace hark::testing
