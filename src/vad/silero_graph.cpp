#include "vad/silero_graph.h"

#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark::vad {

using namespace ops;

namespace {

constexpr int kStftPad = 64;  // reflection on each side: 512 + 128 = 640 = 4 windows at hop 128
constexpr int kStftHop = 128;
constexpr int kEncoderStride[kSileroEncoderLayers] = {1, 2, 2, 1};  // time steps 4 -> 4 -> 2 -> 1 -> 1

// whisper.cpp's convolutions unfold their input into f16 when the kernel is f16 (and its 1x1
// output conv too), so every product with an f16 weight sees activations rounded to half
// precision. The same rounding here keeps the probabilities within 1e-3 of its (without it the
// gap reaches ~2.4e-3 on frames near the threshold).
Tensor* as_weights_see_it(TensorArena& a, Tensor* w, Tensor* x) {
  return w->type == DType::F16 ? unary(a, x, UnaryOp::RoundF16) : x;
}

// The 640 samples each frame's STFT reads, [640, B].
Tensor* stft_input(TensorArena& a, const SileroHParams& hp, Tensor* frames, Tensor* context) {
  if (!context) return pad_reflect(a, frames, kStftPad, kStftPad);
  HARK_CHECK(context->type == DType::F32 && context->nelements() == kStftPad && hp.n_context == kStftPad,
             "silero: context must be f32 with " + std::to_string(kStftPad) + " samples, got " + context->describe());
  // Frame b's context is frame b - 1's tail; the first frame's is the one carried in.
  const int64_t n_frames = frames->ne[1];
  Tensor* ctx = reshape(a, context, {kStftPad, 1});
  if (n_frames > 1) {
    Tensor* tails = slice(a, frames, 0, hp.n_window - kStftPad, hp.n_window);
    ctx = concat(a, ctx, slice(a, tails, 1, 0, n_frames - 1), 1);
  }
  return pad_reflect(a, concat(a, ctx, frames, 0), 0, kStftPad);
}

}  // namespace

SileroFramesGraph build_silero_frames(TensorArena& a, const SileroWeights& w, const SileroHParams& hp, Tensor* frames,
                                      Tensor* h, Tensor* c, Tensor* context) {
  const int64_t hidden = hp.lstm_hidden_size;
  HARK_CHECK(
      frames->type == DType::F32 && frames->ne[0] == hp.n_window && frames->ne[2] == 1 && frames->ne[3] == 1 &&
          frames->is_contiguous(),
      "silero: frames must be contiguous f32 [" + std::to_string(hp.n_window) + ", B], got " + frames->describe());
  HARK_CHECK(h->nelements() == hidden && c->nelements() == hidden,
             "silero: LSTM state must have " + std::to_string(hidden) + " values");
  const int64_t n_frames = frames->ne[1];
  HARK_CHECK(n_frames >= 1, "silero: a block needs at least one frame");

  // STFT: each padded frame as one input channel, [1, 640, B]; the basis's output channels are the
  // 129 real parts, then the 129 imaginary parts.
  // (Rounded while the samples are rows of 640: as [1, 640, B] every value would be a row of one.)
  Tensor* x = as_weights_see_it(a, w.stft_basis, stft_input(a, hp, frames, context));
  x = reshape(a, x, {1, x->ne[0], n_frames});
  Tensor* stft = conv1d(a, w.stft_basis, x, kStftHop, 0);  // [258, 4, B]
  Tensor* re = slice(a, stft, 0, 0, kSileroStftBins);
  Tensor* im = slice(a, stft, 0, kSileroStftBins, 2 * kSileroStftBins);
  x = unary(a, add(a, mul(a, re, re), mul(a, im, im)), UnaryOp::Sqrt);  // [129, 4, B]

  for (int i = 0; i < kSileroEncoderLayers; ++i) {
    Tensor* k = w.enc_w[static_cast<size_t>(i)];
    x = relu(a, conv1d(a, k, as_weights_see_it(a, k, x), kEncoderStride[i], 1, w.enc_b[static_cast<size_t>(i)]));
  }
  HARK_CHECK(x->ne[1] == 1, "silero: the encoder should end with one time step, got " + x->describe());
  x = reshape(a, x, {x->ne[0], n_frames});  // [128, B]

  // LSTM. The input half of every frame's gate pre-activations at once, [4 * hidden, B], in
  // PyTorch's gate order i, f, g, o; then the recurrence, frame by frame.
  Tensor* gates_in = mul_mat_bias(a, w.lstm_w_ih, x, w.lstm_b_ih);
  Tensor* h_t = reshape(a, h, {hidden, 1});
  Tensor* c_t = reshape(a, c, {hidden, 1});
  Tensor* hs = nullptr;  // [hidden, frames so far]
  for (int64_t t = 0; t < n_frames; ++t) {
    Tensor* gates = add(a, slice(a, gates_in, 1, t, t + 1), mul_mat_bias(a, w.lstm_w_hh, h_t, w.lstm_b_hh));
    auto gate = [&](int k) { return slice(a, gates, 0, k * hidden, (k + 1) * hidden); };
    Tensor* ig = sigmoid(a, gate(0));
    Tensor* fg = sigmoid(a, gate(1));
    Tensor* gg = unary(a, gate(2), UnaryOp::Tanh);
    Tensor* og = sigmoid(a, gate(3));
    c_t = add(a, mul(a, fg, c_t), mul(a, ig, gg));
    h_t = mul(a, og, unary(a, c_t, UnaryOp::Tanh));
    hs = hs ? concat(a, hs, h_t, 1) : h_t;
  }

  SileroFramesGraph out;
  out.h_new = h_t;
  out.c_new = c_t;
  // Decoder: ReLU, a 1x1 convolution to one channel (a dot product with the kernel), sigmoid.
  Tensor* logits =
      mul_mat_bias(a, reshape(a, w.out_w, {hidden, 1}), as_weights_see_it(a, w.out_w, relu(a, hs)), w.out_b);
  out.probs = sigmoid(a, logits);
  if (context) out.context_new = slice(a, frames, 0, hp.n_window - hp.n_context, hp.n_window);
  if (context && n_frames > 1) out.context_new = slice(a, out.context_new, 1, n_frames - 1, n_frames);
  out.probs->name = "silero.probs";
  out.h_new->name = "silero.h";
  out.c_new->name = "silero.c";
  return out;
}

}  // namespace hark::vad
