#include "vad/silero_vad.h"

#include <algorithm>
#include <cstring>

#include "backend/device.h"
#include "backend/device_registry.h"
#include "runtime/error.h"
#include "runtime/ops.h"
#include "vad/silero_graph.h"

namespace hark::vad {

SileroVad::SileroVad(std::shared_ptr<const SileroFile> model, int n_threads, Device* device, bool carry_context)
    : model_(std::move(model)) {
  HARK_CHECK(model_ != nullptr, "silero: no model");
  if (device == nullptr) device = Registry::global().find(kCpuDeviceName);
  HARK_CHECK(device != nullptr, "silero: no CPU device");
  HARK_CHECK(n_threads >= 0, "silero: n_threads must be >= 0, got " + std::to_string(n_threads));
  BackendParams params;
  params.n_threads = n_threads;
  backend_ = device->init_backend(params);

  const SileroHParams& hp = model_->hparams();
  const int64_t hidden = hp.lstm_hidden_size;
  one_.frames = arena_.new_tensor(DType::F32, {hp.n_window, 1}, "silero.frame");
  block_.frames = arena_.new_tensor(DType::F32, {hp.n_window, kBlockFrames}, "silero.frames");
  h_ = arena_.new_tensor(DType::F32, {hidden}, "silero.h_state");
  c_ = arena_.new_tensor(DType::F32, {hidden}, "silero.c_state");
  if (carry_context) context_ = arena_.new_tensor(DType::F32, {hp.n_context}, "silero.context");
  // The leaves live in the device's memory, at offsets aligned for its kernels.
  BufferType* bt = device->buffer_type();
  const size_t align = std::max<size_t>(bt->alignment(), 64);
  auto padded = [align](const Tensor* t) { return (t->nbytes() + align - 1) / align * align; };
  std::vector<Tensor*> leaves = {one_.frames, block_.frames, h_, c_};
  if (context_) leaves.push_back(context_);
  size_t total = 0;
  for (Tensor* t : leaves) total += padded(t);
  io_ = bt->alloc(total);
  size_t at = 0;
  for (Tensor* t : leaves) {
    io_->place(*t, at);
    at += padded(t);
  }
  plan(one_, bt);
  plan(block_, bt);
  reset();
}

void SileroVad::plan(Plan& p, BufferType* bt) {
  const SileroHParams& hp = model_->hparams();
  const SileroFramesGraph g = build_silero_frames(arena_, model_->weights(), hp, p.frames, h_, c_, context_);
  p.probs = g.probs;
  p.graph.build(p.probs);
  // The new state overwrites the old after everything that reads the old (graph order).
  p.graph.build(ops::copy(arena_, g.h_new, h_));
  p.graph.build(ops::copy(arena_, g.c_new, c_));
  if (context_) p.graph.build(ops::copy(arena_, g.context_new, context_));
  p.alloc = std::make_unique<GraphAllocator>(bt);
  p.alloc->alloc(p.graph);
}

SileroVad::~SileroVad() = default;

void SileroVad::reset() {
  for (Tensor* t : {h_, c_, context_}) {
    if (!t) continue;
    const std::vector<float> zeros(static_cast<size_t>(t->nelements()), 0.0f);
    tensor_set(*t, zeros.data(), zeros.size() * sizeof(float));
  }
}

static std::vector<float> read_back(const Tensor& t) {
  std::vector<float> v(static_cast<size_t>(t.nelements()));
  tensor_get(t, v.data(), v.size() * sizeof(float));
  return v;
}

std::vector<float> SileroVad::h() const { return read_back(*h_); }
std::vector<float> SileroVad::c() const { return read_back(*c_); }

void SileroVad::run(const Plan& p, const float* frames, float* probs) {
  const size_t n = static_cast<size_t>(p.frames->ne[1]);
  tensor_set(*p.frames, frames, n * static_cast<size_t>(n_window()) * sizeof(float));
  HARK_CHECK(backend_->compute(p.graph) == ComputeStatus::Ok, "silero: compute aborted");
  tensor_get(*p.probs, probs, n * sizeof(float));
}

float SileroVad::process(const float* frame) {
  float p = 0.0f;
  run(one_, frame, &p);
  return p;
}

void SileroVad::process(const float* frames, size_t n_frames, float* probs) {
  const size_t w = static_cast<size_t>(n_window()), block = static_cast<size_t>(kBlockFrames);
  size_t i = 0;
  for (; n_frames - i >= block; i += block) run(block_, frames + i * w, probs + i);
  for (; i < n_frames; ++i) run(one_, frames + i * w, probs + i);
}

std::vector<float> SileroVad::detect(const float* samples, size_t n) {
  reset();
  const size_t w = static_cast<size_t>(n_window());
  std::vector<float> probs((n + w - 1) / w);
  const size_t whole = n / w;
  process(samples, whole, probs.data());
  if (whole < probs.size()) {
    std::vector<float> last(w, 0.0f);
    std::copy(samples + whole * w, samples + n, last.begin());
    probs.back() = process(last.data());
  }
  return probs;
}

}  // namespace hark::vad
