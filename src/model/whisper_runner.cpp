#include "model/whisper_runner.h"

#include <algorithm>
#include <string>

#include "backend/device.h"
#include "model/decoder.h"
#include "model/encoder.h"
#include "runtime/error.h"

namespace hark {

namespace {

// The checked list, before any member uses its first entry (the KV cache's memory).
std::vector<Backend*> checked(std::vector<Backend*> backends) {
  HARK_CHECK(!backends.empty(), "WhisperRunner needs at least one backend");
  for (size_t i = 0; i < backends.size(); ++i)
    HARK_CHECK(backends[i] != nullptr, "WhisperRunner: backend " + std::to_string(i) + " is null");
  return backends;
}

size_t compute_bytes(const Scheduler& s) {
  size_t n = 0;
  for (int i = 0; i < s.n_backends(); ++i) n += s.allocator(i).buffer_size();
  return n;
}

}  // namespace

WhisperRunner::WhisperRunner(const ModelFile& model, Backend& backend, RunnerOptions opts)
    : WhisperRunner(model, std::vector<Backend*>{&backend}, opts) {}

WhisperRunner::WhisperRunner(const ModelFile& model, std::vector<Backend*> backends, RunnerOptions opts)
    : model_(model),
      backends_(checked(std::move(backends))),
      opts_(opts),
      // The plain attention path reads values key-major: stored so, they are transposed once
      // when written rather than per step.
      cache_(model.hparams(), backends_[0]->device().buffer_type(), DType::F16,
             /*v_transposed=*/!opts_.flash_attn),
      enc_sched_(std::make_unique<Scheduler>(backends_)),
      dec_sched_(std::make_unique<Scheduler>(backends_)) {
  const HParams& hp = model.hparams();
  enc_mel_ = enc_arena_.new_tensor(DType::F32, {2 * static_cast<int64_t>(hp.n_audio_ctx), hp.n_mels}, "mel");
  enc_mel_->flags |= kFlagInput;
  Tensor* features = build_encoder(enc_arena_, model.weights(), hp, enc_mel_, opts_.flash_attn);
  build_cross_kv(enc_arena_, enc_graph_, model.weights(), hp, features, cache_);
  // Plans and allocates now, so a model too large for the device fails here, not mid-job.
  enc_sched_->alloc_graph(enc_graph_);

  // The largest step: every position of the text context at once (last-row logits). Then a
  // small batch with every row's logits (candidates scored together, bench's batch): on small
  // models its n_vocab x n logits outgrow the full-context step's activations. Each reserve only
  // grows the buffers, so they end up fitting both.
  build_decoder_step(hp.n_text_ctx, 0, /*all_rows=*/false);
  dec_sched_->reserve(dec_graph_);
  build_decoder_step(std::min(kReservedLogitRows, hp.n_text_ctx), 0, /*all_rows=*/true);
  dec_sched_->reserve(dec_graph_);
  reallocs_at_start_ = decoder_reallocs();
}

WhisperRunner::~WhisperRunner() = default;

void WhisperRunner::set_abort_callback(AbortCallback cb) {
  enc_sched_->set_abort_callback(cb);
  dec_sched_->set_abort_callback(std::move(cb));
}

size_t WhisperRunner::encoder_compute_bytes() const { return compute_bytes(*enc_sched_); }
size_t WhisperRunner::decoder_compute_bytes() const { return compute_bytes(*dec_sched_); }

int WhisperRunner::decoder_reallocs() const {
  int n = 0;
  for (int i = 0; i < dec_sched_->n_backends(); ++i) n += dec_sched_->allocator(i).n_reallocs();
  return n - reallocs_at_start_;
}

ComputeStatus WhisperRunner::encode(std::span<const float> mel) {
  HARK_CHECK(mel.size() == static_cast<size_t>(enc_mel_->nelements()),
             "encode: expected a mel window of " + std::to_string(enc_mel_->nelements()) + " values, got " +
                 std::to_string(mel.size()));
  // Planned again before the input is written: the scheduler replans a graph that was computed
  // before, and the input must be written where that plan puts it. (The same graph gets the same
  // plan; this costs microseconds against an encoder pass.)
  enc_sched_->alloc_graph(enc_graph_);
  tensor_set(*enc_mel_, mel.data(), mel.size_bytes());
  return enc_sched_->compute(enc_graph_);
}

Tensor* WhisperRunner::build_decoder_step(int n_tokens, int n_past, bool all_rows, int seq) {
  dec_arena_.reset();
  dec_tokens_ = dec_arena_.new_tensor(DType::I32, {n_tokens}, "tokens");
  dec_tokens_->flags |= kFlagInput;
  DecoderGraphOptions o;
  o.flash_attn = opts_.flash_attn;
  o.all_logits = all_rows;
  o.seq = seq;
  return build_decoder(dec_arena_, dec_graph_, model_.weights(), model_.hparams(), cache_, dec_tokens_, n_past, o);
}

Tensor* WhisperRunner::build_decoder_batch_step(std::span<const int> seqs, int n_past) {
  dec_arena_.reset();
  dec_tokens_ = dec_arena_.new_tensor(DType::I32, {static_cast<int64_t>(seqs.size())}, "tokens");
  dec_tokens_->flags |= kFlagInput;
  DecoderGraphOptions o;
  o.flash_attn = opts_.flash_attn;
  return build_decoder_batch(dec_arena_, dec_graph_, model_.weights(), model_.hparams(), cache_, dec_tokens_, seqs,
                             n_past, o);
}

void WhisperRunner::check_tokens(std::span<const int32_t> tokens, const char* what) const {
  const HParams& hp = model_.hparams();
  HARK_CHECK(!tokens.empty(), std::string(what) + ": no tokens");
  for (int32_t id : tokens)
    HARK_CHECK(id >= 0 && id < hp.n_vocab, std::string(what) + ": token id " + std::to_string(id) +
                                               " outside the vocabulary [0, " + std::to_string(hp.n_vocab) + ")");
}

ComputeStatus WhisperRunner::run_decoder(Tensor* out, std::span<const int32_t> tokens, std::vector<float>* logits) {
  dec_sched_->alloc_graph(dec_graph_);
  tensor_set(*dec_tokens_, tokens.data(), tokens.size_bytes());
  const ComputeStatus status = dec_sched_->compute(dec_graph_);
  if (status != ComputeStatus::Ok) return status;
  logits->resize(static_cast<size_t>(out->nelements()));
  tensor_get(*out, logits->data(), logits->size() * sizeof(float));
  return status;
}

ComputeStatus WhisperRunner::decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits,
                                    bool all_rows, int seq) {
  check_tokens(tokens, "decode");
  HARK_CHECK(logits != nullptr, "decode: logits is null");
  HARK_CHECK(seq >= 0 && seq < cache_.n_seq(), "decode: sequence slot " + std::to_string(seq) + " outside [0, " +
                                                    std::to_string(cache_.n_seq()) + ") (set_n_sequences first)");
  return run_decoder(build_decoder_step(static_cast<int>(tokens.size()), n_past, all_rows, seq), tokens, logits);
}

ComputeStatus WhisperRunner::decode_batch(std::span<const int32_t> tokens, std::span<const int> seqs, int n_past,
                                          std::vector<float>* logits) {
  check_tokens(tokens, "decode_batch");
  HARK_CHECK(logits != nullptr, "decode_batch: logits is null");
  HARK_CHECK(seqs.size() == tokens.size(), "decode_batch: " + std::to_string(tokens.size()) + " tokens but " +
                                               std::to_string(seqs.size()) + " sequence slots (one slot per row)");
  // build_decoder_batch checks the slots and n_past.
  return run_decoder(build_decoder_batch_step(seqs, n_past), tokens, logits);
}

void WhisperRunner::set_n_sequences(int n) {
  HARK_CHECK(n >= 1, "set_n_sequences: need at least 1 sequence, got " + std::to_string(n));
  if (n == cache_.n_seq()) return;
  cache_.set_n_seq(n);
  if (n == 1) return;
  // The largest batch step: n rows at the last position, both ways through the self-attention
  // (one batched node for slots in order; one node per row for slots out of order), so any batch
  // of up to n rows fits. Growth asked for here is not a decode step's realloc.
  const int before = decoder_reallocs();
  std::vector<int> seqs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) seqs[static_cast<size_t>(i)] = i;
  const int last = model_.hparams().n_text_ctx - 1;
  build_decoder_batch_step(seqs, last);
  dec_sched_->reserve(dec_graph_);
  std::reverse(seqs.begin(), seqs.end());
  build_decoder_batch_step(seqs, last);
  dec_sched_->reserve(dec_graph_);
  reallocs_at_start_ += decoder_reallocs() - before;
}

void WhisperRunner::copy_sequence(int src_slot, int dst_slot, int n_past) { cache_.copy_seq(src_slot, dst_slot, n_past); }

}  // namespace hark
