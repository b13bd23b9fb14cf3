// Quantize and dequantize rows of every element type, in plain scalar C++.
//
// These are the reference definitions: the CPU backend's SIMD kernels must agree with them, the
// model loader and tools use them, and the tests hold every other path to them. A row's length
// must be a multiple of the type's block size.
#pragma once
#include <cstddef>
#include <cstdint>

#include "runtime/dtype.h"

namespace hark {

// f32 -> type (f32, f16, q4_0, q4_1, q5_0, q5_1, q8_0). dst holds dtype_row_bytes(type, n) bytes.
void quantize_row(DType type, const float* src, void* dst, int64_t n);
// type -> f32, any type except i32.
void dequantize_row(DType type, const void* src, float* dst, int64_t n);
// Whole matrix of nrows rows of ncols; returns bytes written.
size_t quantize_rows(DType type, const float* src, void* dst, int64_t nrows, int64_t ncols);

// Activation blocks the CPU matmul quantizes f32 inputs to before integer dot products with
// quantized weights. Not a file format: d is f32 and s = d * sum(qs) is kept for the _1 types'
// offset term (m * sum(x)).
struct BlockQ8A {
  float d;
  float s;
  int8_t qs[kQuantBlock];
};
void quantize_row_q8a(const float* src, BlockQ8A* dst, int64_t n);  // scalar reference

}  // namespace hark
