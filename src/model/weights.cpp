#include "model/weights.h"

#include "runtime/error.h"

namespace hark {

namespace {

struct SpecList {
  std::vector<TensorSpec> out;
  void add(std::string name, TensorKind kind, std::initializer_list<int64_t> dims) {
    TensorSpec s{std::move(name), kind, static_cast<int>(dims.size()), {1, 1, 1, 1}};
    size_t i = 0;
    for (int64_t d : dims) s.ne[i++] = d;
    out.push_back(std::move(s));
  }
  // Projection with bias; `with_bias` is false for the key projections, which have none.
  void linear(const std::string& p, int64_t in, int64_t outn, bool with_bias = true) {
    add(p + ".weight", TensorKind::Matrix, {in, outn});
    if (with_bias) add(p + ".bias", TensorKind::Vector, {outn});
  }
  void norm(const std::string& p, int64_t n) {
    add(p + ".weight", TensorKind::Vector, {n});
    add(p + ".bias", TensorKind::Vector, {n});
  }
  void attention(const std::string& p, int64_t n) {
    linear(p + ".query", n, n);
    linear(p + ".key", n, n, /*with_bias=*/false);
    linear(p + ".value", n, n);
    linear(p + ".out", n, n);
  }
  void mlp(const std::string& p, int64_t n) {
    norm(p + "mlp_ln", n);
    linear(p + "mlp.0", n, 4 * n);
    linear(p + "mlp.2", 4 * n, n);
  }
};

}  // namespace

std::vector<TensorSpec> whisper_tensor_specs(const HParams& hp) {
  const int64_t S = hp.n_audio_state, T = hp.n_text_state;
  SpecList l;
  l.add("encoder.positional_embedding", TensorKind::Positional, {S, hp.n_audio_ctx});
  l.add("encoder.conv1.weight", TensorKind::Conv, {3, hp.n_mels, S});
  l.add("encoder.conv1.bias", TensorKind::Vector, {1, S});
  l.add("encoder.conv2.weight", TensorKind::Conv, {3, S, S});
  l.add("encoder.conv2.bias", TensorKind::Vector, {1, S});
  for (int i = 0; i < hp.n_audio_layer; ++i) {
    const std::string p = "encoder.blocks." + std::to_string(i) + ".";
    l.norm(p + "attn_ln", S);
    l.attention(p + "attn", S);
    l.mlp(p, S);
  }
  l.norm("encoder.ln_post", S);

  l.add("decoder.positional_embedding", TensorKind::Positional, {T, hp.n_text_ctx});
  l.add("decoder.token_embedding.weight", TensorKind::Matrix, {T, hp.n_vocab});
  for (int i = 0; i < hp.n_text_layer; ++i) {
    const std::string p = "decoder.blocks." + std::to_string(i) + ".";
    l.norm(p + "attn_ln", T);
    l.attention(p + "attn", T);
    l.norm(p + "cross_attn_ln", T);
    l.attention(p + "cross_attn", T);
    l.mlp(p, T);
  }
  l.norm("decoder.ln", T);
  return std::move(l.out);
}

DType default_tensor_type(TensorKind kind, DType weight_type) {
  switch (kind) {
    case TensorKind::Matrix: return weight_type;
    // Quantized files keep the convolutions in f16: they are 3-D and run through im2col.
    case TensorKind::Conv: return weight_type == DType::F32 ? DType::F32 : DType::F16;
    case TensorKind::Vector:
    case TensorKind::Positional: return DType::F32;
  }
  return DType::F32;
}

bool tensor_type_allowed(TensorKind kind, DType type, DType weight_type) {
  switch (kind) {
    case TensorKind::Matrix:
      // Plain types are always readable; a quantized matrix must be the file's own quantized type,
      // which tells a corrupt type id apart from a deliberate choice.
      return type == DType::F32 || type == DType::F16 || type == weight_type;
    case TensorKind::Conv: return type == DType::F32 || type == DType::F16;
    case TensorKind::Vector:
    case TensorKind::Positional: return type == DType::F32;
  }
  return false;
}

std::string allowed_types_str(TensorKind kind, DType weight_type) {
  switch (kind) {
    case TensorKind::Matrix:
      return dtype_quantized(weight_type) ? std::string("f32, f16 or ") + dtype_name(weight_type) : "f32 or f16";
    case TensorKind::Conv: return "f32 or f16";
    case TensorKind::Vector:
    case TensorKind::Positional: return "f32";
  }
  return "?";
}

WhisperWeights bind_whisper_weights(const HParams& hp, const std::function<Tensor*(const std::string&)>& find) {
  auto get = [&](const std::string& name) {
    Tensor* t = find(name);
    HARK_CHECK(t != nullptr, "model weights: tensor '" + name + "' is missing");
    return t;
  };
  // What encoder and decoder blocks share, under the same names after the block prefix p: the
  // self-attention and the MLP, each with its layer norm. (The decoder's cross-attention has
  // other field names and is bound between the two.)
  auto bind_self_attn = [&](auto& l, const std::string& p) {
    l.attn_ln_w = get(p + "attn_ln.weight");
    l.attn_ln_b = get(p + "attn_ln.bias");
    l.attn_q_w = get(p + "attn.query.weight");
    l.attn_q_b = get(p + "attn.query.bias");
    l.attn_k_w = get(p + "attn.key.weight");
    l.attn_v_w = get(p + "attn.value.weight");
    l.attn_v_b = get(p + "attn.value.bias");
    l.attn_out_w = get(p + "attn.out.weight");
    l.attn_out_b = get(p + "attn.out.bias");
  };
  auto bind_mlp = [&](auto& l, const std::string& p) {
    l.mlp_ln_w = get(p + "mlp_ln.weight");
    l.mlp_ln_b = get(p + "mlp_ln.bias");
    l.mlp_0_w = get(p + "mlp.0.weight");
    l.mlp_0_b = get(p + "mlp.0.bias");
    l.mlp_2_w = get(p + "mlp.2.weight");
    l.mlp_2_b = get(p + "mlp.2.bias");
  };
  WhisperWeights w{};
  w.enc_pos = get("encoder.positional_embedding");
  w.conv1_w = get("encoder.conv1.weight");
  w.conv1_b = get("encoder.conv1.bias");
  w.conv2_w = get("encoder.conv2.weight");
  w.conv2_b = get("encoder.conv2.bias");
  for (int i = 0; i < hp.n_audio_layer; ++i) {
    const std::string p = "encoder.blocks." + std::to_string(i) + ".";
    EncoderLayer e{};
    bind_self_attn(e, p);
    bind_mlp(e, p);
    w.enc.push_back(e);
  }
  w.enc_ln_w = get("encoder.ln_post.weight");
  w.enc_ln_b = get("encoder.ln_post.bias");

  w.dec_pos = get("decoder.positional_embedding");
  w.token_embedding = get("decoder.token_embedding.weight");
  for (int i = 0; i < hp.n_text_layer; ++i) {
    const std::string p = "decoder.blocks." + std::to_string(i) + ".";
    DecoderLayer d{};
    bind_self_attn(d, p);
    d.cross_ln_w = get(p + "cross_attn_ln.weight");
    d.cross_ln_b = get(p + "cross_attn_ln.bias");
    d.cross_q_w = get(p + "cross_attn.query.weight");
    d.cross_q_b = get(p + "cross_attn.query.bias");
    d.cross_k_w = get(p + "cross_attn.key.weight");
    d.cross_v_w = get(p + "cross_attn.value.weight");
    d.cross_v_b = get(p + "cross_attn.value.bias");
    d.cross_out_w = get(p + "cross_attn.out.weight");
    d.cross_out_b = get(p + "cross_attn.out.bias");
    bind_mlp(d, p);
    w.dec.push_back(d);
  }
  w.dec_ln_w = get("decoder.ln.weight");
  w.dec_ln_b = get("decoder.ln.bias");
  return w;
}

}  // namespace hark
