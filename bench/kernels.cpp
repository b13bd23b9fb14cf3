// Matrix products at Whisper's shapes through the CPU backend (2 threads), next to what the
// machine allows: OpenBLAS sgemm on the same shapes (when built in) and memory-copy bandwidth.
//
//   bench_kernels                          everything (under a minute on an idle machine)
//   bench_kernels --benchmark_filter=tiny  the tiny model's shapes only (fast)
//   bench_kernels --benchmark_filter=decode_batch   B-row decoder steps vs one row (tiny, base)
//   bench_kernels decode_batch [preset:type ...]    the same, sizes taking turns step by step,
//                                                   fastest and median step (robust on a busy
//                                                   machine); default tiny:f16 tiny:q5_0
//                                                   base:f16 base:q5_0 (HARK_BENCH_THREADS=1:
//                                                   process CPU time, for busy machines);
//                                                   --rows=1,2,5,8 (the default) sets the sizes
//   bench_kernels --benchmark_filter=flash_attn the encoder's self-attention of one layer (tiny, base)
//     and a decoder step's cross-attention (tiny, 1 and 8 rows each against its own window) and
//     self-attention (tiny, 1 and 8 rows each over its own cache slot)
//   bench_kernels --benchmark_filter=host_row   the host side of one decoder row: rules, argmax
//                                                or a draw, log-softmax on 51,865 logits
//   HARK_BENCH_THREADS=1 bench_kernels     one thread, summary in CPU time (busy machines)
//   HARK_SIMD=avx2 bench_kernels           a lower kernel level (scalar, avx2, avx2vnni), as for hark itself
//
// Shapes are M x K . K x N (activation rows M, depth K, weight rows N):
//   encoder: 1500 x 384 . 384 x 1536 (tiny MLP), 1500 x 1280 . 1280 x 5120 (large MLP)
//   decoder: 1 x 384 . 384 x 51865 (tiny logits), 1 x 1280 . 1280 x 5120 (large MLP, one token)
// Decoder products read several copies of the weights in turn, together larger than the L3
// cache, so they measure memory bandwidth as a real decoder step (all layers' weights) does.
//
// After the runs a summary prints the targets:
//   encoder (f32, f16 weights): hark GFLOP/s >= 80% of sgemm's
//   decoder: time <= 1.3 x (weight bytes / memcpy bandwidth)
//   decode_batch: a 5-row step <= 2 x a 1-row step
//
// bench_kernels decode_chunks [preset:type ...]: decoder steps of B = 1, 4, 8, 16 independent
// chunks (each row its own cross window: the batched pipeline), per step and as tokens/s;
// --rows=B,... other sizes, --cross-kv=q8_0 a quantized cross cache. For f16/f32 models also the
// least time a row can add to a step on this machine (its multiply-adds at the GEMM rate, or its
// cross K/V at the streaming rate, both measured in the same run) and the most B8 can gain over
// B1 from that.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "backend/buffer.h"
#include "backend/cpu/cpu_backend.h"
#include "backend/cpu/gemm_config.h"
#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "decode/greedy.h"
#include "decode/sampling.h"
#include "model/layers.h"
#include "model/model_file.h"
#include "model/model_writer.h"
#include "model/runner_bench.h"
#include "model/whisper_runner.h"
#include "runtime/graph.h"
#include "runtime/ops.h"
#include "runtime/quant.h"

#ifdef HARK_HAVE_OPENBLAS
#include <cblas.h>
#endif

namespace {

using namespace hark;

// Threads for the products, sgemm and memcpy: 2, or HARK_BENCH_THREADS. With 1 the CPU-time
// column is the work itself even on a busy machine, and the summary uses it.
int bench_threads() {
  static const int n = [] {
    const char* env = std::getenv("HARK_BENCH_THREADS");
    const int v = env ? std::atoi(env) : 2;
    return v > 0 ? v : 2;
  }();
  return n;
}
constexpr size_t kCopyBytes = size_t{256} << 20;
constexpr size_t kColdBytes = size_t{128} << 20;  // decoder weights cycled through: 4x a 32 MiB L3

struct Shape {
  const char* name;  // "tiny_enc", ...
  int64_t M, K, N;
  bool decoder;
};

const Shape kShapes[] = {
    {"tiny_enc", 1500, 384, 1536, false},
    // The encoder's other products: an attention projection (q, k, v, out), the MLP's second
    // product, and the two convolutions (im2col columns times the kernel).
    {"tiny_proj", 1500, 384, 384, false},
    {"tiny_mlp2", 1500, 1536, 384, false},
    {"tiny_conv1", 3000, 240, 384, false},
    {"tiny_conv2", 1500, 1152, 384, false},
    {"large_enc", 1500, 1280, 5120, false},
    {"tiny_dec", 1, 384, 51865, true},
    {"large_dec", 1, 1280, 5120, true},
    // A 5-row decoder step (beam search / best-of rows in one graph): weights read once for all.
    {"tiny_dec5", 5, 384, 51865, true},
    {"large_dec5", 5, 1280, 5120, true},
    // An 8-chunk step of the batched pipeline: the logits product is most of its arithmetic.
    {"tiny_dec8", 8, 384, 51865, true},
    {"base_dec8", 8, 512, 51865, true},
    {"small_dec8", 8, 768, 51865, true},
    // A decoder step's small products (an attention projection, the MLP's first product), one row
    // and eight: a step has 32 of them, short streams of cold weights.
    {"tiny_dproj", 1, 384, 384, true},
    {"tiny_dproj8", 8, 384, 384, true},
    {"tiny_dmlp", 1, 384, 1536, true},
    {"tiny_dmlp8", 8, 384, 1536, true},
    {"tiny_dmlp2_8", 8, 1536, 384, true},
    {"large_dmlp2_5", 5, 5120, 1280, true},
    {"base_dmlp2_8", 8, 2048, 512, true},
};

const DType kTypes[] = {DType::F32, DType::F16, DType::Q8_0, DType::Q5_0, DType::Q4_0};

std::string shape_label(const Shape& s) {
  return std::string(s.name) + "_" + std::to_string(s.M) + "x" + std::to_string(s.K) + "x" + std::to_string(s.N);
}

std::vector<float> random_values(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = d(rng);
  return v;
}

// One mul_mat graph per weight copy, all sharing x and out. Built once per benchmark and kept
// while google-benchmark calls the same function again (it does, to pick iteration counts).
struct MulMatSetup {
  DType type;
  const Shape* shape;
  TensorArena arena;
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<std::unique_ptr<Graph>> graphs;
  std::unique_ptr<GraphAllocator> galloc;
  std::unique_ptr<Backend> backend;
  size_t weight_bytes = 0;

  MulMatSetup(DType t, const Shape& s) : type(t), shape(&s) {
    Device* dev = Registry::global().find(kCpuDeviceName);
    backend = dev->init_backend({bench_threads()});
    const size_t wbytes = dtype_row_bytes(t, s.K) * static_cast<size_t>(s.N);
    weight_bytes = wbytes;
    const int copies = s.decoder ? static_cast<int>(std::max<size_t>(2, (kColdBytes + wbytes - 1) / wbytes)) : 1;
    std::vector<uint8_t> bytes(wbytes);
    {
      const auto vals = random_values(s.K * s.N, 1);
      quantize_rows(t, vals.data(), bytes.data(), s.N, s.K);
    }
    Tensor* x = place(DType::F32, {s.K, s.M}, "x");
    const auto xv = random_values(s.K * s.M, 2);
    tensor_set(*x, xv.data(), xv.size() * sizeof(float));
    Tensor* out = nullptr;
    for (int c = 0; c < copies; ++c) {
      Tensor* w = place(t, {s.K, s.N}, "w");
      tensor_set(*w, bytes.data(), bytes.size());
      Tensor* y = ops::mul_mat(arena, w, x);
      if (out) {  // every copy writes the same output
        y->data = out->data;
        y->buffer = out->buffer;
      }
      auto g = std::make_unique<Graph>();
      g->build(y);
      if (!out) {
        galloc = std::make_unique<GraphAllocator>(dev->buffer_type());
        galloc->alloc(*g);
        out = y;
      }
      graphs.push_back(std::move(g));
    }
  }

  Tensor* place(DType t, std::initializer_list<int64_t> ne, const char* name) {
    Tensor* x = arena.new_tensor(t, ne, name);
    buffers.push_back(Registry::global().find(kCpuDeviceName)->buffer_type()->alloc(x->nbytes()));
    buffers.back()->place(*x, 0);
    return x;
  }
};

MulMatSetup& setup_for(DType t, const Shape& s) {
  static std::unique_ptr<MulMatSetup> current;  // one at a time: decoder copies are large
  if (!current || current->type != t || current->shape != &s) {
    current.reset();
    current = std::make_unique<MulMatSetup>(t, s);
  }
  return *current;
}

void set_rates(benchmark::State& state, const Shape& s, size_t weight_bytes) {
  state.counters["GFLOPS"] =
      benchmark::Counter(2.0 * s.M * s.K * s.N * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["wGB/s"] =
      benchmark::Counter(static_cast<double>(weight_bytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void bench_mul_mat(benchmark::State& state, DType t, const Shape* s, cpu::GemmImpl impl) {
  MulMatSetup& st = setup_for(t, *s);
  cpu::set_gemm_impl(impl);
  size_t i = 0;
  for (auto _ : state) {
    st.backend->compute(*st.graphs[i]);
    i = i + 1 == st.graphs.size() ? 0 : i + 1;
  }
  set_rates(state, *s, st.weight_bytes);
}

#ifdef HARK_HAVE_OPENBLAS
// OpenBLAS on its own, with its own 2 threads: C[M, N] = X[M, K] W[N, K]^T.
void bench_sgemm(benchmark::State& state, const Shape* s) {
  const auto x = random_values(s->M * s->K, 2), w = random_values(s->N * s->K, 1);
  std::vector<float> c(static_cast<size_t>(s->M * s->N));
  openblas_set_num_threads(bench_threads());
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(s->M), static_cast<blasint>(s->N),
                static_cast<blasint>(s->K), 1.0f, x.data(), static_cast<blasint>(s->K), w.data(),
                static_cast<blasint>(s->K), 0.0f, c.data(), static_cast<blasint>(s->N));
    benchmark::DoNotOptimize(c.data());
  }
  set_rates(state, *s, w.size() * sizeof(float));
}
#endif

// ---- flash_attn: the encoder's self-attention of one layer ----
// q, k, v f32 [S, 1500] seen per head as the encoder sees them (split_heads views), through the
// CPU backend's flash_attn: two products of 1500 x 1500 x D per head, plus the running softmax.
struct AttnShape {
  const char* name;
  int64_t S, H;
};
const AttnShape kAttnShapes[] = {{"tiny_enc", 384, 6}, {"base_enc", 512, 8}};
constexpr int64_t kAttnPositions = 1500;

void bench_flash_attn(benchmark::State& state, const AttnShape* s) {
  TensorArena arena;
  Device* dev = Registry::global().find(kCpuDeviceName);
  auto backend = dev->init_backend({bench_threads()});
  std::vector<std::unique_ptr<Buffer>> buffers;
  Tensor* heads[3];
  for (int i = 0; i < 3; ++i) {
    Tensor* x = arena.new_tensor(DType::F32, {s->S, kAttnPositions}, "qkv");
    buffers.push_back(dev->buffer_type()->alloc(x->nbytes()));
    buffers.back()->place(*x, 0);
    const auto v = random_values(s->S * kAttnPositions, 10 + static_cast<uint32_t>(i));
    tensor_set(*x, v.data(), v.size() * sizeof(float));
    heads[i] = split_heads(arena, x, static_cast<int>(s->H));
  }
  Tensor* out = ops::flash_attn(arena, heads[0], heads[1], heads[2], nullptr,
                                1.0f / std::sqrt(static_cast<float>(s->S / s->H)), false);
  Graph g;
  g.build(out);
  GraphAllocator galloc(dev->buffer_type());
  galloc.alloc(g);
  for (auto _ : state) backend->compute(g);
  state.counters["GFLOPS"] = benchmark::Counter(4.0 * kAttnPositions * kAttnPositions * s->S * 1e-9,
                                                benchmark::Counter::kIsIterationInvariantRate);
}

// A decode-step attention bench's inputs: each tensor in a CPU buffer of its own, seeded values
// (quantized for a quantized type).
struct PlacedTensors {
  TensorArena arena;
  Device* dev = Registry::global().find(kCpuDeviceName);
  std::vector<std::unique_ptr<Buffer>> buffers;

  Tensor* make(DType type, std::initializer_list<int64_t> ne, uint32_t seed) {
    Tensor* x = arena.new_tensor(type, ne, "x");
    buffers.push_back(dev->buffer_type()->alloc(x->nbytes()));
    buffers.back()->place(*x, 0);
    const auto v = random_values(x->nelements(), seed);
    std::vector<uint8_t> bytes(x->nbytes());
    quantize_rows(type, v.data(), bytes.data(), x->nelements() / x->ne[0], x->ne[0]);
    tensor_set(*x, bytes.data(), bytes.size());
    return x;
  }
};

// ---- flash_attn: a decoder step's cross-attention, each batch row against its own window ----
// The batched pipeline's step: one query per (head, row), each row's own cross K/V (f16, or the
// opt-in q8_0) [64, 1500, H, B] (head-major, as the cross cache), through the layers in turn
// (each layer its own K/V, so the step streams all of them as a real step does). Figure: K/V
// bytes per second.
struct CrossShape {
  const char* name;
  int64_t S, H, layers, rows;
  DType kv = DType::F16;
};
// The _deep shapes chain 32 layers of one row (74 MB of f16 K/V, past L3 as a real step's cache
// is once the step's weights went through): a single-row decode step's cross-attention rate.
const CrossShape kCrossShapes[] = {{"tiny_cross_B1", 384, 6, 4, 1},
                                   {"tiny_cross_B8", 384, 6, 4, 8},
                                   {"tiny_cross_B1_deep", 384, 6, 32, 1},
                                   {"tiny_cross_B1_q8", 384, 6, 4, 1, DType::Q8_0},
                                   {"tiny_cross_B8_q8", 384, 6, 4, 8, DType::Q8_0},
                                   {"tiny_cross_B1_deep_q8", 384, 6, 32, 1, DType::Q8_0}};

void bench_cross_attn(benchmark::State& state, const CrossShape* s) {
  PlacedTensors inputs;
  auto backend = inputs.dev->init_backend({bench_threads()});
  const int64_t D = s->S / s->H;
  Tensor* q = inputs.make(DType::F32, {D, 1, s->H, s->rows}, 1);
  for (int64_t l = 0; l < s->layers; ++l) {
    Tensor* k = inputs.make(s->kv, {D, kAttnPositions, s->H, s->rows}, 2 + static_cast<uint32_t>(l));
    Tensor* v = inputs.make(s->kv, {D, kAttnPositions, s->H, s->rows}, 20 + static_cast<uint32_t>(l));
    Tensor* out = ops::flash_attn(inputs.arena, q, k, v, nullptr, 1.0f / std::sqrt(static_cast<float>(D)), false);
    q = ops::reshape(inputs.arena, out, {D, 1, s->H, s->rows});  // [D, H, 1, B] is [D, 1, H, B] in memory
  }
  Graph g;
  g.build(q);
  GraphAllocator galloc(inputs.dev->buffer_type());
  galloc.alloc(g);
  for (auto _ : state) backend->compute(g);
  state.counters["GB/s"] =
      benchmark::Counter(2.0 * static_cast<double>(dtype_row_bytes(s->kv, D)) / static_cast<double>(D) *
                             static_cast<double>(s->layers * s->rows * s->S * kAttnPositions) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

// ---- flash_attn: a decoder step's self-attention over the KV cache slots ----
// Each batch row's keys and values in its own slot of the layer's cache [S, n_ctx, slots] (f16),
// a key's heads side by side, read through the step's strided view [D, n_keys, H, B] as the
// batched step does (decoder.cpp). Four layers, one query per (head, row). Figure: K/V bytes per
// second.
// The _cold shapes read 64 MiB between runs (untimed), as a real step's weights and cross K/V
// leave the caches, so the slots come from memory.
struct SelfShape {
  const char* name;
  int64_t S, H, layers, rows, n_keys;
  bool cold = false;
};
const SelfShape kSelfShapes[] = {{"tiny_self_B1_k65", 384, 6, 4, 1, 65},
                                 {"tiny_self_B8_k65", 384, 6, 4, 8, 65},
                                 {"tiny_self_B8_k224", 384, 6, 4, 8, 224},
                                 {"tiny_self_B1_k65_cold", 384, 6, 4, 1, 65, true},
                                 {"tiny_self_B8_k65_cold", 384, 6, 4, 8, 65, true},
                                 {"tiny_self_B8_k224_cold", 384, 6, 4, 8, 224, true}};

void bench_self_attn(benchmark::State& state, const SelfShape* s) {
  constexpr int64_t kTextCtx = 448;
  PlacedTensors inputs;
  auto backend = inputs.dev->init_backend({bench_threads()});
  const int64_t D = s->S / s->H;
  Tensor* q = inputs.make(DType::F32, {D, 1, s->H, s->rows}, 1);
  for (int64_t l = 0; l < s->layers; ++l) {
    Tensor* kc = inputs.make(DType::F16, {s->S, kTextCtx, s->rows}, 2 + static_cast<uint32_t>(l));
    Tensor* vc = inputs.make(DType::F16, {s->S, kTextCtx, s->rows}, 20 + static_cast<uint32_t>(l));
    auto heads = [&](Tensor* c) {
      return ops::view(inputs.arena, c, {D, s->n_keys, s->H, s->rows},
                       {c->nb[1], dtype_row_bytes(c->type, D), c->nb[2]}, 0);
    };
    const float scale = 1.0f / std::sqrt(static_cast<float>(D));
    Tensor* out = ops::flash_attn(inputs.arena, q, heads(kc), heads(vc), nullptr, scale, false);
    q = ops::reshape(inputs.arena, out, {D, 1, s->H, s->rows});
  }
  Graph g;
  g.build(q);
  GraphAllocator galloc(inputs.dev->buffer_type());
  galloc.alloc(g);
  std::vector<uint8_t> evict(s->cold ? size_t{64} << 20 : 0, 1);
  uint64_t sink = 0;
  for (auto _ : state) {
    if (s->cold) {
      state.PauseTiming();
      for (size_t i = 0; i < evict.size(); i += 64) sink += evict[i];
      state.ResumeTiming();
    }
    backend->compute(g);
  }
  benchmark::DoNotOptimize(sink);
  state.counters["GB/s"] =
      benchmark::Counter(2.0 * 2.0 * static_cast<double>(s->layers * s->rows * s->S * s->n_keys) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

// memcpy of 256 MiB split over the same number of threads as the products use.
void bench_memcpy(benchmark::State& state) {
  std::vector<uint8_t> src(kCopyBytes, 1), dst(kCopyBytes, 0);
  const int nt = bench_threads();
  const size_t part = kCopyBytes / static_cast<size_t>(nt);
  for (auto _ : state) {
    if (nt == 1) {
      std::memcpy(dst.data(), src.data(), kCopyBytes);
    } else {
      std::vector<std::thread> ts;
      for (int t = 0; t < nt; ++t)
        ts.emplace_back([&, t] { std::memcpy(dst.data() + t * part, src.data() + t * part, part); });
      for (auto& th : ts) th.join();
    }
    benchmark::DoNotOptimize(dst.data());
  }
  state.counters["GB/s"] =
      benchmark::Counter(static_cast<double>(kCopyBytes) * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// ---- decode_batch: B sequences' step as one graph (beam search, best-of) ------------------
//
// A runner on a test model of a preset and weight type (written once to $TMPDIR), its cache
// holding n_past = 64 positions in every slot; one iteration is one decode_batch step of B rows
// (slots 0..B-1) at position 64. The summary sets each B beside B = 1 (target: B = 5 <= 2x).

constexpr int kBatchNPast = 64;
const int kBatchRows[] = {1, 2, 5, 8};
struct BatchModel {
  const char* preset;
  DType type;
  DType cross = DType::F16;  // the cross-attention cache's type
};
const BatchModel kBatchModels[] = {
    {"tiny", DType::F16}, {"tiny", DType::Q5_0}, {"base", DType::F16}, {"base", DType::Q5_0}};

struct BatchSetup {
  const BatchModel* model;
  std::string path;
  std::unique_ptr<ModelFile> file;
  std::unique_ptr<Backend> backend;
  std::unique_ptr<WhisperRunner> runner;

  explicit BatchSetup(const BatchModel& m) : model(&m) {
    TestModelOptions o;
    test_model_preset(m.preset, &o.hparams);
    o.weight_type = m.type;
    const char* tmp = std::getenv("TMPDIR");
    path = std::string(tmp && *tmp ? tmp : "/tmp") + "/hark-bench-" + m.preset + "-" + dtype_name(m.type) + ".bin";
    write_test_model(o, path);
    file = ModelFile::open(path);
    backend = Registry::global().find(kCpuDeviceName)->init_backend({bench_threads()});
    RunnerOptions ro;
    ro.cross_kv_type = m.cross;
    runner = std::make_unique<WhisperRunner>(*file, *backend, ro);
    runner->set_n_sequences(8);
    // The cross K/V of a silent window, then 64 positions in slot 0, forked to every slot.
    const HParams& hp = file->hparams();
    runner->encode(std::vector<float>(static_cast<size_t>(2 * hp.n_audio_ctx * hp.n_mels), -1.5f));
    std::vector<int32_t> prefix(kBatchNPast);
    for (int i = 0; i < kBatchNPast; ++i) prefix[static_cast<size_t>(i)] = i;
    std::vector<float> logits;
    runner->decode(prefix, 0, &logits);
    for (int s = 1; s < 8; ++s) runner->copy_sequence(0, s, kBatchNPast);
  }
  ~BatchSetup() { std::remove(path.c_str()); }
};

BatchSetup& batch_setup_for(const BatchModel& m) {
  static std::unique_ptr<BatchSetup> current;  // one model at a time
  if (!current || current->model != &m) {
    current.reset();
    current = std::make_unique<BatchSetup>(m);
  }
  return *current;
}

std::string batch_name(const BatchModel& m, int rows) {
  return std::string("decode_batch/") + m.preset + "/" + dtype_name(m.type) +
         (rows ? "/B" + std::to_string(rows) : "/decode");
}

void bench_decode_batch(benchmark::State& state, const BatchModel* m, int rows) {
  BatchSetup& st = batch_setup_for(*m);
  std::vector<int32_t> tokens(static_cast<size_t>(rows));
  std::vector<int> seqs(static_cast<size_t>(rows));
  for (int b = 0; b < rows; ++b) {
    tokens[static_cast<size_t>(b)] = 1000 + b;
    seqs[static_cast<size_t>(b)] = b;
  }
  std::vector<float> logits;
  if (rows == 0) {  // decode(): the single-sequence step, for comparison with B1
    tokens = {1000};
    for (auto _ : state) st.runner->decode(tokens, kBatchNPast, &logits);
    return;
  }
  for (auto _ : state) st.runner->decode_batch(tokens, seqs, kBatchNPast, &logits);
  state.counters["ms/row"] = benchmark::Counter(
      static_cast<double>(rows) * 1e-3, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

// Keeps each run's seconds per iteration for the summary, and prints as usual.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.iterations <= 0) continue;
      std::string name = r.benchmark_name();
      const std::string suffix = "/real_time";
      if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0)
        name.resize(name.size() - suffix.size());
      // One thread: its CPU time is the work, unaffected by other processes taking the cores.
      const double t = bench_threads() == 1 ? r.cpu_accumulated_time : r.real_accumulated_time;
      seconds_[name] = t / static_cast<double>(r.iterations);
    }
    ConsoleReporter::ReportRuns(runs);
  }
  const double* find(const std::string& name) const {
    const auto it = seconds_.find(name);
    return it == seconds_.end() ? nullptr : &it->second;
  }

 private:
  std::map<std::string, double> seconds_;
};

std::string mul_mat_name(DType t, const Shape& s, const char* impl) {
  return std::string("mul_mat/") + impl + "/" + dtype_name(t) + "/" + shape_label(s);
}

// What the host does with one row of logits per step (multilingual vocabulary, timestamps on,
// mid-window): the timestamp rules, the token choice (argmax, or a draw at T = 0.5) and the
// log-softmax its log-probability is read from. A beam or best-of step does this once per row.
void bench_host_row(benchmark::State& state, bool sampled) {
  HParams hp{};
  hp.n_vocab = 51865;
  const SpecialTokens st = special_tokens(hp);
  decode::WindowRequest req;
  req.temperature = sampled ? 0.5f : 0.0f;
  req.rules.suppress = decode::default_suppressed(st);
  std::mt19937 gen(7);
  std::normal_distribution<float> nd(0.0f, 3.0f);
  std::vector<float> base(static_cast<size_t>(st.n_vocab));
  for (float& v : base) v = nd(gen);
  decode::WindowTokens w;
  w.tokens = {st.timestamp_begin, 1000, 2000};  // an open segment with text
  std::vector<float> row;
  decode::Rng rng{1};
  for (auto _ : state) {
    row = base;
    decode::WindowTokens cur = w;
    benchmark::DoNotOptimize(decode::choose_token(st, req, row, sampled ? &rng : nullptr, cur));
  }
}

void print_summary(const SummaryReporter& rep) {
  std::printf("\nsummary (%s; %d thread%s, %s time; %s kernels)\n",
              Registry::global().find(kCpuDeviceName)->description().c_str(), bench_threads(),
              bench_threads() == 1 ? "" : "s", bench_threads() == 1 ? "cpu" : "wall",
              cpu::simd_level_name(cpu::best_simd_level()));
  for (const Shape& s : kShapes) {
    const double flops = 2.0 * s.M * s.K * s.N;
    if (!s.decoder) {
      const double* blas = rep.find("sgemm/openblas/f32/" + shape_label(s));
      for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q5_0, DType::Q4_0}) {
        const double* own = rep.find(mul_mat_name(t, s, "own"));
        const double* viab = rep.find(mul_mat_name(t, s, "blas"));
        if (!own) continue;
        std::printf("  %-30s %-5s own %6.1f GFLOP/s", shape_label(s).c_str(), dtype_name(t), flops / *own * 1e-9);
        if (viab) std::printf(" | via sgemm %6.1f", flops / *viab * 1e-9);
        if (blas) {
          const double ratio = *blas / *own;
          const bool target = t == DType::F32 || t == DType::F16;
          std::printf(" | vs sgemm %6.1f: %5.1f%%%s", flops / *blas * 1e-9, 100.0 * ratio,
                      target ? (ratio >= 0.8 ? "  (target >= 80%: met)" : "  (target >= 80%: MISSED)") : "");
        }
        std::printf("\n");
      }
    } else {
      const double* copy = rep.find("memcpy/256MiB/tiny_large");
      for (DType t : kTypes) {
        const double* own = rep.find(mul_mat_name(t, s, "own"));
        if (!own) continue;
        const double bytes = static_cast<double>(dtype_row_bytes(t, s.K)) * s.N;
        std::printf("  %-30s %-5s %8.1f us, weights %6.1f MB", shape_label(s).c_str(), dtype_name(t), *own * 1e6,
                    bytes * 1e-6);
        if (copy) {
          const double bw = kCopyBytes / *copy;
          const double ratio = *own / (bytes / bw);
          std::printf(" | at memcpy speed %8.1f us: %4.2fx%s", bytes / bw * 1e6, ratio,
                      ratio <= 1.3 ? "  (target <= 1.3x: met)" : "  (target <= 1.3x: MISSED)");
        }
        std::printf("\n");
      }
    }
  }
  for (const BatchModel& m : kBatchModels) {
    const double* one = rep.find(batch_name(m, 1));
    if (!one) continue;
    std::printf("  decode_batch %-4s %-5s n_past %d:", m.preset, dtype_name(m.type), kBatchNPast);
    if (const double* t = rep.find(batch_name(m, 0))) std::printf("  decode() %6.2f ms", *t * 1e3);
    for (int rows : kBatchRows)
      if (const double* t = rep.find(batch_name(m, rows)))
        std::printf("  B%d %6.2f ms (%4.2fx)", rows, *t * 1e3, *t / *one);
    if (const double* five = rep.find(batch_name(m, 5)))
      std::printf("%s", *five / *one <= 2.0 ? "  (target B5 <= 2x: met)" : "  (target B5 <= 2x: MISSED)");
    std::printf("\n");
  }
  if (const double* copy = rep.find("memcpy/256MiB/tiny_large"))
    std::printf("  memcpy bandwidth (%d threads): %.1f GB/s\n", bench_threads(), kCopyBytes / *copy * 1e-9);
}

}  // namespace

// A model of decode_batch and decode_chunks: a test-model preset and its weight type.
struct StepModel {
  std::string preset;
  DType type;
  DType cross = DType::F16;
};

// The arguments of decode_batch and decode_chunks: preset[:type] (f16 when no type) and
// --rows=B,B,... (the batch sizes; 1 is always measured, as the reference), --cross-kv=q8_0 (the
// cross-attention cache's type for every model). False, with the reason on stderr, for an
// unknown preset or type or a bad size.
bool parse_step_args(int argc, char** argv, std::vector<StepModel>* models, std::vector<int>* rows, DType* cross) {
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a.rfind("--cross-kv=", 0) == 0) {
      const std::string t = a.substr(11);
      if (t != "f16" && t != "q8_0") {
        std::fprintf(stderr, "--cross-kv: '%s' is not f16 or q8_0\n", t.c_str());
        return false;
      }
      *cross = t == "q8_0" ? DType::Q8_0 : DType::F16;
      continue;
    }
    if (a.rfind("--rows=", 0) == 0) {
      rows->clear();
      std::stringstream list(a.substr(7));
      for (std::string item; std::getline(list, item, ',');) {
        char* end = nullptr;
        const long b = std::strtol(item.c_str(), &end, 10);
        if (item.empty() || *end != '\0' || b < 1 || b > 64) {
          std::fprintf(stderr, "--rows: '%s' is not a batch size from 1 to 64\n", item.c_str());
          return false;
        }
        rows->push_back(static_cast<int>(b));
      }
      continue;
    }
    const size_t colon = a.find(':');
    const std::string preset = a.substr(0, colon), type_name = colon == std::string::npos ? "f16" : a.substr(colon + 1);
    StepModel m{preset, DType::F16};
    bool known = false;
    for (DType t : kTypes)
      if (type_name == dtype_name(t)) m.type = t, known = true;
    HParams probe;
    if (!known || !test_model_preset(preset, &probe)) {
      std::fprintf(stderr, "unknown preset or type %s:%s\n", preset.c_str(), type_name.c_str());
      return false;
    }
    models->push_back(m);
  }
  return !rows->empty();
}

// `bench_kernels decode_batch [preset:type ...]`: model/runner_bench.h's bench_batch_steps.
int run_decode_batch_steps(int argc, char** argv) {
  std::vector<int> rows = {1, 2, 5, 8};
  std::vector<StepModel> models;
  DType cross = DType::F16;
  if (!parse_step_args(argc, argv, &models, &rows, &cross)) return 1;
  if (models.empty())
    models = {{"tiny", DType::F16}, {"tiny", DType::Q5_0}, {"base", DType::F16}, {"base", DType::Q5_0}};
  std::printf("decode_batch steps at n_past %d, %d thread%s (%s kernels), %s time; fastest / median of 30 per size\n",
              kBatchNPast, bench_threads(), bench_threads() == 1 ? "" : "s",
              cpu::simd_level_name(cpu::best_simd_level()), bench_threads() == 1 ? "cpu" : "wall");
  for (const StepModel& sm : models) {
    BatchModel m{nullptr, sm.type, cross};
    m.preset = sm.preset.c_str();
    BatchSetup st(m);
    BatchStepOptions o;
    o.n_past = kBatchNPast;
    o.cpu_time = bench_threads() == 1;
    o.rows = rows;
    std::vector<float> logits;
    const std::vector<int32_t> one = {1000};
    // decode(): the single-sequence step beside the 1-row batch.
    std::vector<double> single;
    auto now_ms = [&] {  // the clock bench_batch_steps uses
      if (o.cpu_time) {
        timespec ts{};
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) * 1e-6;
      }
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
    for (int i = 0; i < 30; ++i) {
      const double t0 = now_ms();
      st.runner->decode(one, kBatchNPast, &logits);
      single.push_back(now_ms() - t0);
    }
    std::sort(single.begin(), single.end());
    std::printf("  %-4s %-5s decode() %6.2f ms |", sm.preset.c_str(), dtype_name(sm.type), single.front());
    const char* target = "";  // B5 <= 2 x B1, when 5 is among the sizes
    for (const BatchStepFigure& f : bench_batch_steps(*st.runner, o)) {
      std::printf("  B%d %6.2f ms (median %6.2f) %4.2fx", f.rows, f.min_ms, f.median_ms, f.ratio);
      if (f.rows == 5) target = f.ratio <= 2.0 ? "  (B5 <= 2x: met)" : "  (B5 <= 2x: MISSED)";
    }
    std::printf("%s\n", target);
  }
  return 0;
}

// What this machine allows, measured in the same run with the bench's threads: the rate of
// hark's own f32 GEMM (the tiny encoder's MLP product, f16 weights: the most multiply-adds a
// second any product here reaches) and the rate a one-row product streams f16 weights from
// memory (tiny's logits, cold copies). Fastest of a few passes each.
struct MachineRates {
  double gfma;  // 1e9 multiply-adds per second
  double gbps;  // 1e9 weight bytes per second
};

MachineRates measure_machine() {
  cpu::set_gemm_impl(cpu::GemmImpl::Own);
  auto fastest_ms = [](MulMatSetup& st, int passes) {
    double best = 1e30;
    for (int i = 0; i < passes; ++i)
      for (auto& g : st.graphs) {
        const auto t0 = std::chrono::steady_clock::now();
        st.backend->compute(*g);
        best = std::min(best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
    return best;
  };
  auto shape = [](const char* name) {
    for (const Shape& s : kShapes)
      if (std::strcmp(s.name, name) == 0) return &s;
    return &kShapes[0];
  };
  MachineRates r{};
  {
    const Shape* s = shape("tiny_enc");
    MulMatSetup st(DType::F16, *s);
    r.gfma = static_cast<double>(s->M * s->K * s->N) / fastest_ms(st, 10) * 1e-6;
  }
  {
    MulMatSetup st(DType::F16, *shape("tiny_dec"));
    r.gbps = static_cast<double>(st.weight_bytes) / fastest_ms(st, 5) * 1e-6;
  }
  return r;
}

// `bench_kernels decode_chunks [preset:type ...]`: decoder steps of B independent chunks (the
// batched long-audio pipeline: row b in slot b against cross window b), B = 1, 4, 8, 16, as
// time per step and decode throughput (rows per second of step). For f16/f32 models it then
// prints what the machine allows a row added to a step: at least its multiply-adds at the GEMM
// rate, or its own cross-attention K/V (f16) at the streaming rate, whichever is longer, and
// from that and the measured B1 step the most B8 can gain over B1.
int run_decode_chunk_steps(int argc, char** argv) {
  std::vector<int> rows = {1, 4, 8, 16};
  std::vector<StepModel> models;
  DType cross = DType::F16;
  if (!parse_step_args(argc, argv, &models, &rows, &cross)) return 1;
  if (models.empty()) models = {{"tiny", DType::F16}, {"base", DType::F16}};
  std::printf(
      "decode steps of B chunks (own cross windows, %s cross K/V) at n_past %d, %d thread%s (%s kernels), "
      "%s time; fastest of 30 per size\n",
      dtype_name(cross), kBatchNPast, bench_threads(), bench_threads() == 1 ? "" : "s",
      cpu::simd_level_name(cpu::best_simd_level()), bench_threads() == 1 ? "cpu" : "wall");
  const MachineRates machine = measure_machine();
  std::printf(
      "  machine, same run: f32 GEMM %.1f GFMA/s (tiny_enc, f16 weights), weights streamed at %.1f GB/s "
      "(tiny_dec, f16, 1 row)\n",
      machine.gfma, machine.gbps);
  for (const StepModel& sm : models) {
    BatchModel m{nullptr, sm.type, cross};
    m.preset = sm.preset.c_str();
    BatchSetup st(m);
    BatchStepOptions o;
    o.n_past = kBatchNPast;
    o.cpu_time = bench_threads() == 1;
    o.own_windows = true;
    o.rows = rows;
    std::printf("  %-4s %-5s", sm.preset.c_str(), dtype_name(sm.type));
    // The 1-row step is timed as the base even when --rows leaves it out: f.ratio is against it.
    double one_ms = 0.0;
    for (const BatchStepFigure& f : bench_batch_steps(*st.runner, o)) {
      const double tps = 1000.0 * f.rows / f.min_ms;
      if (f.ratio > 0) one_ms = f.min_ms / f.ratio;
      std::printf(" | B%d %6.2f ms/step %7.1f tok/s (%4.2fx)", f.rows, f.min_ms, tps,
                  f.ratio > 0 ? f.rows / f.ratio : 0.0);
    }
    std::printf("\n");
    // The same with the rows at different positions (continuous batching's steps).
    o.staggered = true;
    std::printf("  %-4s %-5s", "", "stagg");
    for (const BatchStepFigure& f : bench_batch_steps(*st.runner, o)) {
      if (f.rows == 1) continue;
      const double tps = 1000.0 * f.rows / f.min_ms;
      std::printf(" | B%d %6.2f ms/step %7.1f tok/s (%4.2fx)", f.rows, f.min_ms, tps,
                  one_ms > 0 ? tps * one_ms / 1000.0 : 0.0);
    }
    std::printf("\n");
    if (sm.type != DType::F16 && sm.type != DType::F32) continue;  // quantized rows use int8 dots
    // One row's share of a step: the decoder's products (self q/k/v/out, cross q/out, MLP,
    // logits) and its attention (cross over the window, self over n_past); its cross K/V bytes.
    const HParams& hp = st.file->hparams();
    const double S = hp.n_text_state, L = hp.n_text_layer;
    const double macs = L * 14.0 * S * S + static_cast<double>(hp.n_vocab) * S +
                        L * 2.0 * S * (static_cast<double>(hp.n_audio_ctx) + kBatchNPast);
    const double kv_bytes = L * 2.0 * static_cast<double>(hp.n_audio_ctx) * dtype_row_bytes(cross, S);
    const double compute_ms = macs / machine.gfma * 1e-6, read_ms = kv_bytes / machine.gbps * 1e-6;
    const double row_ms = std::max(compute_ms, read_ms);
    std::printf(
        "    a row adds >= max(%.1f M FMA at the GEMM rate = %.2f ms, %.1f MB cross K/V at the streaming "
        "rate = %.2f ms) to a step: B8 <= 8 x %.2f / (%.2f + 7 x %.2f) = %.2fx B1\n",
        macs * 1e-6, compute_ms, kv_bytes * 1e-6, read_ms, one_ms, one_ms, row_ms,
        8.0 * one_ms / (one_ms + 7.0 * row_ms));
  }
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 2 && std::strcmp(argv[1], "decode_batch") == 0) return run_decode_batch_steps(argc, argv);
  if (argc >= 2 && std::strcmp(argv[1], "decode_chunks") == 0) return run_decode_chunk_steps(argc, argv);
  // google-benchmark 1.7 reads --benchmark_min_time as a plain number; 1.8 also accepts "0.05s".
  // Drop the suffix so one command line works with both.
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> cargs;
  for (std::string& a : args) {
    if (a.rfind("--benchmark_min_time=", 0) == 0 && a.size() > 21 && a.back() == 's') a.pop_back();
    cargs.push_back(a.data());
  }
  int cargc = static_cast<int>(cargs.size());

  for (const Shape& s : kShapes) {
    for (DType t : kTypes) {
      benchmark::RegisterBenchmark(mul_mat_name(t, s, "own").c_str(), bench_mul_mat, t, &s, cpu::GemmImpl::Own)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
      if (!s.decoder && cpu::gemm_blas_available())
        benchmark::RegisterBenchmark(mul_mat_name(t, s, "blas").c_str(), bench_mul_mat, t, &s, cpu::GemmImpl::Blas)
            ->Unit(benchmark::kMillisecond)
            ->UseRealTime();
    }
#ifdef HARK_HAVE_OPENBLAS
    benchmark::RegisterBenchmark(("sgemm/openblas/f32/" + shape_label(s)).c_str(), bench_sgemm, &s)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
#endif
  }
  for (const AttnShape& a : kAttnShapes)
    benchmark::RegisterBenchmark((std::string("flash_attn/") + a.name + "_" + std::to_string(kAttnPositions) + "x" +
                                  std::to_string(a.H) + "x" + std::to_string(a.S / a.H))
                                     .c_str(),
                                 bench_flash_attn, &a)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (const CrossShape& c : kCrossShapes)
    benchmark::RegisterBenchmark((std::string("flash_attn/") + c.name).c_str(), bench_cross_attn, &c)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  for (const SelfShape& c : kSelfShapes)
    benchmark::RegisterBenchmark((std::string("flash_attn/") + c.name).c_str(), bench_self_attn, &c)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime();
  benchmark::RegisterBenchmark("memcpy/256MiB/tiny_large", bench_memcpy)->Unit(benchmark::kMillisecond)->UseRealTime();
  for (const BatchModel& m : kBatchModels)
    for (int rows : {0, 1, 2, 5, 8})
      benchmark::RegisterBenchmark(batch_name(m, rows).c_str(), bench_decode_batch, &m, rows)
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();

  benchmark::RegisterBenchmark("host_row/greedy", bench_host_row, false)->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("host_row/sampled", bench_host_row, true)->Unit(benchmark::kMicrosecond);

  benchmark::Initialize(&cargc, cargs.data());
  if (benchmark::ReportUnrecognizedArguments(cargc, cargs.data())) return 1;
  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  print_summary(reporter);
  benchmark::Shutdown();
  return 0;
}
