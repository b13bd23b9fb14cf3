#include "model/whisper_runner.h"

#include <algorithm>
#include <cstring>
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
             /*v_transposed=*/!opts_.flash_attn, /*n_seq=*/1, opts_.cross_kv_type),
      enc_sched_(std::make_unique<Scheduler>(backends_)),
      dec_sched_(std::make_unique<Scheduler>(backends_)) {
  const HParams& hp = model.hparams();
  build_encoder_graph(0);
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

void WhisperRunner::build_encoder_graph(int window) {
  const HParams& hp = model_.hparams();
  enc_arena_.reset();
  enc_graph_.clear();
  enc_mel_ = enc_arena_.new_tensor(DType::F32, {2 * static_cast<int64_t>(hp.n_audio_ctx), hp.n_mels}, "mel");
  enc_mel_->flags |= kFlagInput;
  Tensor* features = build_encoder(enc_arena_, model_.weights(), hp, enc_mel_, opts_.flash_attn);
  build_cross_kv(enc_arena_, enc_graph_, model_.weights(), hp, features, cache_, window);
  enc_window_ = window;
}

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

ComputeStatus WhisperRunner::encode(std::span<const float> mel, int window) {
  HARK_CHECK(mel.size() == static_cast<size_t>(enc_mel_->nelements()),
             "encode: expected a mel window of " + std::to_string(enc_mel_->nelements()) + " values, got " +
                 std::to_string(mel.size()));
  HARK_CHECK(window >= 0 && window < cache_.n_windows(), "encode: cross window " + std::to_string(window) +
                                                             " outside [0, " + std::to_string(cache_.n_windows()) +
                                                             ") (set_n_windows first)");
  // The graph's last nodes copy into one window: another window gets the same graph with other
  // copy targets (same shapes, so the same plan and memory). Rebuilt only when the window changes.
  if (window != enc_window_) build_encoder_graph(window);
  // Planned again before the input is written: the scheduler replans a graph that was computed
  // before, and the input must be written where that plan puts it. (The same graph gets the same
  // plan; this costs microseconds against an encoder pass.)
  enc_sched_->alloc_graph(enc_graph_);
  tensor_set(*enc_mel_, mel.data(), mel.size_bytes());
  return enc_sched_->compute(enc_graph_);
}

Tensor* WhisperRunner::build_decoder_step(int n_tokens, int n_past, bool all_rows, int seq,
                                          std::span<const CrossQkHead> cross_qk, std::vector<Tensor*>* cross_qk_out,
                                          int window) {
  dec_arena_.reset();
  dec_tokens_ = dec_arena_.new_tensor(DType::I32, {n_tokens}, "tokens");
  dec_tokens_->flags |= kFlagInput;
  dec_key_mask_ = nullptr;
  DecoderGraphOptions o;
  o.flash_attn = opts_.flash_attn;
  o.all_logits = all_rows;
  o.seq = seq;
  o.window = window;
  o.cross_qk = cross_qk;
  o.cross_qk_out = cross_qk_out;
  return build_decoder(dec_arena_, dec_graph_, model_.weights(), model_.hparams(), cache_, dec_tokens_, n_past, o);
}

Tensor* WhisperRunner::build_decoder_batch_step(std::span<const int> seqs, std::span<const int> positions,
                                                std::span<const int> windows, std::span<const SeqCopy> forks) {
  dec_arena_.reset();
  dec_tokens_ = dec_arena_.new_tensor(DType::I32, {static_cast<int64_t>(seqs.size())}, "tokens");
  dec_tokens_->flags |= kFlagInput;
  DecoderGraphOptions o;
  o.flash_attn = opts_.flash_attn;
  o.forks = forks;
  o.key_mask = &dec_key_mask_;
  return build_decoder_batch(dec_arena_, dec_graph_, model_.weights(), model_.hparams(), cache_, dec_tokens_, seqs,
                             positions, o, windows);
}

void WhisperRunner::check_tokens(std::span<const int32_t> tokens, const char* what) const {
  const HParams& hp = model_.hparams();
  HARK_CHECK(!tokens.empty(), std::string(what) + ": no tokens");
  for (int32_t id : tokens)
    HARK_CHECK(id >= 0 && id < hp.n_vocab, std::string(what) + ": token id " + std::to_string(id) +
                                               " outside the vocabulary [0, " + std::to_string(hp.n_vocab) + ")");
}

ComputeStatus WhisperRunner::run_decoder(Tensor* out, std::span<const int32_t> tokens, std::vector<float>* logits,
                                         std::span<const int> positions) {
  dec_sched_->alloc_graph(dec_graph_);
  tensor_set(*dec_tokens_, tokens.data(), tokens.size_bytes());
  if (dec_key_mask_) fill_key_mask(*dec_key_mask_, positions);
  const ComputeStatus status = dec_sched_->compute(dec_graph_);
  if (status != ComputeStatus::Ok) return status;
  logits->resize(static_cast<size_t>(out->nelements()));
  const int64_t cols = out->ne[0], rows = out->nrows();
  if (out->buffer && out->buffer->type()->is_host() && out->is_contiguous() && rows > 1) {
    // Several rows (beams, candidates, chunks: 1 MB for 5 of 51,865): the compute threads copy
    // them out together, each the part of every row it computed (the product splits the
    // vocabulary among them), while that is still in its cache.
    const float* src = static_cast<const float*>(out->data);
    float* dst = logits->data();
    const Backend* host = backends_.front();
    for (const Backend* b : backends_)
      if (b->host_threads() > host->host_threads()) host = b;
    const int64_t parts = host->host_threads();
    run_on_host(parts, [&](int64_t p) {
      const int64_t c0 = cols * p / parts, c1 = cols * (p + 1) / parts;
      for (int64_t r = 0; r < rows; ++r)
        std::memcpy(dst + r * cols + c0, src + r * cols + c0, static_cast<size_t>(c1 - c0) * sizeof(float));
    });
  } else {
    tensor_get(*out, logits->data(), logits->size() * sizeof(float));
  }
  return status;
}

ComputeStatus WhisperRunner::decode(std::span<const int32_t> tokens, int n_past, std::vector<float>* logits,
                                    bool all_rows, int seq, int window) {
  check_tokens(tokens, "decode");
  HARK_CHECK(logits != nullptr, "decode: logits is null");
  HARK_CHECK(seq >= 0 && seq < cache_.n_seq(), "decode: sequence slot " + std::to_string(seq) + " outside [0, " +
                                                   std::to_string(cache_.n_seq()) + ") (set_n_sequences first)");
  HARK_CHECK(window >= 0 && window < cache_.n_windows(), "decode: cross window " + std::to_string(window) +
                                                             " outside [0, " + std::to_string(cache_.n_windows()) +
                                                             ") (set_n_windows first)");
  flush_forks();
  return run_decoder(build_decoder_step(static_cast<int>(tokens.size()), n_past, all_rows, seq, {}, nullptr, window),
                     tokens, logits);
}

ComputeStatus WhisperRunner::decode_batch(std::span<const int32_t> tokens, std::span<const int> seqs, int n_past,
                                          std::vector<float>* logits, std::span<const int> windows) {
  const std::vector<int> positions(seqs.size(), n_past);
  return decode_rows(tokens, seqs, positions, logits, windows);
}

ComputeStatus WhisperRunner::decode_rows(std::span<const int32_t> tokens, std::span<const int> seqs,
                                         std::span<const int> positions, std::vector<float>* logits,
                                         std::span<const int> windows) {
  check_tokens(tokens, "decode_batch");
  HARK_CHECK(logits != nullptr, "decode_batch: logits is null");
  HARK_CHECK(seqs.size() == tokens.size(), "decode_batch: " + std::to_string(tokens.size()) + " tokens but " +
                                               std::to_string(seqs.size()) + " sequence slots (one slot per row)");
  // build_decoder_batch checks the slots, the windows and the positions (and the forks).
  Tensor* out = build_decoder_batch_step(seqs, positions, windows, pending_forks_);
  const ComputeStatus status = run_decoder(out, tokens, logits, positions);
  // The graph made them (or, stopped early, maybe not all: the host copies are the same bytes
  // again, since a step writes only position n_past and no fork copies it).
  if (status == ComputeStatus::Ok) {
    pending_forks_.clear();
  } else {
    flush_forks();
  }
  return status;
}

void WhisperRunner::run_on_host(int64_t n, const std::function<void(int64_t)>& fn) {
  Backend* best = backends_.front();
  for (Backend* b : backends_)
    if (b->host_threads() > best->host_threads()) best = b;
  best->run_on_host(n, fn);
}

void WhisperRunner::set_n_sequences(int n) {
  HARK_CHECK(n >= 1, "set_n_sequences: need at least 1 sequence, got " + std::to_string(n));
  if (n == cache_.n_seq()) return;
  flush_forks();
  cache_.set_n_seq(n);
  if (n == 1) return;
  reserve_batch(n, /*own_windows=*/false);
  if (cache_.n_windows() > 1) reserve_batch(std::min(n, cache_.n_windows()), /*own_windows=*/true);
}

void WhisperRunner::set_n_windows(int n) {
  HARK_CHECK(n >= 1, "set_n_windows: need at least 1 window, got " + std::to_string(n));
  if (n == cache_.n_windows()) return;
  flush_forks();
  if (cache_.n_seq() < n) set_n_sequences(n);
  cache_.set_n_windows(n);
  // The encoder graph's copies wrote into the old cross tensors: aim them at the new ones (and
  // re-plan, since the graph is new).
  build_encoder_graph(std::min(enc_window_, n - 1));
  enc_sched_->alloc_graph(enc_graph_);
  if (n > 1) reserve_batch(n, /*own_windows=*/true);
}

// The largest batch step of n rows: n rows at the last position, each way through the attention
// (one batched node for slots (and windows) in order; one node per row out of order), so any
// batch of up to n rows fits. Growth asked for here is not a decode step's realloc.
void WhisperRunner::reserve_batch(int n, bool own_windows) {
  const int before = decoder_reallocs();
  std::vector<int> seqs(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) seqs[static_cast<size_t>(i)] = i;
  const int last = model_.hparams().n_text_ctx - 1;
  std::vector<int> positions(static_cast<size_t>(n), last);
  for (int pass = 0; pass < 2; ++pass) {
    build_decoder_batch_step(seqs, positions, own_windows ? std::span<const int>(seqs) : std::span<const int>());
    dec_sched_->reserve(dec_graph_);
    std::reverse(seqs.begin(), seqs.end());
  }
  if (own_windows && n > 1) {
    // Rows at different positions (continuous batching): per-row attention and positional rows.
    for (int i = 0; i < n; ++i) positions[static_cast<size_t>(i)] = last - (i % 2);
    build_decoder_batch_step(seqs, positions, seqs);
    dec_sched_->reserve(dec_graph_);
  }
  reallocs_at_start_ += decoder_reallocs() - before;
}

ComputeStatus WhisperRunner::align(std::span<const int32_t> tokens, std::span<const CrossQkHead> heads,
                                   std::vector<float>* qk, std::vector<float>* logits, int window) {
  const HParams& hp = model_.hparams();
  check_tokens(tokens, "align");
  HARK_CHECK(qk != nullptr && logits != nullptr, "align: qk or logits is null");
  HARK_CHECK(!heads.empty(), "align: no alignment heads");
  HARK_CHECK(tokens.size() <= static_cast<size_t>(hp.n_text_ctx), "align: " + std::to_string(tokens.size()) +
                                                                      " tokens exceed the text context of " +
                                                                      std::to_string(hp.n_text_ctx));
  std::vector<std::pair<int, int>> key;
  for (const CrossQkHead& h : heads) {
    HARK_CHECK(h.layer >= 0 && h.layer < hp.n_text_layer && h.head >= 0 && h.head < hp.n_text_head,
               "align: head (" + std::to_string(h.layer) + ", " + std::to_string(h.head) + ") outside the decoder's " +
                   std::to_string(hp.n_text_layer) + " layers x " + std::to_string(hp.n_text_head) + " heads");
    key.emplace_back(h.layer, h.head);
  }
  flush_forks();
  // The graph hands the heads out layer by layer; out_of[k] is where head k's output lands.
  std::vector<size_t> out_of(heads.size());
  {
    size_t next = 0;
    for (int il = 0; il < hp.n_text_layer; ++il)
      for (size_t k = 0; k < heads.size(); ++k)
        if (heads[k].layer == il) out_of[k] = next++;
  }
  const int chunk = std::min(kReservedLogitRows, hp.n_text_ctx);
  std::vector<Tensor*> outs;
  if (key != align_reserved_) {
    // The largest alignment step (a full chunk at the end of the context) sized once per head
    // set: the heads' outputs are what it adds to the all-rows reserve. Not a decode step's growth.
    const int before = decoder_reallocs();
    build_decoder_step(chunk, hp.n_text_ctx - chunk, /*all_rows=*/true, 0, heads, &outs);
    dec_sched_->reserve(dec_graph_);
    reallocs_at_start_ += decoder_reallocs() - before;
    align_reserved_ = key;
  }

  const size_t n = tokens.size(), n_ctx = static_cast<size_t>(hp.n_audio_ctx),
               n_vocab = static_cast<size_t>(hp.n_vocab);
  qk->assign(heads.size() * n * n_ctx, 0.0f);
  logits->assign(n * n_vocab, 0.0f);
  std::vector<float> rows, one;
  for (size_t first = 0; first < n; first += static_cast<size_t>(chunk)) {
    const size_t c = std::min(n - first, static_cast<size_t>(chunk));
    outs.clear();
    Tensor* out =
        build_decoder_step(static_cast<int>(c), static_cast<int>(first), /*all_rows=*/true, 0, heads, &outs, window);
    const ComputeStatus status = run_decoder(out, tokens.subspan(first, c), &rows);
    if (status != ComputeStatus::Ok) return status;
    std::copy(rows.begin(), rows.end(), logits->begin() + static_cast<std::ptrdiff_t>(first * n_vocab));
    for (size_t k = 0; k < heads.size(); ++k) {
      // [n_audio_ctx, c]: token t's row of frames is contiguous, as the result wants it.
      one.resize(c * n_ctx);
      tensor_get(*outs[out_of[k]], one.data(), one.size() * sizeof(float));
      std::copy(one.begin(), one.end(), qk->begin() + static_cast<std::ptrdiff_t>((k * n + first) * n_ctx));
    }
  }
  return ComputeStatus::Ok;
}

void WhisperRunner::copy_sequence(int src_slot, int dst_slot, int n_past) {
  cache_.check_copy(src_slot, dst_slot, n_past);
  if (src_slot == dst_slot || n_past == 0) return;
  // A transposed V cache copies whole slots: those stay host copies.
  if (cache_.v_transposed()) return cache_.copy_seq(src_slot, dst_slot, n_past);
  // The graph's copies have no order among them: one that reads a slot another writes (or
  // writes it twice) would see either version, so such a fork first makes the pending ones.
  for (const SeqCopy& f : pending_forks_)
    if (f.dst == src_slot || f.dst == dst_slot || f.src == dst_slot) {
      flush_forks();
      break;
    }
  pending_forks_.push_back({src_slot, dst_slot, n_past});
}

void WhisperRunner::flush_forks() {
  for (const SeqCopy& f : pending_forks_) cache_.copy_seq(f.src, f.dst, f.n_past);
  pending_forks_.clear();
}

}  // namespace hark
