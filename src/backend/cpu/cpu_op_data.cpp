// Data movement: Copy/Cont (with type conversion), GetRows, Concat, Im2Col, PadReflect.
//
// Copy pairs the source and destination element by element in flat order (dim 0 fastest), so the
// two may have different shapes and any strides. Work is split by ranges of that flat order, not
// by rows, because copies into a KV cache are often one long row. Quantized types are handled in
// whole blocks: a block is one step of nb[0], and a same-type copy moves blocks untouched.
#include <algorithm>
#include <cstring>

#include "backend/cpu/cpu_op_util.h"
#include "backend/cpu/cpu_ops.h"
#include "runtime/error.h"
#include "runtime/quant.h"

namespace hark::cpu {

namespace {

// Visits units [first, first + count) of t in flat order as runs along dim 0, calling
// fn(address of the run's first unit, run length, position of the run within the request).
// A unit is an element, or a block for quantized types (ne0 counts units, nb0 steps them).
template <class F>
void for_each_run(const Tensor& t, int64_t ne0, int64_t first, int64_t count, F&& fn) {
  int64_t i0 = first % ne0;
  int64_t rest = first / ne0;
  int64_t i1 = rest % t.ne[1];
  rest /= t.ne[1];
  int64_t i2 = rest % t.ne[2];
  int64_t i3 = rest / t.ne[2];
  for (int64_t done = 0; done < count;) {
    const int64_t len = std::min(count - done, ne0 - i0);
    const uint8_t* p = static_cast<const uint8_t*>(t.data) + row_offset(t, i1, i2, i3) + i0 * t.nb[0];
    fn(p, len, done);
    done += len;
    i0 = 0;
    if (++i1 == t.ne[1]) {
      i1 = 0;
      if (++i2 == t.ne[2]) {
        i2 = 0;
        ++i3;
      }
    }
  }
}

// n units from s (stride snb) to d (stride dnb), converting between f32 and f16 or moving bytes
// when the types agree. Dense runs go to the kernel table (or memcpy) in one call.
void convert_run(const Kernels& k, DType st, const uint8_t* s, size_t snb, DType dt, uint8_t* d, size_t dnb,
                 int64_t n) {
  if (st == dt) {
    const size_t unit = dtype_block_bytes(dt);
    if (snb == unit && dnb == unit) {
      std::memcpy(d, s, static_cast<size_t>(n) * unit);
    } else if (unit == 4) {  // strided f32/i32 (transposes): fixed-size moves the compiler inlines
      for (int64_t j = 0; j < n; ++j) std::memcpy(d + j * dnb, s + j * snb, 4);
    } else if (unit == 2) {
      for (int64_t j = 0; j < n; ++j) std::memcpy(d + j * dnb, s + j * snb, 2);
    } else {
      for (int64_t j = 0; j < n; ++j) std::memcpy(d + j * dnb, s + j * snb, unit);
    }
    return;
  }
  const bool dense = snb == dtype_block_bytes(st) && dnb == dtype_block_bytes(dt);
  if (st == DType::F32) {  // -> f16 (supports() admits only f32 <-> f16 here)
    if (dense) {
      k.f32_to_f16_row(reinterpret_cast<const float*>(s), reinterpret_cast<f16_t*>(d), n);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        const f16_t h = f32_to_f16(load_f32(s + j * snb));
        std::memcpy(d + j * dnb, &h, sizeof h);
      }
    }
  } else {  // f16 -> f32
    if (dense) {
      k.f16_to_f32_row(reinterpret_cast<const f16_t*>(s), reinterpret_cast<float*>(d), n);
    } else {
      for (int64_t j = 0; j < n; ++j) {
        f16_t h;
        std::memcpy(&h, s + j * snb, sizeof h);
        const float f = f16_to_f32(h);
        std::memcpy(d + j * dnb, &f, sizeof f);
      }
    }
  }
}

// Gathers src values [first, first + n) in flat order into out as f32.
void gather_f32(const Kernels& k, const Tensor& src, int64_t first, int64_t n, float* out) {
  for_each_run(src, src.ne[0], first, n, [&](const uint8_t* p, int64_t len, int64_t at) {
    convert_run(k, src.type, p, src.nb[0], DType::F32, reinterpret_cast<uint8_t*>(out + at), sizeof(float), len);
  });
}

}  // namespace

void op_copy(const ComputeContext& ctx, Tensor& node) {
  const Tensor& src = *node.src[0];
  Tensor& dst = node;  // Copy: a view with dst's layout; Cont: a fresh contiguous tensor
  const int64_t dst_ne0 = dst.ne[0] / dtype_block_size(dst.type);  // in units
  const int64_t units = dst_ne0 * dst.nrows();
  int64_t u0, u1;
  ctx.range(units, &u0, &u1);
  if (u0 >= u1) return;

  if (dtype_quantized(dst.type) && src.type != dst.type) {
    // f32/f16 -> quantized: one block at a time, so a block may gather its 32 values from
    // anywhere in the source (shapes need not match) without a row-sized buffer.
    for_each_run(dst, dst_ne0, u0, u1 - u0, [&](const uint8_t* p, int64_t len, int64_t at) {
      auto* d = const_cast<uint8_t*>(p);
      for (int64_t b = 0; b < len; ++b) {
        float block[kQuantBlock];
        gather_f32(*ctx.k, src, (u0 + at + b) * kQuantBlock, kQuantBlock, block);
        ctx.k->quantize_row(dst.type, block, d + b * dst.nb[0], kQuantBlock);
      }
    });
    return;
  }

  const int64_t src_ne0 = src.ne[0] / dtype_block_size(src.type);
  for_each_run(dst, dst_ne0, u0, u1 - u0, [&](const uint8_t* p, int64_t len, int64_t at) {
    auto* d = const_cast<uint8_t*>(p);
    for_each_run(src, src_ne0, u0 + at, len, [&](const uint8_t* s, int64_t slen, int64_t sat) {
      convert_run(*ctx.k, src.type, s, src.nb[0], dst.type, d + sat * dst.nb[0], dst.nb[0], slen);
    });
  });
}

void op_get_rows(const ComputeContext& ctx, Tensor& node) {
  const Tensor& table = *node.src[0];
  const Tensor& ids = *node.src[1];
  const int64_t D = table.ne[0];
  int64_t n0, n1;
  ctx.range(ids.ne[0], &n0, &n1);
  for (int64_t n = n0; n < n1; ++n) {
    int32_t id;
    std::memcpy(&id, static_cast<const uint8_t*>(ids.data) + n * ids.nb[0], sizeof id);
    // Bad ids are bad input, not a backend fault; this op never waits at a barrier, so throwing
    // here cannot strand the other threads (the backend reports the first error).
    HARK_CHECK(id >= 0 && id < table.ne[1], "get_rows: id " + std::to_string(id) + " at position " + std::to_string(n) +
                                                " is outside table " + table.describe());
    const uint8_t* row = static_cast<const uint8_t*>(table.data) + static_cast<size_t>(id) * table.nb[1];
    float* out = reinterpret_cast<float*>(static_cast<uint8_t*>(node.data) + n * node.nb[1]);
    if (dtype_quantized(table.type)) {
      if (table.rows_contiguous()) {
        ctx.k->dequantize_row(table.type, row, out, D);
      } else {
        for (int64_t b = 0; b < D / kQuantBlock; ++b)
          ctx.k->dequantize_row(table.type, row + b * table.nb[0], out + b * kQuantBlock, kQuantBlock);
      }
    } else {
      convert_run(*ctx.k, table.type, row, table.nb[0], DType::F32, reinterpret_cast<uint8_t*>(out), sizeof(float), D);
    }
  }
}

void op_concat(const ComputeContext& ctx, Tensor& node) {
  const Tensor& x = *node.src[0];
  const Tensor& y = *node.src[1];
  const int dim = node.params[0].i;
  const size_t elem = dtype_block_bytes(node.type);
  int64_t r0, r1;
  ctx.range(node.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const RowIndex ri = row_index(node, r);
    uint8_t* out = row_ptr(node, ri);
    if (dim == 0) {
      convert_run(*ctx.k, x.type, row_ptr(x, ri), x.nb[0], node.type, out, elem, x.ne[0]);
      convert_run(*ctx.k, y.type, row_ptr(y, ri), y.nb[0], node.type, out + x.ne[0] * elem, elem, y.ne[0]);
      continue;
    }
    int64_t idx[4] = {0, ri.i1, ri.i2, ri.i3};
    const Tensor* from = &x;
    if (idx[dim] >= x.ne[dim]) {
      idx[dim] -= x.ne[dim];
      from = &y;
    }
    convert_run(*ctx.k, from->type, row_ptr(*from, {idx[1], idx[2], idx[3]}), from->nb[0], node.type, out, elem,
                node.ne[0]);
  }
}

void op_im2col(const ComputeContext& ctx, Tensor& node) {
  const Tensor& x = *node.src[0];
  const int64_t K = node.params[0].i, stride = node.params[1].i, pad = node.params[2].i;
  const int64_t cin = x.ne[0], len = x.ne[1];
  const auto* xd = static_cast<const uint8_t*>(x.data);
  int64_t j0, j1;
  ctx.range(node.ne[1] * node.ne[2], &j0, &j1);  // the columns of every batch item
  for (int64_t j = j0; j < j1; ++j) {
    // Column t of item b holds, channel by channel, the K input positions the kernel sees at t.
    const int64_t t = j % node.ne[1], b = j / node.ne[1];
    float* out = reinterpret_cast<float*>(static_cast<uint8_t*>(node.data) + t * node.nb[1] + b * node.nb[2]);
    const uint8_t* xb = xd + b * x.nb[2];
    const int64_t start = t * stride - pad;
    // Positions [k0, k1) of the kernel fall inside the input; the rest read the zero padding.
    const int64_t k0 = std::clamp<int64_t>(-start, 0, K), k1 = std::clamp<int64_t>(len - start, k0, K);
    if (k0 > 0 || k1 < K) std::fill(out, out + K * cin, 0.0f);
    if (x.nb[1] == sizeof(float)) {  // one channel or a transposed view: positions are consecutive
      for (int64_t c = 0; c < cin; ++c)
        std::memcpy(out + K * c + k0, xb + c * x.nb[0] + (start + k0) * x.nb[1],
                    static_cast<size_t>(k1 - k0) * sizeof(float));
    } else if (x.nb[0] == sizeof(float)) {  // [C, L]: each position's channels are consecutive
      for (int64_t k = k0; k < k1; ++k) {
        const uint8_t* xk = xb + (start + k) * x.nb[1];
        for (int64_t c = 0; c < cin; ++c) out[k + K * c] = load_f32(xk, c);
      }
    } else {
      for (int64_t c = 0; c < cin; ++c)
        for (int64_t k = k0; k < k1; ++k) out[k + K * c] = load_f32(xb + c * x.nb[0] + (start + k) * x.nb[1]);
    }
  }
}

// Rows are independent: each thread mirrors its share of rows. Inside a row the middle is a
// straight copy and only the `left` + `right` edge values are mirrored.
void op_pad_reflect(const ComputeContext& ctx, Tensor& node) {
  const Tensor& x = *node.src[0];
  const int64_t left = node.params[0].i, len = x.ne[0], n = node.ne[0];
  int64_t r0, r1;
  ctx.range(node.nrows(), &r0, &r1);
  for (int64_t r = r0; r < r1; ++r) {
    const RowIndex ri = row_index(node, r);
    const uint8_t* xr = row_ptr(x, ri);
    float* out = reinterpret_cast<float*>(row_ptr(node, ri));
    for (int64_t j = 0; j < n; ++j) {
      int64_t pos = j - left;
      if (pos < 0) pos = -pos;
      if (pos >= len) pos = 2 * (len - 1) - pos;
      out[j] = load_f32(xr + pos * x.nb[0]);
    }
  }
}

}  // namespace hark::cpu
