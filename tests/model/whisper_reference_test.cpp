// hark's Whisper graphs against an independent forward pass.
//
// The other model tests run the SAME graph on two backends, so a mistake in the graph itself (a
// weight layout misread, a transpose, the conv kernel's orientation, the positional embeddings'
// orientation, the order heads are split in, the attention scale, the causal mask, the mel
// layout) would pass them. Here the reference is a plain double-precision implementation of
// Whisper's forward pass written from the architecture's definition, in PyTorch's conventions
// (row-major, Linear weight [out, in], conv1d weight [out, in, k], positions [n_ctx, n_state]).
// It shares nothing with hark but the file loader and the element-type conversions it reads the
// weights through: it builds no graph and calls no op.
//
// The micro model (width 64, 2 + 2 layers, 1500 audio positions, full vocabulary) is written with
// the writer's seeded random weights, whose scales keep activations near unit size, so logits
// spread with a standard deviation near 1 across the vocabulary (checked below, so that the
// comparisons prove something).
//
// hark keeps the decoder's self- and cross-attention keys/values in f16 (kv_cache.h): a
// deliberate storage choice, not part of Whisper's math. The reference compares both ways: with
// the same rounding of K/V to f16 (what is left is f32 summation order, so the tolerance is tight)
// and without it (pure Whisper math, a looser tolerance that covers the f16 cache).
//
// Measured (x86-64): encoder output within ~5e-7 of its max |value|; logits within ~3e-6 of max
// |logit| against the f16-K/V reference and ~2e-4 against the exact one. The tolerances leave a
// wide margin over that, yet each of these mistakes, put into the reference on purpose, failed
// the tests: the conv kernel reversed or read as [out, k, in]; the encoder positions read
// transposed; heads taking interleaved features; scores scaled by 1/D instead of 1/sqrt(D); no
// causal mask; the mel read frame-major; a query weight transposed; decoder positions off by one;
// and even GELU's tanh approximation (logits off by ~2e-4) and LayerNorm eps 1e-6 (~3e-4).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "backend/buffer.h"
#include "backend/device.h"
#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "model/encoder.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model/whisper_runner.h"
#include "model_test_util.h"
#include "runtime/dtype.h"
#include "runtime/graph.h"
#include "runtime/quant.h"

namespace hark {
namespace {

using Vec = std::vector<double>;

// ---- the reference ---------------------------------------------------------------------------

// A model's weights as doubles, in PyTorch's layout (which is the file's memory order: the file
// lists dims innermost first, PyTorch outermost first).
class RefWeights {
 public:
  explicit RefWeights(const ModelFile& m) : model_(m) {}

  // The tensor `name`, which must have PyTorch shape `shape` (outermost first).
  const Vec& get(const std::string& name, std::initializer_list<int64_t> shape) {
    auto it = cache_.find(name);
    if (it != cache_.end()) return it->second;
    const Tensor* t = model_.tensor(name);
    if (t == nullptr) throw std::runtime_error("reference: model has no tensor " + name);
    // PyTorch's shape reversed is the file's ne, padded with 1.
    std::array<int64_t, kMaxDims> want{1, 1, 1, 1};
    size_t i = 0;
    for (auto d = std::rbegin(shape); d != std::rend(shape); ++d) want[i++] = *d;
    if (t->ne != want) {
      std::ostringstream os;
      os << "reference: " << name << " is " << t->shape_str() << ", PyTorch shape [";
      for (int64_t d : shape) os << d << " ";
      os << "] expected";
      throw std::runtime_error(os.str());
    }
    // Copy the bytes out first (file tensors may sit at any address), then convert row by row.
    std::vector<uint8_t> raw(t->nbytes());
    tensor_get(*t, raw.data(), raw.size());
    const int64_t ncols = t->ne[0], nrows = t->nrows();
    std::vector<float> row(static_cast<size_t>(ncols));
    Vec v(static_cast<size_t>(ncols * nrows));
    for (int64_t r = 0; r < nrows; ++r) {
      dequantize_row(t->type, raw.data() + static_cast<size_t>(r) * t->nb[1], row.data(), ncols);
      std::copy(row.begin(), row.end(), v.begin() + r * ncols);
    }
    return cache_.emplace(name, std::move(v)).first->second;
  }

 private:
  const ModelFile& model_;
  std::map<std::string, Vec> cache_;
};

double dot(const double* a, const double* b, int64_t n) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // four chains: the loop is not latency-bound
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += a[i] * b[i];
    s1 += a[i + 1] * b[i + 1];
    s2 += a[i + 2] * b[i + 2];
    s3 += a[i + 3] * b[i + 3];
  }
  for (; i < n; ++i) s0 += a[i] * b[i];
  return (s0 + s1) + (s2 + s3);
}

double gelu(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }

// torch.nn.Linear: x [n, in] -> x W^T + b, W [out, in].
Vec linear(const Vec& x, int64_t n, int64_t in, const Vec& w, const Vec* b, int64_t out) {
  Vec y(static_cast<size_t>(n * out));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t o = 0; o < out; ++o) y[i * out + o] = dot(&x[i * in], &w[o * in], in) + (b ? (*b)[o] : 0.0);
  return y;
}

// torch.nn.LayerNorm over the last dim (biased variance, eps 1e-5).
Vec layer_norm(const Vec& x, int64_t n, int64_t c, const Vec& g, const Vec& b) {
  Vec y(x.size());
  for (int64_t i = 0; i < n; ++i) {
    const double* r = &x[i * c];
    double mean = 0;
    for (int64_t j = 0; j < c; ++j) mean += r[j];
    mean /= static_cast<double>(c);
    double var = 0;
    for (int64_t j = 0; j < c; ++j) var += (r[j] - mean) * (r[j] - mean);
    var /= static_cast<double>(c);
    const double inv = 1.0 / std::sqrt(var + 1e-5);
    for (int64_t j = 0; j < c; ++j) y[i * c + j] = (r[j] - mean) * inv * g[j] + b[j];
  }
  return y;
}

// torch.nn.Conv1d (cross-correlation): in [cin, len] -> [cout, lout], w [cout, cin, k].
Vec conv1d(const Vec& in, int64_t cin, int64_t len, const Vec& w, const Vec& b, int64_t cout, int64_t k, int64_t stride,
           int64_t pad, int64_t* lout) {
  const int64_t lo = (len + 2 * pad - k) / stride + 1;
  *lout = lo;
  Vec y(static_cast<size_t>(cout * lo));
  for (int64_t o = 0; o < cout; ++o) {
    double* yr = &y[o * lo];
    for (int64_t t = 0; t < lo; ++t) yr[t] = b[o];
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t j = 0; j < k; ++j) {
        const double wv = w[(o * cin + c) * k + j];
        const double* xr = &in[c * len];
        for (int64_t t = 0; t < lo; ++t) {
          const int64_t s = t * stride + j - pad;
          if (s >= 0 && s < len) yr[t] += wv * xr[s];
        }
      }
  }
  return y;
}

double round_f16(double v) { return f16_to_f32(f32_to_f16(static_cast<float>(v))); }

// Whisper's MultiHeadAttention: queries from x [nq, S], keys/values from src [nk, S]. Head h
// uses features [h*D, (h+1)*D); q and k are each scaled by D^-1/4. Causal: query i (at position
// i of the same sequence as the keys) sees keys 0..i. kv_f16 rounds k and v to f16 as hark's
// cache stores them.
Vec attention(RefWeights& W, const std::string& p, const Vec& x, int64_t nq, const Vec& src, int64_t nk, int64_t S,
              int64_t H, bool causal, bool kv_f16) {
  const Vec& bq = W.get(p + ".query.bias", {S});
  const Vec& bv = W.get(p + ".value.bias", {S});
  const Vec& bo = W.get(p + ".out.bias", {S});
  Vec q = linear(x, nq, S, W.get(p + ".query.weight", {S, S}), &bq, S);
  Vec k = linear(src, nk, S, W.get(p + ".key.weight", {S, S}), nullptr, S);
  Vec v = linear(src, nk, S, W.get(p + ".value.weight", {S, S}), &bv, S);
  if (kv_f16) {
    for (double& e : k) e = round_f16(e);
    for (double& e : v) e = round_f16(e);
  }
  const int64_t D = S / H;
  const double scale = std::pow(static_cast<double>(D), -0.25);
  for (double& e : q) e *= scale;
  for (double& e : k) e *= scale;

  Vec out(static_cast<size_t>(nq * S), 0.0);
  Vec score(static_cast<size_t>(nk));
  for (int64_t h = 0; h < H; ++h)
    for (int64_t i = 0; i < nq; ++i) {
      const int64_t n_see = causal ? i + 1 : nk;
      double mx = -INFINITY;
      for (int64_t j = 0; j < n_see; ++j) {
        score[j] = dot(&q[i * S + h * D], &k[j * S + h * D], D);
        mx = std::max(mx, score[j]);
      }
      double sum = 0;
      for (int64_t j = 0; j < n_see; ++j) sum += (score[j] = std::exp(score[j] - mx));
      double* o = &out[i * S + h * D];
      for (int64_t j = 0; j < n_see; ++j) {
        const double pj = score[j] / sum;
        const double* vr = &v[j * S + h * D];
        for (int64_t d = 0; d < D; ++d) o[d] += pj * vr[d];
      }
    }
  return linear(out, nq, S, W.get(p + ".out.weight", {S, S}), &bo, S);
}

// x += mlp(mlp_ln(x)), mlp = Linear(S, 4S) -> GELU -> Linear(4S, S).
void mlp_block(RefWeights& W, const std::string& p, Vec& x, int64_t n, int64_t S) {
  const Vec h = layer_norm(x, n, S, W.get(p + "mlp_ln.weight", {S}), W.get(p + "mlp_ln.bias", {S}));
  Vec m = linear(h, n, S, W.get(p + "mlp.0.weight", {4 * S, S}), &W.get(p + "mlp.0.bias", {4 * S}), 4 * S);
  for (double& e : m) e = gelu(e);
  const Vec y = linear(m, n, 4 * S, W.get(p + "mlp.2.weight", {S, 4 * S}), &W.get(p + "mlp.2.bias", {S}), S);
  for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

void add_into(Vec& x, const Vec& y) {
  for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

// AudioEncoder: mel [n_mels, 2 * n_audio_ctx] (mel-major) -> [n_audio_ctx, S].
Vec ref_encoder(RefWeights& W, const HParams& hp, const std::vector<float>& mel) {
  const int64_t S = hp.n_audio_state, M = hp.n_mels, n_frames = 2 * static_cast<int64_t>(hp.n_audio_ctx);
  const Vec in(mel.begin(), mel.end());
  int64_t l1 = 0, l2 = 0;
  Vec c1 = conv1d(in, M, n_frames, W.get("encoder.conv1.weight", {S, M, 3}), W.get("encoder.conv1.bias", {S, 1}), S, 3,
                  1, 1, &l1);
  for (double& e : c1) e = gelu(e);
  Vec c2 =
      conv1d(c1, S, l1, W.get("encoder.conv2.weight", {S, S, 3}), W.get("encoder.conv2.bias", {S, 1}), S, 3, 2, 1, &l2);
  for (double& e : c2) e = gelu(e);
  const int64_t n = hp.n_audio_ctx;
  if (l2 != n) throw std::runtime_error("reference: conv2 gave " + std::to_string(l2) + " positions");
  const Vec& pos = W.get("encoder.positional_embedding", {n, S});
  Vec x(static_cast<size_t>(n * S));
  for (int64_t t = 0; t < n; ++t)  // permute(0, 2, 1): [S, n] -> [n, S]
    for (int64_t s = 0; s < S; ++s) x[t * S + s] = c2[s * n + t] + pos[t * S + s];

  for (int l = 0; l < hp.n_audio_layer; ++l) {
    const std::string p = "encoder.blocks." + std::to_string(l) + ".";
    const Vec h = layer_norm(x, n, S, W.get(p + "attn_ln.weight", {S}), W.get(p + "attn_ln.bias", {S}));
    add_into(x, attention(W, p + "attn", h, n, h, n, S, hp.n_audio_head, false, false));
    mlp_block(W, p, x, n, S);
  }
  return layer_norm(x, n, S, W.get("encoder.ln_post.weight", {S}), W.get("encoder.ln_post.bias", {S}));
}

// TextDecoder over the whole token sequence (no cache): the logits of its last token.
Vec ref_decoder_last_logits(RefWeights& W, const HParams& hp, const std::vector<int32_t>& tokens, const Vec& audio,
                            bool kv_f16) {
  const int64_t T = hp.n_text_state, n = static_cast<int64_t>(tokens.size()), V = hp.n_vocab;
  const Vec& emb = W.get("decoder.token_embedding.weight", {V, T});
  const Vec& pos = W.get("decoder.positional_embedding", {hp.n_text_ctx, T});
  Vec x(static_cast<size_t>(n * T));
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < T; ++j) x[i * T + j] = emb[tokens[i] * T + j] + pos[i * T + j];

  for (int l = 0; l < hp.n_text_layer; ++l) {
    const std::string p = "decoder.blocks." + std::to_string(l) + ".";
    Vec h = layer_norm(x, n, T, W.get(p + "attn_ln.weight", {T}), W.get(p + "attn_ln.bias", {T}));
    add_into(x, attention(W, p + "attn", h, n, h, n, T, hp.n_text_head, true, kv_f16));
    h = layer_norm(x, n, T, W.get(p + "cross_attn_ln.weight", {T}), W.get(p + "cross_attn_ln.bias", {T}));
    add_into(x, attention(W, p + "cross_attn", h, n, audio, hp.n_audio_ctx, T, hp.n_text_head, false, kv_f16));
    mlp_block(W, p, x, n, T);
  }
  x = layer_norm(x, n, T, W.get("decoder.ln.weight", {T}), W.get("decoder.ln.bias", {T}));
  Vec logits(static_cast<size_t>(V));
  for (int64_t t = 0; t < V; ++t) logits[t] = dot(&x[(n - 1) * T], &emb[t * T], T);
  return logits;
}

// ---- the test --------------------------------------------------------------------------------

// Two deterministic log-mel windows in ~[-1, 1], mel-major: neither is symmetric in time or mel,
// so a transposed or reversed reading changes the result.
std::vector<float> test_mel(const HParams& hp, int which) {
  const int64_t F = 2 * static_cast<int64_t>(hp.n_audio_ctx);
  std::vector<float> m(static_cast<size_t>(hp.n_mels * F));
  for (int64_t b = 0; b < hp.n_mels; ++b)
    for (int64_t t = 0; t < F; ++t) {
      const double tb = static_cast<double>(t), bb = static_cast<double>(b);
      const double v =
          which == 0 ? 0.6 * std::sin(0.011 * tb * (1 + b % 7) + 0.37 * bb) + 0.3 * std::cos(0.0023 * tb * bb) - 0.1
                     : 0.7 * std::cos(0.017 * tb + 0.05 * bb * bb) * std::exp(-tb / 2500.0) +
                           0.25 * std::sin(0.003 * tb * (bb + 3)) + 0.05 * bb / static_cast<double>(hp.n_mels);
      m[static_cast<size_t>(b * F + t)] = static_cast<float>(v);
    }
  return m;
}

struct Diff {
  double max_abs = 0, scale = 0;
  int64_t worst = -1;
  double got = 0, want = 0;
  double rel() const { return max_abs / std::max(scale, 1e-30); }
};

Diff compare(const std::vector<float>& got, const Vec& want) {
  Diff d;
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) {
    d.scale = std::max(d.scale, std::fabs(want[i]));
    const double e = std::fabs(static_cast<double>(got[i]) - want[i]);
    if (!(e <= d.max_abs)) {  // NaN counts as the worst
      d.max_abs = std::isnan(e) ? INFINITY : e;
      d.worst = static_cast<int64_t>(i);
      d.got = got[i];
      d.want = want[i];
    }
  }
  return d;
}

double stddev(const Vec& v) {
  double m = 0;
  for (double e : v) m += e;
  m /= static_cast<double>(v.size());
  double s = 0;
  for (double e : v) s += (e - m) * (e - m);
  return std::sqrt(s / static_cast<double>(v.size()));
}

Vec diff_of(const Vec& a, const Vec& b) {
  Vec d(a.size());
  for (size_t i = 0; i < a.size(); ++i) d[i] = a[i] - b[i];
  return d;
}

// One model file per weight type, its reference weights and the reference encoder outputs,
// shared by the tests of that type (the reference encoder is the slow part).
struct Fixture {
  std::unique_ptr<testing::TempFile> file;
  std::unique_ptr<ModelFile> model;
  std::unique_ptr<RefWeights> ref;
  std::map<int, Vec> audio;  // reference encoder output per test mel

  const Vec& ref_audio(int mel) {
    auto it = audio.find(mel);
    if (it == audio.end())
      it = audio.emplace(mel, ref_encoder(*ref, model->hparams(), test_mel(model->hparams(), mel))).first;
    return it->second;
  }
};

Fixture& fixture(DType type) {
  static std::map<DType, std::unique_ptr<Fixture>> all;
  std::unique_ptr<Fixture>& f = all[type];
  if (!f) {
    f = std::make_unique<Fixture>();
    TestModelOptions o;
    if (!test_model_preset("micro", &o.hparams)) throw std::runtime_error("no micro preset");
    o.weight_type = type;
    f->file = std::make_unique<testing::TempFile>(std::string("reference-") + dtype_name(type));
    write_test_model(o, f->file->path());
    f->model = ModelFile::open(f->file->path());
    f->ref = std::make_unique<RefWeights>(*f->model);
  }
  return *f;
}

class WhisperReference : public ::testing::TestWithParam<DType> {
 protected:
  void SetUp() override {
    f_ = &fixture(GetParam());
    backend_ = Registry::global().find(kCpuDeviceName)->init_backend({2});
  }
  const HParams& hp() const { return f_->model->hparams(); }

  Fixture* f_ = nullptr;
  std::unique_ptr<Backend> backend_;
};

// The encoder graph alone (built here from build_encoder), its output against the reference's.
TEST_P(WhisperReference, EncoderOutputMatchesReference) {
  const HParams& h = hp();
  for (int which : {0, 1}) {
    TensorArena a;
    Tensor* mel = a.new_tensor(DType::F32, {2 * static_cast<int64_t>(h.n_audio_ctx), h.n_mels}, "mel");
    mel->flags |= kFlagInput;
    Tensor* out = build_encoder(a, f_->model->weights(), h, mel);
    Graph g;
    g.build(out);
    GraphAllocator alloc(backend_->device().buffer_type());
    alloc.alloc(g);
    const std::vector<float> m = test_mel(h, which);
    tensor_set(*mel, m.data(), m.size() * sizeof(float));
    ASSERT_EQ(backend_->compute(g), ComputeStatus::Ok);
    ASSERT_EQ(out->ne[0], h.n_audio_state);
    ASSERT_EQ(out->ne[1], h.n_audio_ctx);
    std::vector<float> got(static_cast<size_t>(out->nelements()));
    tensor_get(*out, got.data(), got.size() * sizeof(float));  // [S, n_ctx] = PyTorch [n_ctx, S]

    const Vec& want = f_->ref_audio(which);
    const Diff d = compare(got, want);
    const int64_t S = h.n_audio_state;
    std::printf("  encoder %s mel %d: max |diff| %.3g at scale %.3g (rel %.3g), std %.3g\n", dtype_name(GetParam()),
                which, d.max_abs, d.scale, d.rel(), stddev(want));
    EXPECT_GT(stddev(want), 0.1) << "reference encoder output is nearly constant";
    EXPECT_LE(d.rel(), 2e-5) << "encoder output, mel " << which << ": worst at position " << d.worst / S << ", channel "
                             << d.worst % S << ": hark " << d.got << ", reference " << d.want;
  }
}

// The runner end to end: encode, a 4-token prompt at n_past 0, one more token at n_past 4.
TEST_P(WhisperReference, RunnerLogitsMatchReference) {
  const HParams& h = hp();
  WhisperRunner runner(*f_->model, *backend_);
  const std::vector<int32_t> prompt = {50258, 50259, 50359, 50364};  // sot, en, transcribe, <|0.00|>
  const int32_t next = 440;
  std::vector<int32_t> all = prompt;
  all.push_back(next);

  std::map<int, std::vector<Vec>> ref_by_mel;  // per mel: [prompt logits, step logits] (f16 K/V)
  std::vector<float> prev_prompt, prev_step;   // hark's logits for mel 0
  for (int which : {0, 1}) {
    const std::vector<float> mel = test_mel(h, which);
    ASSERT_EQ(runner.encode(mel), ComputeStatus::Ok);
    std::vector<float> got_prompt, got_step;
    ASSERT_EQ(runner.decode(prompt, 0, &got_prompt), ComputeStatus::Ok);
    ASSERT_EQ(runner.decode(std::vector<int32_t>{next}, 4, &got_step), ComputeStatus::Ok);

    const Vec& audio = f_->ref_audio(which);
    struct Step {
      const char* what;
      const std::vector<float>& got;
      std::vector<int32_t> tokens;
    };
    std::vector<Vec>& refs = ref_by_mel[which];
    for (const Step& s : {Step{"prompt (n_past 0)", got_prompt, prompt}, Step{"step (n_past 4)", got_step, all}}) {
      const Vec exact = ref_decoder_last_logits(*f_->ref, h, s.tokens, audio, false);
      const Vec cached = ref_decoder_last_logits(*f_->ref, h, s.tokens, audio, true);
      refs.push_back(cached);
      const Diff de = compare(s.got, exact), dc = compare(s.got, cached);
      std::printf(
          "  logits %s mel %d %s: std %.3g, max |logit| %.3g; vs f16-K/V reference rel %.3g, "
          "vs exact reference rel %.3g\n",
          dtype_name(GetParam()), which, s.what, stddev(exact), de.scale, dc.rel(), de.rel());
      EXPECT_GT(stddev(exact), 0.1) << "reference logits barely vary across the vocabulary";
      EXPECT_LE(dc.rel(), 5e-5) << s.what << ", mel " << which << " vs the reference with f16 K/V: worst token "
                                << dc.worst << ": hark " << dc.got << ", reference " << dc.want;
      EXPECT_LE(de.rel(), 2e-3) << s.what << ", mel " << which << " vs the exact reference: worst token " << de.worst
                                << ": hark " << de.got << ", reference " << de.want;
    }
    if (which == 1) {
      // What the audio contributes: logits(mel 0) - logits(mel 1), hark against the reference.
      // The common part (tokens, positions, decoder weights) cancels, so a mistake on the
      // encoder/cross-attention path cannot hide under it.
      const std::vector<Vec>& r0 = ref_by_mel[0];
      for (int step = 0; step < 2; ++step) {
        const Vec want = diff_of(r0[static_cast<size_t>(step)], refs[static_cast<size_t>(step)]);
        std::vector<float> got(want.size());
        const std::vector<float>& g1 = step == 0 ? got_prompt : got_step;
        const std::vector<float>& g0 = step == 0 ? prev_prompt : prev_step;
        for (size_t i = 0; i < got.size(); ++i) got[i] = g0[i] - g1[i];
        const Diff d = compare(got, want);
        std::printf("  logits %s mel 0 - mel 1, %s: std %.3g (%.3g of the logits' max), rel err %.3g\n",
                    dtype_name(GetParam()), step ? "step" : "prompt", stddev(want),
                    d.scale / compare(g1, refs[static_cast<size_t>(step)]).scale, d.rel());
        EXPECT_GT(stddev(want), 1e-2) << "the audio barely changes the logits: the test would not see the encoder";
        EXPECT_LE(d.rel(), 1e-3) << "audio-dependent part of the logits, " << (step ? "step" : "prompt")
                                 << ": worst token " << d.worst << ": hark " << d.got << ", reference " << d.want;
      }
    }
    prev_prompt = got_prompt;
    prev_step = got_step;
  }
}

INSTANTIATE_TEST_SUITE_P(WeightTypes, WhisperReference, ::testing::Values(DType::F32, DType::F16),
                         [](const ::testing::TestParamInfo<DType>& i) { return std::string(dtype_name(i.param)); });

}  // namespace
}  // namespace hark
