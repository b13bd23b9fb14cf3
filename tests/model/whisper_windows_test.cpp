// WhisperRunner with several cross-attention windows (the batched long-audio pipeline): B chunks
// encoded into windows 0..B-1 and decoded in lockstep, row b in slot b against window b, give the
// logits and greedy tokens each chunk gives decoded alone on a one-window runner, at every batch
// size 1..4 and at 5, 8 and 9 (where quantized products take the activation rows in vector
// lanes, 8 or 16 to a register), thread counts 1 and 2, both attention paths, on cpu and on
// cpu-ref (1 and 4); rows dropping out
// (windows no longer evenly stepped) keep their numbers; windows survive growth, and an encode
// after growth writes the new memory; bad windows are
// clear errors. Micro preset.
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

// A different smooth log-mel per chunk.
std::vector<float> chunk_mel(const HParams& hp, int chunk) {
  std::vector<float> m(static_cast<size_t>(2 * hp.n_audio_ctx * hp.n_mels));
  const float f = 0.011f + 0.004f * static_cast<float>(chunk);
  for (size_t i = 0; i < m.size(); ++i)
    m[i] =
        0.5f * std::sin(f * static_cast<float>(i) + static_cast<float>(chunk)) - 0.1f * static_cast<float>(chunk % 3);
  return m;
}

const std::vector<int32_t> kPrefix = {50258, 50259, 50359};
constexpr int kSteps = 5;  // greedy tokens after the prefix
constexpr int kMaxRows = 4;
// Batch sizes of the lockstep test on cpu: every size to kMaxRows, then the int8 products' lanes
// (AVX-512: 5 or more activation rows; 9 takes the 16-lane registers).
const std::vector<int> kCpuBatchSizes = {1, 2, 3, 4, 5, 8, 9};

int argmax(std::span<const float> l) { return static_cast<int>(std::max_element(l.begin(), l.end()) - l.begin()); }

struct Case {
  DType type;
  bool flash;
  bool reference;            // on cpu-ref instead of cpu
  DType cross = DType::F16;  // the cross-attention cache's type
};

std::string case_name(const Case& c) {
  return std::string(dtype_name(c.type)) + (c.flash ? "_flash" : "_plain") + (c.reference ? "_ref" : "") +
         (c.cross != DType::F16 ? std::string("_cross_") + dtype_name(c.cross) : "");
}

class RunnerWindows : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    TestModelOptions o;
    ASSERT_TRUE(test_model_preset("micro", &o.hparams));
    o.weight_type = GetParam().type;
    file_ = std::make_unique<testing::TempFile>(std::string("windows-") + dtype_name(o.weight_type));
    write_test_model(o, file_->path());
    model_ = ModelFile::open(file_->path());
  }
  RunnerOptions opts() const {
    RunnerOptions o;
    o.flash_attn = GetParam().flash;
    o.cross_kv_type = GetParam().cross;
    return o;
  }
  std::unique_ptr<Backend> backend(int threads) const {
    return GetParam().reference ? Registry::global().find(kReferenceDeviceName)->init_backend()
                                : Registry::global().find(kCpuDeviceName)->init_backend({threads});
  }
  const HParams& hp() const { return model_->hparams(); }
  // As whisper_batch_test: quantized weights see q8 activations summed in another order, so a
  // last-bit difference can cross a rounding step in a later layer; f16 agrees to float rounding.
  double tol() const { return dtype_quantized(GetParam().type) ? 1.5e-2 : 1e-4; }

  // Chunk c decoded alone: the prefix at once, then greedy steps. Every step's logits.
  std::vector<std::vector<float>> alone(Backend& be, int c) {
    WhisperRunner r(*model_, be, opts());
    EXPECT_EQ(r.encode(chunk_mel(hp(), c)), ComputeStatus::Ok);
    std::vector<std::vector<float>> out(1);
    EXPECT_EQ(r.decode(kPrefix, 0, &out[0]), ComputeStatus::Ok);
    for (int s = 0; s < kSteps; ++s) {
      const int32_t tok = argmax(out.back());
      out.emplace_back();
      EXPECT_EQ(r.decode({&tok, 1}, static_cast<int>(kPrefix.size()) + s, &out.back()), ComputeStatus::Ok);
    }
    return out;
  }

  std::vector<std::vector<std::vector<float>>> each_alone(Backend& be, int n_chunks = kMaxRows) {
    std::vector<std::vector<std::vector<float>>> want;
    for (int c = 0; c < n_chunks; ++c) want.push_back(alone(be, c));
    return want;
  }
  // A runner with chunk c encoded into window c, in order: window 0 (the constructor's encoder
  // target) first, into the grown memory.
  std::unique_ptr<WhisperRunner> encoded_runner(Backend& be) {
    auto r = std::make_unique<WhisperRunner>(*model_, be, opts());
    r->set_n_windows(kMaxRows);
    for (int c = 0; c < kMaxRows; ++c) EXPECT_EQ(r->encode(chunk_mel(hp(), c), c), ComputeStatus::Ok);
    return r;
  }

  std::unique_ptr<testing::TempFile> file_;
  std::unique_ptr<ModelFile> model_;
};

TEST_P(RunnerWindows, BatchedChunksEqualEachChunkAlone) {
  const size_t nv = static_cast<size_t>(hp().n_vocab);
  for (int threads : {1, 2}) {
    if (GetParam().reference && threads == 2) continue;  // cpu-ref is single-threaded (and slow)
    const std::unique_ptr<Backend> be = backend(threads);
    const std::vector<int> sizes = GetParam().reference ? std::vector<int>{1, kMaxRows} : kCpuBatchSizes;
    const auto want = each_alone(*be, sizes.back());
    for (int B : sizes) {
      WhisperRunner r(*model_, *be, opts());
      r.set_n_windows(B);
      EXPECT_EQ(r.n_windows(), B);
      EXPECT_GE(r.n_sequences(), B) << "every window's row needs a slot";
      // Encoded in reverse order: each encode writes only its own window.
      for (int c = B - 1; c >= 0; --c) ASSERT_EQ(r.encode(chunk_mel(hp(), c), c), ComputeStatus::Ok);
      std::vector<int> rows(static_cast<size_t>(B));
      for (int b = 0; b < B; ++b) rows[static_cast<size_t>(b)] = b;
      std::vector<float> logits;
      // The prefix fed token by token, every row the same tokens (as the pipeline does).
      for (size_t i = 0; i < kPrefix.size(); ++i) {
        const std::vector<int32_t> toks(static_cast<size_t>(B), kPrefix[i]);
        ASSERT_EQ(r.decode_batch(toks, rows, static_cast<int>(i), &logits, rows), ComputeStatus::Ok);
      }
      for (int s = 0; s <= kSteps; ++s) {
        std::vector<int32_t> next;
        for (int b = 0; b < B; ++b) {
          const std::span<const float> row = std::span(logits).subspan(static_cast<size_t>(b) * nv, nv);
          const auto& w = want[static_cast<size_t>(b)][static_cast<size_t>(s)];
          const double d = rel_diff(row, w);
          if (d > tol() / 10) std::printf("  B %d threads %d step %d row %d: rel %.3g\n", B, threads, s, b, d);
          EXPECT_LE(d, tol()) << "B " << B << ", threads " << threads << ", step " << s << ", row " << b;
          EXPECT_EQ(argmax(row), argmax(w)) << "the same token, B " << B << ", step " << s << ", row " << b;
          next.push_back(argmax(w));
        }
        if (s == kSteps) break;
        ASSERT_EQ(r.decode_batch(next, rows, static_cast<int>(kPrefix.size()) + s, &logits, rows), ComputeStatus::Ok);
      }
      EXPECT_EQ(r.decoder_reallocs(), 0) << "B " << B << ": steps fit the memory set_n_windows reserved";
    }
  }
}

// Rows finishing early drop out: the remaining windows (1 and 3, then 3 alone, then 2 and 0 out of
// order) go through per-row or batched nodes and still give each chunk's own logits.
// (cpu only: the reference backend's share is the batched nodes above, checked there.)
class RunnerWindowsCpu : public RunnerWindows {};

TEST_P(RunnerWindowsCpu, RowsDroppingOutKeepTheirNumbers) {
  const std::unique_ptr<Backend> be = backend(2);
  const size_t nv = static_cast<size_t>(hp().n_vocab);
  const auto want = each_alone(*be);
  const std::unique_ptr<WhisperRunner> runner = encoded_runner(*be);
  WhisperRunner& r = *runner;
  std::vector<float> logits;
  const std::vector<int> all = {0, 1, 2, 3};
  for (size_t i = 0; i < kPrefix.size(); ++i) {
    const std::vector<int32_t> toks(all.size(), kPrefix[i]);
    ASSERT_EQ(r.decode_batch(toks, all, static_cast<int>(i), &logits, all), ComputeStatus::Ok);
  }
  const int P = static_cast<int>(kPrefix.size());
  auto step = [&](const std::vector<int>& live, int s) {
    std::vector<int32_t> toks;
    for (int b : live) toks.push_back(argmax(want[static_cast<size_t>(b)][static_cast<size_t>(s)]));
    ASSERT_EQ(r.decode_batch(toks, live, P + s, &logits, live), ComputeStatus::Ok);
    for (size_t k = 0; k < live.size(); ++k) {
      const double d = rel_diff(std::span(logits).subspan(k * nv, nv),
                                want[static_cast<size_t>(live[k])][static_cast<size_t>(s + 1)]);
      EXPECT_LE(d, tol()) << "step " << s << ", window " << live[k];
    }
  };
  step({0, 1, 2, 3}, 0);
  step({1, 3}, 1);  // evenly stepped: one batched node
  step({3}, 2);     // one row
  step({2, 0}, 1);  // windows 0 and 2 stopped after step 0; out of order: one node per row
}

// Continuous batching: chunks join the batch at different steps, so rows stand at different
// positions (decode_rows); each row still gets its chunk's own logits, the prefix fed a token a
// step beside the other rows' text, and the steps fit the memory set_n_windows reserved.
TEST_P(RunnerWindowsCpu, RowsAtDifferentPositionsKeepTheirNumbers) {
  const std::unique_ptr<Backend> be = backend(2);
  const size_t nv = static_cast<size_t>(hp().n_vocab);
  const auto want = each_alone(*be);
  const std::unique_ptr<WhisperRunner> runner = encoded_runner(*be);
  WhisperRunner& r = *runner;
  const int P = static_cast<int>(kPrefix.size());
  const int joins[kMaxRows] = {0, 2, 3, 5};  // the global step each chunk starts at
  const int last_local = P - 1 + kSteps;     // a chunk's last fed position
  std::vector<float> logits;
  for (int g = 0; g <= joins[kMaxRows - 1] + last_local; ++g) {
    std::vector<int32_t> toks;
    std::vector<int> rows, positions;
    for (int c = 0; c < kMaxRows; ++c) {
      const int l = g - joins[c];
      if (l < 0 || l > last_local) continue;
      toks.push_back(l < P ? kPrefix[static_cast<size_t>(l)]
                           : argmax(want[static_cast<size_t>(c)][static_cast<size_t>(l - P)]));
      rows.push_back(c);
      positions.push_back(l);
    }
    ASSERT_EQ(r.decode_rows(toks, rows, positions, &logits, rows), ComputeStatus::Ok);
    for (size_t k = 0; k < rows.size(); ++k) {
      const int c = rows[k], l = positions[k];
      if (l < P - 1) continue;  // inside the prefix: no token is chosen from these logits
      const auto& w = want[static_cast<size_t>(c)][static_cast<size_t>(l - (P - 1))];
      const std::span<const float> row = std::span(logits).subspan(k * nv, nv);
      EXPECT_LE(rel_diff(row, w), tol()) << "global step " << g << ", chunk " << c << ", position " << l;
      EXPECT_EQ(argmax(row), argmax(w)) << "global step " << g << ", chunk " << c;
    }
  }
  EXPECT_EQ(r.decoder_reallocs(), 0) << "rows at different positions fit the memory set_n_windows reserved";
  // One position per row, each inside the text context.
  const std::vector<int32_t> two = {kPrefix[0], kPrefix[0]};
  const std::vector<int> slots = {0, 1};
  EXPECT_THROW((void)r.decode_rows(two, slots, std::vector<int>{0}, &logits, slots), Error);
  EXPECT_THROW((void)r.decode_rows(two, slots, std::vector<int>{0, hp().n_text_ctx}, &logits, slots), Error);
}

// Growing the windows keeps what was encoded; a decode() against a window equals one on a runner
// that holds only that chunk.
TEST_P(RunnerWindowsCpu, WindowsSurviveGrowthAndSingleDecodeReadsItsWindow) {
  const std::unique_ptr<Backend> be = backend(2);
  WhisperRunner r(*model_, *be, opts());
  ASSERT_EQ(r.encode(chunk_mel(hp(), 0)), ComputeStatus::Ok);
  r.set_n_windows(3);
  ASSERT_EQ(r.encode(chunk_mel(hp(), 2), 2), ComputeStatus::Ok);
  std::vector<float> l0, l2;
  ASSERT_EQ(r.decode(kPrefix, 0, &l0, false, 0, 0), ComputeStatus::Ok);
  ASSERT_EQ(r.decode(kPrefix, 0, &l2, false, 1, 2), ComputeStatus::Ok);
  EXPECT_LE(rel_diff(l0, alone(*be, 0)[0]), 1e-6) << "window 0 kept its chunk through the growth";
  EXPECT_LE(rel_diff(l2, alone(*be, 2)[0]), 1e-6);
  r.set_n_windows(1);
  ASSERT_EQ(r.decode(kPrefix, 0, &l0), ComputeStatus::Ok);
  EXPECT_LE(rel_diff(l0, alone(*be, 0)[0]), 1e-6) << "shrinking keeps window 0";
}

// The q8_0 cross cache: each chunk alone on the same cache type is the reference there (the
// quantized cache moves logits by ~1e-3 against f16, RunnerCrossKvQ8 below).
INSTANTIATE_TEST_SUITE_P(Model, RunnerWindows,
                         ::testing::Values(Case{DType::F16, true, false}, Case{DType::F16, false, false},
                                           Case{DType::Q5_0, true, false}, Case{DType::F16, true, true},
                                           Case{DType::F16, false, true}, Case{DType::F16, true, false, DType::Q8_0},
                                           Case{DType::F16, true, true, DType::Q8_0}),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

INSTANTIATE_TEST_SUITE_P(Model, RunnerWindowsCpu,
                         ::testing::Values(Case{DType::F16, true, false}, Case{DType::F16, false, false},
                                           Case{DType::Q5_0, true, false}, Case{DType::F16, true, false, DType::Q8_0}),
                         [](const ::testing::TestParamInfo<Case>& i) { return case_name(i.param); });

// A q8_0 cross cache against the f16 one on the same chunk: the logits move by the cache's
// rounding (~1e-3 relative here), the self-attention and everything else unchanged; the cache
// takes 0.53x the bytes. Without flash_attn (whose plain path reads an f16 cache) it is refused.
TEST(RunnerCrossKvQ8, StaysCloseToTheF16CacheAtHalfTheBytes) {
  const testing::MicroModelFile micro("windows-cross-q8");
  const auto& model = micro.model;
  auto cpu = Registry::global().find(kCpuDeviceName)->init_backend({2});
  RunnerOptions f16, q8;
  q8.cross_kv_type = DType::Q8_0;
  WhisperRunner a(*model, *cpu, f16), b(*model, *cpu, q8);
  const HParams& hp = model->hparams();
  for (int c = 0; c < 2; ++c) {
    ASSERT_EQ(a.encode(chunk_mel(hp, c)), ComputeStatus::Ok);
    ASSERT_EQ(b.encode(chunk_mel(hp, c)), ComputeStatus::Ok);
    std::vector<float> la, lb;
    ASSERT_EQ(a.decode(kPrefix, 0, &la, /*all_rows=*/true), ComputeStatus::Ok);
    ASSERT_EQ(b.decode(kPrefix, 0, &lb, /*all_rows=*/true), ComputeStatus::Ok);
    const double d = rel_diff(lb, la);
    std::printf("  chunk %d: q8_0 cross cache vs f16, rel %.3g\n", c, d);
    EXPECT_GT(d, 0.0) << "the quantized cache is in use";
    EXPECT_LE(d, 1e-2) << "chunk " << c;
  }
  // Word timestamps' pass reads the q8_0 keys through mul_mat (queries quantized too): the heads'
  // logits move by ~1e-2 of their largest (DTW takes their softmax's shape, not their digits).
  const std::vector<CrossQkHead> heads = {{0, 1}, {1, 0}};
  const std::vector<int32_t> tokens = {50258, 50259, 50359, 400, 401, 402, 403, 404, 405, 406};
  std::vector<float> qa, qb, la, lb;
  ASSERT_EQ(a.align(tokens, heads, &qa, &la), ComputeStatus::Ok);
  ASSERT_EQ(b.align(tokens, heads, &qb, &lb), ComputeStatus::Ok);
  ASSERT_EQ(qa.size(), qb.size());
  EXPECT_LE(rel_diff(qb, qa), 3e-2);
  EXPECT_LE(rel_diff(lb, la), 1e-2);
  const size_t per_window_f16 = static_cast<size_t>(2 * hp.n_text_layer * hp.n_audio_ctx * hp.n_text_state) * 2;
  EXPECT_LT(b.kv_cache_bytes(), a.kv_cache_bytes());
  EXPECT_NEAR(static_cast<double>(a.kv_cache_bytes() - b.kv_cache_bytes()), per_window_f16 * (1.0 - 34.0 / 64.0),
              4096.0 * hp.n_text_layer);
  RunnerOptions plain = q8;
  plain.flash_attn = false;
  EXPECT_TRUE(
      testing::mentions(testing::error_of([&] { WhisperRunner r(*model, *cpu, plain); }), {"q8_0", "flash_attn"}));
}

TEST(RunnerWindowsErrors, BadWindowsAreClearErrors) {
  const testing::MicroModelFile micro("windows-errors");
  const auto& model = micro.model;
  auto cpu = Registry::global().find(kCpuDeviceName)->init_backend({2});
  WhisperRunner r(*model, *cpu);
  const HParams& hp = model->hparams();
  using testing::error_of;
  using testing::mentions;
  const std::vector<float> mel = chunk_mel(hp, 0);
  EXPECT_TRUE(mentions(error_of([&] { r.encode(mel, 1); }), {"window 1", "set_n_windows"}));
  EXPECT_TRUE(mentions(error_of([&] { r.set_n_windows(0); }), {"at least 1"}));
  r.set_n_windows(2);
  std::vector<float> logits;
  const std::vector<int32_t> two = {1, 2};
  const std::vector<int> slots = {0, 1};
  EXPECT_TRUE(mentions(error_of([&] {
                         r.decode_batch(two, slots, 0, &logits, std::vector<int>{0, 2});
                       }),
                       {"window 2"}));
  EXPECT_TRUE(
      mentions(error_of([&] { r.decode_batch(two, slots, 0, &logits, std::vector<int>{0}); }), {"2 rows", "1 cross"}));
  EXPECT_TRUE(mentions(error_of([&] { r.decode(two, 0, &logits, false, 0, -1); }), {"window -1"}));
  EXPECT_TRUE(mentions(error_of([&] { r.encode(mel, 2); }), {"window 2"}));
  // Still works after the refusals.
  ASSERT_EQ(r.encode(mel, 1), ComputeStatus::Ok);
  EXPECT_EQ(r.decode_batch(two, slots, 0, &logits, slots), ComputeStatus::Ok);
}

}  // namespace
}  // namespace hark

namespace hark {
namespace {

// bench_batch_steps with own_windows (bench_kernels decode_chunks): one figure per size, the
// runner grown to the windows it needs.
TEST(RunnerWindowsBench, OwnWindowsFigures) {
  const testing::MicroModelFile micro("windows-bench");
  const auto& model = micro.model;
  auto cpu = Registry::global().find(kCpuDeviceName)->init_backend({2});
  WhisperRunner r(*model, *cpu);
  BatchStepOptions bo;
  bo.rows = {1, 3};
  bo.n_rounds = 2;
  bo.own_windows = true;
  const std::vector<BatchStepFigure> f = bench_batch_steps(r, bo);
  ASSERT_EQ(f.size(), 2u);
  for (const BatchStepFigure& x : f) EXPECT_TRUE(std::isfinite(x.min_ms) && x.min_ms > 0.0);
  EXPECT_EQ(r.n_windows(), 3);
  EXPECT_EQ(r.decoder_reallocs(), 0);
}

}  // namespace
}  // namespace hark
