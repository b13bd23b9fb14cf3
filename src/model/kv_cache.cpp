#include "model/kv_cache.h"

#include <algorithm>
#include <array>
#include <string>

#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {

namespace {

size_t padded(BufferType* type, const Tensor& t) {
  const size_t align = type->alignment();
  return (type->alloc_size(t) + align - 1) / align * align;
}

// Places every tensor of the arena in one fresh, zeroed buffer.
std::unique_ptr<Buffer> place_all(BufferType* type, TensorArena& arena) {
  size_t total = 0;
  for (const Tensor& t : arena.tensors()) total += padded(type, t);
  std::unique_ptr<Buffer> buffer = type->alloc(total);
  buffer->set_usage(BufferUsage::Compute);
  // Zeroed so a cache read before it is written gives zeros, never stale or NaN bytes.
  buffer->clear(0);
  size_t offset = 0;
  for (Tensor& t : arena.tensors()) {
    buffer->place(t, offset);
    offset += padded(type, t);
  }
  return buffer;
}

size_t offset_in(const Tensor& t) {
  return static_cast<size_t>(static_cast<const uint8_t*>(t.data) - static_cast<const uint8_t*>(t.buffer->base()));
}

// Copies `bytes` bytes from byte `src_off` of tensor src's storage to byte `dst_off` of dst's
// (both placed, non-view) through the buffers' own copy (a memmove for host memory): two
// temporary tensors are placed over the ranges.
void copy_range(const Tensor& src, size_t src_off, Tensor& dst, size_t dst_off, size_t bytes) {
  if (bytes == 0) return;
  TensorArena tmp;
  // In whole blocks (a q8_0 cross cache): the ranges copied are whole rows.
  const auto n = static_cast<int64_t>(bytes / dtype_block_bytes(src.type)) * dtype_block_size(src.type);
  Tensor* s = tmp.new_tensor(src.type, {n}, "kv.copy.src");
  Tensor* d = tmp.new_tensor(dst.type, {n}, "kv.copy.dst");
  src.buffer->place(*s, offset_in(src) + src_off);
  dst.buffer->place(*d, offset_in(dst) + dst_off);
  copy_tensor_bytes(*s, *d);
}

}  // namespace

KvCache::KvCache(const HParams& hp, BufferType* type, DType dtype, bool v_transposed, int n_seq,
                 std::optional<DType> cross_dtype)
    : hp_(hp),
      type_(type),
      dtype_(dtype),
      cross_dtype_(cross_dtype.value_or(dtype)),
      v_transposed_(v_transposed),
      n_ctx_(hp.n_text_ctx) {
  HARK_CHECK(!dtype_quantized(dtype),
             std::string("KvCache: the cache type must be f16 or f32, got ") + dtype_name(dtype));
  HARK_CHECK(
      !dtype_quantized(cross_dtype_) || cross_dtype_ == DType::Q8_0,
      std::string("KvCache: the cross-attention cache type must be f16, f32 or q8_0, got ") + dtype_name(cross_dtype_));
  if (cross_dtype_ == DType::Q8_0) {
    const int64_t d = hp.n_text_state / hp.n_text_head;
    HARK_CHECK(!v_transposed,
               "KvCache: a q8_0 cross-attention cache needs the fused attention (flash_attn): the "
               "plain path's transposed values have rows of positions, not whole q8_0 blocks");
    HARK_CHECK(
        d % dtype_block_size(DType::Q8_0) == 0,
        "KvCache: a q8_0 cross-attention cache needs a head size that is a multiple of 32, got " + std::to_string(d));
  }
  alloc_cross(1);
  alloc_self(n_seq);
}

void KvCache::alloc_self(int n_seq) {
  HARK_CHECK(n_seq >= 1, "KvCache: the number of sequences must be at least 1, got " + std::to_string(n_seq));
  const int64_t s = hp_.n_text_state, ctx = n_ctx_;
  auto arena = std::make_unique<TensorArena>();
  std::vector<Tensor*> k, v;
  for (int l = 0; l < hp_.n_text_layer; ++l) {
    k.push_back(arena->new_tensor(dtype_, {s, ctx, n_seq}, "kv." + std::to_string(l) + ".self_k"));
    v.push_back(v_transposed_ ? arena->new_tensor(dtype_, {ctx, s, n_seq}, "kv." + std::to_string(l) + ".self_v")
                              : arena->new_tensor(dtype_, {s, ctx, n_seq}, "kv." + std::to_string(l) + ".self_v"));
  }
  std::unique_ptr<Buffer> buffer = place_all(type_, *arena);
  // The slots both sizes have keep their contents: slots are the outermost dim, so they are a
  // prefix of each layer's bytes.
  if (self_buffer_) {
    const int keep = std::min(n_seq, n_seq_);
    for (int l = 0; l < hp_.n_text_layer; ++l) {
      copy_range(*self_k_[l], 0, *k[l], 0, static_cast<size_t>(keep) * self_k_[l]->nb[2]);
      copy_range(*self_v_[l], 0, *v[l], 0, static_cast<size_t>(keep) * self_v_[l]->nb[2]);
    }
  }
  self_k_ = std::move(k);
  self_v_ = std::move(v);
  self_buffer_ = std::move(buffer);
  self_arena_ = std::move(arena);
  n_seq_ = n_seq;
}

void KvCache::alloc_cross(int n_win) {
  HARK_CHECK(n_win >= 1, "KvCache: the number of windows must be at least 1, got " + std::to_string(n_win));
  const int64_t s = hp_.n_text_state, ctx = hp_.n_audio_ctx, h = hp_.n_text_head, d = s / h;
  auto arena = std::make_unique<TensorArena>();
  std::vector<Tensor*> k, v;
  for (int l = 0; l < hp_.n_text_layer; ++l) {
    k.push_back(arena->new_tensor(cross_dtype_, {d, ctx, h, n_win}, "kv." + std::to_string(l) + ".cross_k"));
    v.push_back(v_transposed_
                    ? arena->new_tensor(cross_dtype_, {ctx, s, n_win}, "kv." + std::to_string(l) + ".cross_v")
                    : arena->new_tensor(cross_dtype_, {d, ctx, h, n_win}, "kv." + std::to_string(l) + ".cross_v"));
  }
  std::unique_ptr<Buffer> buffer = place_all(type_, *arena);
  // As for the self part: windows are the outermost dim, so the kept ones are a prefix.
  if (cross_buffer_) {
    const int keep = std::min(n_win, n_win_);
    for (int l = 0; l < hp_.n_text_layer; ++l) {
      copy_range(*cross_k_[l], 0, *k[l], 0, static_cast<size_t>(keep) * k_window_bytes());
      copy_range(*cross_v_[l], 0, *v[l], 0, static_cast<size_t>(keep) * v_window_bytes());
    }
  }
  cross_k_ = std::move(k);
  cross_v_ = std::move(v);
  cross_buffer_ = std::move(buffer);
  cross_arena_ = std::move(arena);
  n_win_ = n_win;
}

Tensor* KvCache::cross_k_heads(TensorArena& a, int layer, int w0, int64_t B, int step) const {
  Tensor* k = cross_k_[static_cast<size_t>(layer)];
  return ops::view(a, k, {k->ne[0], k->ne[1], k->ne[2], B}, {k->nb[1], k->nb[2], static_cast<size_t>(step) * k->nb[3]},
                   static_cast<size_t>(w0) * k->nb[3]);
}

Tensor* KvCache::cross_v_heads(TensorArena& a, int layer, int w0, int64_t B, int step) const {
  Tensor* v = cross_v_[static_cast<size_t>(layer)];
  if (!v_transposed_) {
    return ops::view(a, v, {v->ne[0], v->ne[1], v->ne[2], B},
                     {v->nb[1], v->nb[2], static_cast<size_t>(step) * v->nb[3]}, static_cast<size_t>(w0) * v->nb[3]);
  }
  // [n_audio_ctx, S] per window: row c is channel c over positions, head h's rows [h*D, (h+1)*D).
  const int64_t d = hp_.n_text_state / hp_.n_text_head;
  return ops::view(a, v, {v->ne[0], d, hp_.n_text_head, B},
                   {v->nb[1], static_cast<size_t>(d) * v->nb[1], static_cast<size_t>(step) * v->nb[2]},
                   static_cast<size_t>(w0) * v->nb[2]);
}

void KvCache::set_n_windows(int n) {
  if (n == n_win_) return;
  alloc_cross(n);
}

void KvCache::set_n_seq(int n) {
  if (n == n_seq_) return;
  alloc_self(n);
}

void KvCache::copy_seq(int src, int dst, int n_past) {
  check_copy(src, dst, n_past);
  if (src == dst || n_past == 0) return;
  for (int l = 0; l < hp_.n_text_layer; ++l) {
    Tensor& k = *self_k_[l];
    const size_t kslot = k.nb[2];
    copy_range(k, src * kslot, k, dst * kslot, static_cast<size_t>(n_past) * k.nb[1]);
    Tensor& v = *self_v_[l];
    const size_t vslot = v.nb[2];
    // A transposed slot holds each channel's positions in a row of n_ctx: positions [0, n_past)
    // of all channels are not one range, so the whole slot goes (the rest is overwritten before
    // it is read: a step writes position n_past before attending to it).
    const size_t vbytes = v_transposed_ ? vslot : static_cast<size_t>(n_past) * v.nb[1];
    copy_range(v, src * vslot, v, dst * vslot, vbytes);
  }
}

void KvCache::check_copy(int src, int dst, int n_past) const {
  HARK_CHECK(src >= 0 && src < n_seq_ && dst >= 0 && dst < n_seq_, "KvCache::copy_seq: slots " + std::to_string(src) +
                                                                       " -> " + std::to_string(dst) + " outside [0, " +
                                                                       std::to_string(n_seq_) + ")");
  HARK_CHECK(n_past >= 0 && n_past <= n_ctx_, "KvCache::copy_seq: n_past " + std::to_string(n_past) +
                                                  " outside the text context [0, " + std::to_string(n_ctx_) + "]");
}

}  // namespace hark
