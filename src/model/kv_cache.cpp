#include "model/kv_cache.h"

#include <array>
#include <string>

namespace hark {

KvCache::KvCache(const HParams& hp, BufferType* type, DType dtype, bool v_transposed) : v_transposed_(v_transposed) {
  const int64_t s = hp.n_text_state;
  const size_t align = type->alignment();
  auto make = [&](std::vector<Tensor*>& out, const char* what, int64_t n_ctx, bool transposed) {
    for (int l = 0; l < hp.n_text_layer; ++l)
      out.push_back(arena_.new_tensor(dtype, transposed ? std::array<int64_t, kMaxDims>{n_ctx, s, 1, 1}
                                                        : std::array<int64_t, kMaxDims>{s, n_ctx, 1, 1},
                                      "kv." + std::to_string(l) + "." + what));
  };
  make(self_k_, "self_k", hp.n_text_ctx, false);
  make(self_v_, "self_v", hp.n_text_ctx, v_transposed);
  make(cross_k_, "cross_k", hp.n_audio_ctx, false);
  make(cross_v_, "cross_v", hp.n_audio_ctx, v_transposed);

  auto padded = [&](const Tensor& t) { return (type->alloc_size(t) + align - 1) / align * align; };
  size_t total = 0;
  for (const Tensor& t : arena_.tensors()) total += padded(t);
  buffer_ = type->alloc(total);
  buffer_->set_usage(BufferUsage::Compute);
  // Zeroed so a cache read before it is written gives zeros, never stale or NaN bytes.
  buffer_->clear(0);
  size_t offset = 0;
  for (Tensor& t : arena_.tensors()) {
    buffer_->place(t, offset);
    offset += padded(t);
  }
}

}  // namespace hark
