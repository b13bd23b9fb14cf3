// Small helpers the CPU op files share for walking tensors by rows and strides.
//
// Ops split their work by rows: a "row" is one run along ne[0], and row r of a tensor is the
// row at (i1, i2, i3) with r = i1 + ne1 * (i2 + ne2 * i3). Rows may sit anywhere (nb[1..3] are
// arbitrary byte strides); inside a row, elements are nb[0] bytes apart.
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/tensor.h"
#include "runtime/unaligned.h"

namespace hark::cpu {

struct RowIndex {
  int64_t i1, i2, i3;
};

inline RowIndex row_index(const Tensor& t, int64_t r) {
  RowIndex ri;
  ri.i1 = r % t.ne[1];
  r /= t.ne[1];
  ri.i2 = r % t.ne[2];
  ri.i3 = r / t.ne[2];
  return ri;
}

inline size_t row_offset(const Tensor& t, int64_t i1, int64_t i2, int64_t i3) {
  return static_cast<size_t>(i1) * t.nb[1] + static_cast<size_t>(i2) * t.nb[2] + static_cast<size_t>(i3) * t.nb[3];
}

inline uint8_t* row_ptr(Tensor& t, const RowIndex& ri) {
  return static_cast<uint8_t*>(t.data) + row_offset(t, ri.i1, ri.i2, ri.i3);
}
inline const uint8_t* row_ptr(const Tensor& t, const RowIndex& ri) {
  return static_cast<const uint8_t*>(t.data) + row_offset(t, ri.i1, ri.i2, ri.i3);
}

// f32 values at a byte address p (element strides are bytes, so callers index in bytes) are read
// with load_f32 from runtime/unaligned.h: weights may sit at any byte of the file mapping.

// True when the f32 elements of a row are adjacent, so a kernel can take the row as an array.
inline bool dense_f32_rows(const Tensor& t) { return t.nb[0] == sizeof(float); }

}  // namespace hark::cpu
