#include "vad/silero_graph.h"

#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark::vad {

using namespace ops;

namespace {

constexpr int kStftPad = 64;     // reflection on each side: 512 + 128 = 640 = 4 windows at hop 128
constexpr int kStftHop = 128;
constexpr int kEncoderStride[kSileroEncoderLayers] = {1, 2, 2, 1};  // time steps 4 -> 4 -> 2 -> 1 -> 1

// whisper.cpp's convolutions unfold their input into f16 when the kernel is f16 (and its 1x1
// output conv too), so every product with an f16 weight sees activations rounded to half
// precision. The same rounding here keeps the probabilities within 1e-3 of its (without it the
// gap reaches ~2.4e-3 on frames near the threshold).
Tensor* as_weights_see_it(TensorArena& a, Tensor* w, Tensor* x) {
  return w->type == DType::F16 ? unary(a, x, UnaryOp::RoundF16) : x;
}

}  // namespace

SileroFrameGraph build_silero_frame(TensorArena& a, const SileroWeights& w, const SileroHParams& hp, Tensor* frame,
                                    Tensor* h, Tensor* c, Tensor* context) {
  const int64_t hidden = hp.lstm_hidden_size;
  HARK_CHECK(frame->type == DType::F32 && frame->nelements() == hp.n_window,
             "silero: frame must be f32 with " + std::to_string(hp.n_window) + " samples, got " + frame->describe());
  HARK_CHECK(h->nelements() == hidden && c->nelements() == hidden,
             "silero: LSTM state must have " + std::to_string(hidden) + " values");

  // STFT: the padded frame as one input channel, [1, 640]; the basis's output channels are the
  // 129 real parts, then the 129 imaginary parts.
  Tensor* x = reshape(a, frame, {hp.n_window});
  if (context) {
    HARK_CHECK(context->type == DType::F32 && context->nelements() == kStftPad,
               "silero: context must be f32 with " + std::to_string(kStftPad) + " samples, got " + context->describe());
    x = pad_reflect(a, concat(a, reshape(a, context, {kStftPad}), x, 0), 0, kStftPad);
  } else {
    x = pad_reflect(a, x, kStftPad, kStftPad);
  }
  x = reshape(a, x, {1, x->ne[0]});
  Tensor* stft = conv1d(a, w.stft_basis, as_weights_see_it(a, w.stft_basis, x), kStftHop, 0);  // [258, 4]
  Tensor* re = slice(a, stft, 0, 0, kSileroStftBins);
  Tensor* im = slice(a, stft, 0, kSileroStftBins, 2 * kSileroStftBins);
  x = unary(a, add(a, mul(a, re, re), mul(a, im, im)), UnaryOp::Sqrt);  // [129, 4]

  for (int i = 0; i < kSileroEncoderLayers; ++i) {
    Tensor* k = w.enc_w[static_cast<size_t>(i)];
    x = conv1d(a, k, as_weights_see_it(a, k, x), kEncoderStride[i], 1);
    x = relu(a, add(a, x, w.enc_b[static_cast<size_t>(i)]));
  }
  x = slice(a, x, 1, 0, 1);  // the first time step (the only one after strides 2, 2)

  // LSTM cell. Gate pre-activations [4 * hidden, 1], in PyTorch's order i, f, g, o.
  Tensor* gates = add(a, add(a, mul_mat(a, w.lstm_w_ih, x), w.lstm_b_ih),
                      add(a, mul_mat(a, w.lstm_w_hh, reshape(a, h, {hidden, 1})), w.lstm_b_hh));
  auto gate = [&](int k) { return slice(a, gates, 0, k * hidden, (k + 1) * hidden); };
  Tensor* ig = sigmoid(a, gate(0));
  Tensor* fg = sigmoid(a, gate(1));
  Tensor* gg = unary(a, gate(2), UnaryOp::Tanh);
  Tensor* og = sigmoid(a, gate(3));
  SileroFrameGraph out;
  out.c_new = add(a, mul(a, fg, reshape(a, c, {hidden, 1})), mul(a, ig, gg));
  out.h_new = mul(a, og, unary(a, out.c_new, UnaryOp::Tanh));

  // Decoder: ReLU, a 1x1 convolution to one channel (a dot product with the kernel), sigmoid.
  Tensor* logit = mul_mat(a, reshape(a, w.out_w, {hidden, 1}), as_weights_see_it(a, w.out_w, relu(a, out.h_new)));
  out.prob = sigmoid(a, add(a, logit, w.out_b));
  out.prob->name = "silero.prob";
  out.h_new->name = "silero.h";
  out.c_new->name = "silero.c";
  return out;
}

}  // namespace hark::vad
