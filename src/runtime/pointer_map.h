// PointerMap: a flat hash map from pointers to small integers, for the graph walks every decoder
// step makes (building a graph, planning its memory).
//
// Open addressing in two arrays that keep their capacity across clear(), so a step allocates
// nothing once the map has grown, and a lookup is a multiply and a probe or two. (The
// std::unordered_map and unordered_set it replaces allocated a node per key: building and
// planning a tiny decoder step's graph took ~6% of the step.)
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace hark {

class PointerMap {
 public:
  // The value stored for p, inserted as `fresh` first when p is new. The reference is valid until
  // the next insertion. p must not be null.
  int32_t& at(const void* p, int32_t fresh = 0) {
    if ((size_ + 1) * 2 > keys_.size()) grow();
    size_t i = slot(p);
    while (keys_[i] != nullptr && keys_[i] != p) i = (i + 1) & mask_;
    if (keys_[i] == nullptr) {
      keys_[i] = p;
      values_[i] = fresh;
      ++size_;
    }
    return values_[i];
  }
  // The value stored for p, or nullptr when p has none.
  int32_t* find(const void* p) {
    if (size_ == 0) return nullptr;
    for (size_t i = slot(p);; i = (i + 1) & mask_) {
      if (keys_[i] == p) return &values_[i];
      if (keys_[i] == nullptr) return nullptr;
    }
  }
  bool contains(const void* p) { return find(p) != nullptr; }
  size_t size() const { return size_; }
  // Forgets every key; the capacity stays.
  void clear() {
    if (size_ == 0) return;
    std::fill(keys_.begin(), keys_.end(), nullptr);
    size_ = 0;
  }

 private:
  size_t slot(const void* p) const {
    // Fibonacci hashing of the address (tensors are 8-byte aligned: the low bits carry nothing).
    const uint64_t h = (static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)) >> 3) * 0x9E3779B97F4A7C15ull;
    return static_cast<size_t>(h >> 32) & mask_;
  }
  void grow() {
    std::vector<const void*> old_keys = std::move(keys_);
    std::vector<int32_t> old_values = std::move(values_);
    const size_t cap = old_keys.empty() ? 256 : old_keys.size() * 2;
    keys_.assign(cap, nullptr);
    values_.assign(cap, 0);
    mask_ = cap - 1;
    size_ = 0;
    for (size_t i = 0; i < old_keys.size(); ++i)
      if (old_keys[i] != nullptr) at(old_keys[i], old_values[i]);
  }

  std::vector<const void*> keys_;
  std::vector<int32_t> values_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace hark
