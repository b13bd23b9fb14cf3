// WhisperRunner's several sequences against one window (beam search, best-of): decode_batch rows
// equal single-sequence decode() of the same token histories (forks in between, slots in order,
// out of order and subsets), copy_sequence forks, set_n_sequences keeps what it can, the batch
// step on the reference backend, and bad arguments as clear errors. Micro preset.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <span>

#include "backend/device_registry.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model/runner_bench.h"
#include "model/whisper_runner.h"
#include "model_test_util.h"

namespace hark {
namespace {

double rel_diff(std::span<const float> got, std::span<const float> want) {
  EXPECT_EQ(got.size(), want.size());
  double scale = 1.0, d = 0.0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    EXPECT_TRUE(std::isfinite(got[i])) << "element " << i;
    scale = std::max(scale, static_cast<double>(std::fabs(want[i])));
    d = std::max(d, static_cast<double>(std::fabs(got[i] - want[i])));
  }
  return d / scale;
}

std::vector<float> smooth_mel(const HParams& hp) {
  std::vector<float> m(static_cast<size_t>(2 * hp.n_audio_ctx * hp.n_mels));
  for (size_t i = 0; i < m.size(); ++i) m[i] = 0.5f * std::sin(0.013f * static_cast<float>(i)) - 0.2f;
  return m;
}

const std::vector<int32_t> kPrompt = {50258, 50259, 50359, 50364, 440, 11};

struct Case {
  DType type;
  bool flash;
};

class RunnerBatch : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override { load(GetParam().type); }
  void load(DType type) {
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = type;
    file_ = std::make_unique<testing::TempFile>(std::string("batch-") + dtype_name(type));
    write_test_model(o, file_->path());
    model_ = ModelFile::open(file_->path());
    cpu_ = Registry::global().find(kCpuDeviceName)->init_backend({2});
    ref_ = Registry::global().find(kReferenceDeviceName)->init_backend();
  }
  RunnerOptions opts() const {
    RunnerOptions o;
    o.flash_attn = GetParam().flash;
    return o;
  }
  const HParams& hp() const { return model_->hparams(); }
  // Quantized weights see q8 activations: one column and several quantize alike but sum in another
  // order (dot_q_rows vs dot), and a last-bit difference now and then moves an activation across a
  // q8 rounding step in a later layer: most rows agree to 5e-4, one in ~20 lands near 7e-3. f16
  // weights agree to float rounding (1e-4), which is what shows the rows and slots are right.
  double tol() const { return dtype_quantized(GetParam().type) ? 1.5e-2 : 1e-4; }

  std::unique_ptr<testing::TempFile> file_;
  std::unique_ptr<ModelFile> model_;
  std::unique_ptr<Backend> cpu_, ref_;
};

// The last token's logits of `history` decoded as one sequence: the prompt at once, then one
// token per step (what a single-sequence search does).
std::vector<float> replay(WhisperRunner& r, const std::vector<int32_t>& history, size_t n_prompt) {
  std::vector<float> logits;
  EXPECT_EQ(r.decode(std::span(history).first(n_prompt), 0, &logits), ComputeStatus::Ok);
  for (size_t i = n_prompt; i < history.size(); ++i)
    EXPECT_EQ(r.decode(std::span(history).subspan(i, 1), static_cast<int>(i), &logits), ComputeStatus::Ok);
  return logits;
}

TEST_P(RunnerBatch, RowsEqualSingleSequenceDecodeWithForks) {
  const int n_vocab = hp().n_vocab;
  WhisperRunner batch(*model_, *cpu_, opts());
  WhisperRunner single(*model_, *cpu_, opts());
  const size_t kv1 = batch.kv_cache_bytes();
  EXPECT_EQ(batch.n_sequences(), 1);
  batch.set_n_sequences(4);
  EXPECT_EQ(batch.n_sequences(), 4);
  EXPECT_GT(batch.kv_cache_bytes(), kv1) << "slots take memory only when asked";
  const std::vector<float> mel = smooth_mel(hp());
  ASSERT_EQ(batch.encode(mel), ComputeStatus::Ok);
  ASSERT_EQ(single.encode(mel), ComputeStatus::Ok);

  // The shared prefix once into slot 0, forked to the others.
  std::vector<float> logits;
  ASSERT_EQ(batch.decode(kPrompt, 0, &logits, false, 0), ComputeStatus::Ok);
  const int P = static_cast<int>(kPrompt.size());
  std::vector<std::vector<int32_t>> hist(4, kPrompt);
  for (int s = 1; s < 4; ++s) batch.copy_sequence(0, s, P);

  int n_past = P;
  // One batched step: rows (token, slot); checks every row against a replay of its slot.
  auto step = [&](std::vector<int32_t> tokens, std::vector<int> seqs, const char* what) {
    ASSERT_EQ(batch.decode_batch(tokens, seqs, n_past, &logits), ComputeStatus::Ok) << what;
    ASSERT_EQ(logits.size(), static_cast<size_t>(n_vocab) * tokens.size()) << what;
    for (size_t b = 0; b < tokens.size(); ++b) {
      auto& h = hist[static_cast<size_t>(seqs[b])];
      h.resize(static_cast<size_t>(n_past));
      h.push_back(tokens[b]);
      const std::vector<float> want = replay(single, h, kPrompt.size());
      const double d =
          rel_diff(std::span(logits).subspan(b * static_cast<size_t>(n_vocab), static_cast<size_t>(n_vocab)), want);
      if (d > tol() / 10) std::printf("  %s, row %zu: rel %.3g\n", what, b, d);
      EXPECT_LE(d, tol()) << what << ", row " << b << " (slot " << seqs[b] << ")";
    }
  };
  auto fork = [&](int src, int dst) {
    batch.copy_sequence(src, dst, n_past);
    hist[static_cast<size_t>(dst)] = hist[static_cast<size_t>(src)];
  };

  step({100, 200, 300, 400}, {0, 1, 2, 3}, "slots in order");
  ++n_past;
  fork(0, 2);  // beam 0 has two children, beam 3 none...
  fork(1, 3);  // ...beam 1 two, beam 2 none
  step({500, 501, 502, 503}, {0, 1, 2, 3}, "after forks");
  ++n_past;
  fork(3, 0);
  step({7, 8, 9, 10}, {3, 1, 0, 2}, "slots out of order");
  ++n_past;
  // Subsets: evenly stepped (one batched attention node) and not (one node per row).
  step({1000, 1001}, {1, 3}, "two rows, slots 1 and 3");
  step({1002, 1003}, {2, 0}, "two rows, slots 2 and 0");
  ++n_past;
  step({42}, {2}, "one row");
  step({43}, {1}, "one row, other slot");
  // Slots 1 and 2 are at n_past + 1; 0 and 3 stopped at n_past. One more step for 1 and 2.
  ++n_past;
  step({60, 61}, {1, 2}, "after a partial step");
  EXPECT_EQ(batch.decoder_reallocs(), 0) << "batch steps fit the memory set_n_sequences reserved";

  // Single-sequence decode into another slot matches too (a slot's own prompt).
  ASSERT_EQ(batch.decode(kPrompt, 0, &logits, false, 3), ComputeStatus::Ok);
  hist[3] = kPrompt;
  EXPECT_LE(rel_diff(logits, replay(single, hist[3], kPrompt.size())), tol());
}

TEST_P(RunnerBatch, CopySequenceThenContinueEqualsSource) {
  WhisperRunner r(*model_, *cpu_, opts());
  ASSERT_EQ(r.encode(smooth_mel(hp())), ComputeStatus::Ok);
  std::vector<float> logits;
  ASSERT_EQ(r.decode(kPrompt, 0, &logits), ComputeStatus::Ok);
  const int P = static_cast<int>(kPrompt.size());
  const std::vector<int32_t> t1 = {777};
  ASSERT_EQ(r.decode(t1, P, &logits), ComputeStatus::Ok);
  // Growing keeps slot 0: the next step equals a runner that never grew.
  r.set_n_sequences(3);
  WhisperRunner plain(*model_, *cpu_, opts());
  ASSERT_EQ(plain.encode(smooth_mel(hp())), ComputeStatus::Ok);
  std::vector<float> want;
  std::vector<int32_t> h = kPrompt;
  h.push_back(777);
  h.push_back(31);
  want = replay(plain, h, kPrompt.size());

  r.copy_sequence(0, 2, P + 1);
  const std::vector<int32_t> t2 = {31};
  std::vector<float> l0, l2, lb;
  ASSERT_EQ(r.decode(t2, P + 1, &l0, false, 0), ComputeStatus::Ok);
  ASSERT_EQ(r.decode(t2, P + 1, &l2, false, 2), ComputeStatus::Ok);
  EXPECT_EQ(l0, l2) << "a forked slot continues exactly as its source";
  EXPECT_LE(rel_diff(l0, want), 1e-6);
  const std::vector<int32_t> both = {31, 31};
  const std::vector<int> slots = {0, 2};
  ASSERT_EQ(r.decode_batch(both, slots, P + 1, &lb), ComputeStatus::Ok);
  const size_t nv = static_cast<size_t>(hp().n_vocab);
  EXPECT_EQ(std::vector<float>(lb.begin(), lb.begin() + static_cast<std::ptrdiff_t>(nv)),
            std::vector<float>(lb.begin() + static_cast<std::ptrdiff_t>(nv), lb.end()));
  EXPECT_LE(rel_diff(std::span(lb).first(nv), l0), tol());

  // Shrinking keeps the slots that remain.
  r.set_n_sequences(1);
  ASSERT_EQ(r.decode(t2, P + 1, &l2), ComputeStatus::Ok);
  EXPECT_EQ(l2, l0);
}

// Forks are made by the next batch step's graph; a fork that reads a slot an earlier pending fork
// writes (slot 1 here) must see that fork's result, and a slot written twice keeps the last.
TEST_P(RunnerBatch, ChainedForksBeforeOneStep) {
  WhisperRunner r(*model_, *cpu_, opts());
  r.set_n_sequences(4);
  ASSERT_EQ(r.encode(smooth_mel(hp())), ComputeStatus::Ok);
  std::vector<float> logits, other;
  const int P = static_cast<int>(kPrompt.size());
  ASSERT_EQ(r.decode(kPrompt, 0, &logits, false, 0), ComputeStatus::Ok);
  std::vector<int32_t> other_prompt = kPrompt;
  other_prompt.back() = 99;
  ASSERT_EQ(r.decode(other_prompt, 0, &other, false, 3), ComputeStatus::Ok);
  r.copy_sequence(0, 1, P);
  r.copy_sequence(1, 2, P);  // reads slot 1: the fork above first
  r.copy_sequence(3, 1, P);  // slot 1 again: it ends with slot 3's history
  const std::vector<int32_t> t = {5, 5, 5, 5};
  const std::vector<int> seqs = {0, 1, 2, 3};
  ASSERT_EQ(r.decode_batch(t, seqs, P, &logits), ComputeStatus::Ok);
  const auto row = [&](size_t b) {
    const size_t nv = static_cast<size_t>(hp().n_vocab);
    return std::vector<float>(logits.begin() + static_cast<std::ptrdiff_t>(b * nv),
                              logits.begin() + static_cast<std::ptrdiff_t>((b + 1) * nv));
  };
  EXPECT_EQ(row(2), row(0)) << "slot 2 holds slot 0's history (through slot 1)";
  EXPECT_EQ(row(1), row(3)) << "slot 1 holds slot 3's history";
  EXPECT_NE(row(1), row(0));
}

// A batch step stopped by an abort may not have made its forks: they are made on the caller's
// thread then, so the next step still sees the forked history.
TEST_P(RunnerBatch, ForksSurviveAnAbortedStep) {
  WhisperRunner r(*model_, *cpu_, opts());
  r.set_n_sequences(2);
  ASSERT_EQ(r.encode(smooth_mel(hp())), ComputeStatus::Ok);
  std::vector<float> logits;
  const int P = static_cast<int>(kPrompt.size());
  ASSERT_EQ(r.decode(kPrompt, 0, &logits, false, 0), ComputeStatus::Ok);
  r.copy_sequence(0, 1, P);
  r.set_abort_callback([] { return true; });
  const std::vector<int32_t> t = {5, 5};
  const std::vector<int> seqs = {0, 1};
  ASSERT_EQ(r.decode_batch(t, seqs, P, &logits), ComputeStatus::Aborted);
  r.set_abort_callback(nullptr);
  ASSERT_EQ(r.decode_batch(t, seqs, P, &logits), ComputeStatus::Ok);
  const size_t nv = static_cast<size_t>(hp().n_vocab);
  EXPECT_EQ(std::vector<float>(logits.begin(), logits.begin() + static_cast<std::ptrdiff_t>(nv)),
            std::vector<float>(logits.begin() + static_cast<std::ptrdiff_t>(nv), logits.end()));
}

// The batch step's ops (strided cache views with a batch dim, concat of per-row attention) on the
// reference backend: the same logits as the optimised CPU backend.
TEST_P(RunnerBatch, BatchOnReferenceMatchesCpu) {
  WhisperRunner cpu(*model_, *cpu_, opts());
  WhisperRunner ref(*model_, *ref_, opts());
  const std::vector<float> mel = smooth_mel(hp());
  const int P = static_cast<int>(kPrompt.size());
  std::vector<float> lc, lr;
  for (WhisperRunner* r : {&cpu, &ref}) {
    r->set_n_sequences(3);
    ASSERT_EQ(r->encode(mel), ComputeStatus::Ok);
    ASSERT_EQ(r->decode(kPrompt, 0, &lc), ComputeStatus::Ok);
    r->copy_sequence(0, 1, P);
    r->copy_sequence(0, 2, P);
  }
  const std::vector<int32_t> t = {5, 6, 7};
  for (const std::vector<int>& seqs : {std::vector<int>{0, 1, 2}, std::vector<int>{2, 0, 1}}) {
    ASSERT_EQ(cpu.decode_batch(t, seqs, P, &lc), ComputeStatus::Ok);
    ASSERT_EQ(ref.decode_batch(t, seqs, P, &lr), ComputeStatus::Ok);
    const double d = rel_diff(lc, lr);
    std::printf("  %s %s batch cpu vs cpu-ref: rel %.3g\n", dtype_name(GetParam().type),
                GetParam().flash ? "flash" : "plain", d);
    EXPECT_LE(d, dtype_quantized(GetParam().type) ? 5e-2 : 1e-3);
  }
}

INSTANTIATE_TEST_SUITE_P(Model, RunnerBatch,
                         ::testing::Values(Case{DType::F16, true}, Case{DType::Q5_0, true}, Case{DType::F16, false},
                                           Case{DType::Q8_0, false}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                           return std::string(dtype_name(i.param.type)) + (i.param.flash ? "_flash" : "_plain");
                         });

// bench_batch_steps on micro: one figure per size asked for, finite and positive, the 1-row
// step's ratio 1; the runner gets the slots it needs.
TEST(RunnerBatchBench, FiguresPerSize) {
  const testing::MicroModelFile micro("batch-bench");
  const auto& model = micro.model;
  auto cpu = Registry::global().find(kCpuDeviceName)->init_backend({2});
  WhisperRunner r(*model, *cpu);
  BatchStepOptions bo;
  bo.rows = {1, 3};
  bo.n_rounds = 3;
  const std::vector<BatchStepFigure> f = bench_batch_steps(r, bo);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].rows, 1);
  EXPECT_EQ(f[1].rows, 3);
  EXPECT_DOUBLE_EQ(f[0].ratio, 1.0);
  for (const BatchStepFigure& x : f) {
    EXPECT_TRUE(std::isfinite(x.min_ms) && x.min_ms > 0.0);
    EXPECT_GE(x.median_ms, x.min_ms);
    EXPECT_GT(x.ratio, 0.0);
  }
  EXPECT_EQ(r.n_sequences(), 3);
  bo.rows = {2};  // 1 is timed as the base but not listed
  bo.cpu_time = true;
  const auto g = bench_batch_steps(r, bo);
  ASSERT_EQ(g.size(), 1u);
  EXPECT_EQ(g[0].rows, 2);
}

class RunnerBatchErrors : public RunnerBatch {};

TEST_P(RunnerBatchErrors, BadArgumentsAreClearErrors) {
  WhisperRunner r(*model_, *cpu_, opts());
  r.set_n_sequences(2);
  std::vector<float> logits;
  const std::vector<int32_t> two = {1, 2};
  using testing::error_of;
  using testing::mentions;
  EXPECT_TRUE(mentions(error_of([&] { r.decode_batch(two, std::vector<int>{0, 2}, 0, &logits); }), {"slot", "2"}));
  EXPECT_TRUE(mentions(error_of([&] { r.decode_batch(two, std::vector<int>{-1, 0}, 0, &logits); }), {"slot", "-1"}));
  EXPECT_TRUE(
      mentions(error_of([&] { r.decode_batch(two, std::vector<int>{0}, 0, &logits); }), {"2 tokens", "1 sequence"}));
  EXPECT_TRUE(mentions(error_of([&] { r.decode_batch(two, std::vector<int>{1, 1}, 0, &logits); }), {"slot 1"}));
  EXPECT_TRUE(mentions(error_of([&] {
                         r.decode_batch(two, std::vector<int>{0, 1}, hp().n_text_ctx, &logits);
                       }),
                       {"position", "text context"}));
  EXPECT_TRUE(mentions(error_of([&] { r.decode_batch(two, std::vector<int>{0, 1}, -1, &logits); }), {"position"}));
  EXPECT_TRUE(mentions(error_of([&] { r.decode_batch({}, {}, 0, &logits); }), {"no tokens"}));
  const std::vector<int32_t> bad_id = {1, hp().n_vocab};
  EXPECT_TRUE(mentions(error_of([&] { r.decode_batch(bad_id, std::vector<int>{0, 1}, 0, &logits); }), {"vocabulary"}));
  EXPECT_TRUE(mentions(error_of([&] { r.decode(two, 0, &logits, false, 2); }), {"slot", "set_n_sequences"}));
  EXPECT_TRUE(mentions(error_of([&] { r.copy_sequence(0, 2, 1); }), {"slots", "0 -> 2"}));
  EXPECT_TRUE(mentions(error_of([&] { r.copy_sequence(0, 1, hp().n_text_ctx + 1); }), {"n_past", "text context"}));
  EXPECT_TRUE(mentions(error_of([&] { r.set_n_sequences(0); }), {"at least 1"}));
  EXPECT_EQ(r.n_sequences(), 2) << "a refused call changes nothing";
  // The runner still works after the refusals.
  ASSERT_EQ(r.encode(smooth_mel(hp())), ComputeStatus::Ok);
  EXPECT_EQ(r.decode_batch(two, std::vector<int>{0, 1}, 0, &logits), ComputeStatus::Ok);
}

INSTANTIATE_TEST_SUITE_P(Model, RunnerBatchErrors, ::testing::Values(Case{DType::F16, true}),
                         [](const ::testing::TestParamInfo<Case>&) { return std::string("f16"); });

}  // namespace
}  // namespace hark
