#include "vad/silero_vad.h"

#include <algorithm>
#include <cstring>

#include "backend/device.h"
#include "backend/registry.h"
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
  frame_ = arena_.new_tensor(DType::F32, {hp.n_window}, "silero.frame");
  h_ = arena_.new_tensor(DType::F32, {hidden}, "silero.h_state");
  c_ = arena_.new_tensor(DType::F32, {hidden}, "silero.c_state");
  if (carry_context) context_ = arena_.new_tensor(DType::F32, {hp.n_context}, "silero.context");
  // The leaves live in the device's memory, at offsets aligned for its kernels.
  BufferType* bt = device->buffer_type();
  const size_t align = std::max<size_t>(bt->alignment(), 64);
  auto up = [align](size_t x) { return (x + align - 1) / align * align; };
  const size_t off_h = up(frame_->nbytes()), off_c = off_h + up(h_->nbytes());
  const size_t off_ctx = off_c + up(c_->nbytes());
  io_ = bt->alloc(off_ctx + (context_ ? up(context_->nbytes()) : 0));
  io_->place(*frame_, 0);
  io_->place(*h_, off_h);
  io_->place(*c_, off_c);
  if (context_) io_->place(*context_, off_ctx);

  const SileroFrameGraph g = build_silero_frame(arena_, model_->weights(), hp, frame_, h_, c_, context_);
  prob_ = g.prob;
  graph_.build(prob_);
  // The new state overwrites the old after everything that reads the old (graph order).
  graph_.build(ops::copy(arena_, g.h_new, h_));
  graph_.build(ops::copy(arena_, g.c_new, c_));
  if (context_)  // the frame's tail is the next frame's context
    graph_.build(ops::copy(arena_, ops::slice(arena_, frame_, 0, hp.n_window - hp.n_context, hp.n_window), context_));
  alloc_ = std::make_unique<GraphAllocator>(bt);
  alloc_->alloc(graph_);
  reset();
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

float SileroVad::process(const float* frame) {
  tensor_set(*frame_, frame, static_cast<size_t>(n_window()) * sizeof(float));
  HARK_CHECK(backend_->compute(graph_) == ComputeStatus::Ok, "silero: compute aborted");
  float p = 0.0f;
  tensor_get(*prob_, &p, sizeof p);
  return p;
}

std::vector<float> SileroVad::detect(const float* samples, size_t n) {
  reset();
  const size_t w = static_cast<size_t>(n_window());
  std::vector<float> probs;
  probs.reserve((n + w - 1) / w);
  std::vector<float> last(w, 0.0f);
  for (size_t at = 0; at < n; at += w) {
    if (n - at >= w) {
      probs.push_back(process(samples + at));
    } else {
      std::copy(samples + at, samples + n, last.begin());
      probs.push_back(process(last.data()));
    }
  }
  return probs;
}

}  // namespace hark::vad
