// The tensors of a Whisper model: which names a file must hold, with what shapes and types (the
// single table the loader validates against and make-test-model writes from), and
// WhisperWeights, the loaded tensors arranged for the encoder and decoder graphs.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/hparams.h"
#include "runtime/tensor.h"

namespace hark {

// What a tensor is for decides which element types it may have.
enum class TensorKind {
  Matrix,      // 2-D projection weight (and the token embedding): the file's weight type, f16 or f32
  Conv,        // conv1/conv2 kernels: f16, or f32 in f32 files
  Vector,      // biases and layer-norm parameters: f32
  Positional,  // positional embeddings: f32
};

struct TensorSpec {
  std::string name;
  TensorKind kind;
  int n_dims;                        // as the file stores it
  std::array<int64_t, kMaxDims> ne;  // innermost first, padded with 1
};

// Every tensor a model with these hyper-parameters must contain, each exactly once.
std::vector<TensorSpec> whisper_tensor_specs(const HParams& hp);
// The type a writer stores a tensor of this kind in, for a file of the given weight type.
DType default_tensor_type(TensorKind kind, DType weight_type);
// Whether a reader accepts `type` for this kind in a file of the given weight type.
bool tensor_type_allowed(TensorKind kind, DType type, DType weight_type);
std::string allowed_types_str(TensorKind kind, DType weight_type);  // for error messages

struct EncoderLayer {
  Tensor *attn_ln_w, *attn_ln_b;
  Tensor *attn_q_w, *attn_q_b, *attn_k_w, *attn_v_w, *attn_v_b, *attn_out_w, *attn_out_b;
  Tensor *mlp_ln_w, *mlp_ln_b;
  Tensor *mlp_0_w, *mlp_0_b, *mlp_2_w, *mlp_2_b;  // mlp.0: S -> 4S, mlp.2: 4S -> S
};

struct DecoderLayer {
  Tensor *attn_ln_w, *attn_ln_b;
  Tensor *attn_q_w, *attn_q_b, *attn_k_w, *attn_v_w, *attn_v_b, *attn_out_w, *attn_out_b;
  Tensor *cross_ln_w, *cross_ln_b;
  Tensor *cross_q_w, *cross_q_b, *cross_k_w, *cross_v_w, *cross_v_b, *cross_out_w, *cross_out_b;
  Tensor *mlp_ln_w, *mlp_ln_b;
  Tensor *mlp_0_w, *mlp_0_b, *mlp_2_w, *mlp_2_b;
};

// Pointers into the loader's tensors (the ModelFile owns them). Key projections have no bias.
struct WhisperWeights {
  Tensor* enc_pos;            // [S, n_audio_ctx] f32
  Tensor *conv1_w, *conv1_b;  // [3, n_mels, S], [1, S]
  Tensor *conv2_w, *conv2_b;  // [3, S, S], [1, S]
  std::vector<EncoderLayer> enc;
  Tensor *enc_ln_w, *enc_ln_b;  // encoder.ln_post

  Tensor* dec_pos;          // [T, n_text_ctx] f32
  Tensor* token_embedding;  // [T, n_vocab]; also the output projection
  std::vector<DecoderLayer> dec;
  Tensor *dec_ln_w, *dec_ln_b;  // decoder.ln
};

// Fills the struct by looking every name up; `find` must return a tensor for each spec name.
WhisperWeights bind_whisper_weights(const HParams& hp, const std::function<Tensor*(const std::string&)>& find);

}  // namespace hark
