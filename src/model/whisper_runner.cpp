#include "model/whisper_runner.h"

#include <string>

#include "backend/device.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "runtime/error.h"

namespace hark {

WhisperRunner::WhisperRunner(const ModelFile& model, Backend& backend)
    : model_(model),
      backend_(backend),
      cache_(model.hparams(), backend.device().buffer_type()),
      enc_alloc_(backend.device().buffer_type()),
      dec_alloc_(backend.device().buffer_type()) {
  const HParams& hp = model.hparams();
  enc_mel_ = enc_arena_.new_tensor(DType::F32, {2 * static_cast<int64_t>(hp.n_audio_ctx), hp.n_mels}, "mel");
  enc_mel_->flags |= kFlagInput;
  Tensor* features = build_encoder(enc_arena_, model.weights(), hp, enc_mel_);
  build_cross_kv(enc_arena_, enc_graph_, model.weights(), hp, features, cache_);
  enc_alloc_.alloc(enc_graph_);

  // The largest step: every position of the text context at once.
  build_decoder_step(hp.n_text_ctx, 0);
  dec_alloc_.reserve(dec_graph_);
}

WhisperRunner::~WhisperRunner() = default;

ComputeStatus WhisperRunner::encode(std::span<const float> mel) {
  HARK_CHECK(mel.size() == static_cast<size_t>(enc_mel_->nelements()),
             "encode: expected a mel window of " + std::to_string(enc_mel_->nelements()) + " values, got " +
                 std::to_string(mel.size()));
  tensor_set(*enc_mel_, mel.data(), mel.size_bytes());
  return backend_.compute(enc_graph_);
}

Tensor* WhisperRunner::build_decoder_step(int n_tokens, int n_past) {
  dec_arena_.reset();
  dec_tokens_ = dec_arena_.new_tensor(DType::I32, {n_tokens}, "tokens");
  dec_tokens_->flags |= kFlagInput;
  return build_decoder(dec_arena_, dec_graph_, model_.weights(), model_.hparams(), cache_, dec_tokens_, n_past);
}

ComputeStatus WhisperRunner::decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits) {
  const HParams& hp = model_.hparams();
  HARK_CHECK(!tokens.empty(), "decode: no tokens");
  for (int32_t id : tokens)
    HARK_CHECK(id >= 0 && id < hp.n_vocab,
               "decode: token id " + std::to_string(id) + " outside the vocabulary [0, " + std::to_string(hp.n_vocab) + ")");
  Tensor* out = build_decoder_step(static_cast<int>(tokens.size()), n_past);
  dec_alloc_.alloc(dec_graph_);
  tensor_set(*dec_tokens_, tokens.data(), tokens.size_bytes());
  const ComputeStatus status = backend_.compute(dec_graph_);
  if (status != ComputeStatus::Ok) return status;
  logits->resize(static_cast<size_t>(hp.n_vocab));
  tensor_get(*out, logits->data(), logits->size() * sizeof(float));
  return status;
}

}  // namespace hark
