// The Silero VAD network as a graph of hark ops, over a block of consecutive 512-sample frames.
//
// frame [512] -> reflection pad 64 | 64 -> [640] -> STFT as a conv1d with the stored Fourier basis
// (kernel 256, stride 128) -> [258, 4] -> magnitude sqrt(re^2 + im^2) -> [129, 4] -> encoder:
// 4 x (conv1d kernel 3, padding 1, strides 1, 2, 2, 1 + bias, ReLU) -> [128, 1] -> LSTM cell
// (gates i, f, g, o from W_ih x + b_ih + W_hh h + b_hh; c' = f c + i g; h' = o tanh c') -> ReLU
// -> 1x1 conv to one channel + bias -> sigmoid: the frame's speech probability.
//
// Everything before the recurrence depends on the frame alone, so a block of B frames goes through
// it as one batch: each product reads its weights once for all B frames (at B = 1 the STFT basis,
// the encoder kernels and W_ih were most of a frame's time, read again for every frame). Only the
// LSTM step (W_hh h and the gates) and its state run frame after frame; the output layer takes
// the B hidden states together.
//
// Two front ends give the 640 samples the STFT reads. whisper.cpp's (whose probabilities hark
// matches, the default): the frame padded by reflecting its own edges, 64 | 64. The upstream
// Silero package's: the previous frame's last 64 samples (n_context) in front of the frame and
// 64 reflected behind. Activations are [channels, time] (channels innermost), the layout conv1d
// takes, so no transposes sit between the layers.
#pragma once
#include "runtime/tensor.h"
#include "vad/silero_file.h"

namespace hark::vad {

struct SileroFramesGraph {
  Tensor* probs = nullptr;  // f32 [1, B]: each frame's P(speech)
  Tensor* h_new = nullptr;  // f32 [hidden, 1]: the LSTM state after the block's last frame
  Tensor* c_new = nullptr;
  Tensor* context_new = nullptr;  // upstream front end: the last frame's tail, the next context
};

// frames: f32 [n_window, B], B consecutive frames; h, c: f32 [hidden], the state before the
// first; context: nullptr for whisper.cpp's front end, else f32 [n_context], the samples before
// the first frame (upstream).
SileroFramesGraph build_silero_frames(TensorArena& a, const SileroWeights& w, const SileroHParams& hp, Tensor* frames,
                                      Tensor* h, Tensor* c, Tensor* context = nullptr);

}  // namespace hark::vad
