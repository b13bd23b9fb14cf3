// Misuse of ops and buffers must fail with a hark::Error whose message says what was wrong,
// at graph-building time where possible and otherwise before or during compute.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "backend/buffer.h"
#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {
namespace {

using ::testing::HasSubstr;

// The message of the hark::Error fn throws ("" and a test failure when it throws none).
std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a hark::Error";
  return {};
}

TEST(OpsErrors, BuildersRejectShapeMismatches) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {4, 3}, "x");
  Tensor* y = a.new_tensor(DType::F32, {3, 3}, "y");
  EXPECT_THAT(error_of([&] { ops::add(a, x, y); }), HasSubstr("add: cannot broadcast"));
  EXPECT_THAT(error_of([&] { ops::mul(a, x, a.new_tensor(DType::F32, {4, 2})); }), HasSubstr("cannot broadcast"));

  Tensor* w = a.new_tensor(DType::Q8_0, {64, 10}, "w");
  EXPECT_THAT(error_of([&] {
                ops::mul_mat(a, w, a.new_tensor(DType::F32, {32, 5}));
              }),
              HasSubstr("inner dimensions differ"));
  // a fused bias: one f32 value per weight row, contiguous
  Tensor* x64 = a.new_tensor(DType::F32, {64, 5}, "x");
  EXPECT_THAT(error_of([&] { ops::mul_mat_bias(a, w, x64, a.new_tensor(DType::F32, {9}, "b")); }),
              HasSubstr("the bias must be 10 contiguous values (one per weight row), got 'b'"));
  EXPECT_THAT(error_of([&] { ops::mul_mat_bias(a, w, x64, a.new_tensor(DType::F16, {10}, "b")); }),
              HasSubstr("mul_mat_bias (bias)"));
  EXPECT_THAT(error_of([&] { ops::mul_mat_bias(a, w, x64, nullptr); }), HasSubstr("mul_mat_bias: no bias"));
  {
    Tensor* b10 = a.new_tensor(DType::F32, {10}, "b");
    EXPECT_THAT(error_of([&] {
                  ops::mul_mat_bias(a, w, x64, b10, false, a.new_tensor(DType::F32, {10, 2}, "r"));
                }),
                HasSubstr("the residual must be f32"));
    EXPECT_THAT(error_of([&] {
                  ops::mul_mat_bias(a, w, x64, b10, false, a.new_tensor(DType::F16, {10, x64->ne[1]}, "r"));
                }),
                HasSubstr("mul_mat_bias (residual)"));
    Tensor* wide = a.new_tensor(DType::F32, {20, x64->ne[1]}, "wide");
    Tensor* strided = ops::view(a, wide, {10, x64->ne[1]}, {wide->nb[1]}, 0);  // rows apart, values contiguous: fine
    EXPECT_NO_THROW(ops::mul_mat_bias(a, w, x64, b10, false, strided));
    Tensor* cols = ops::transpose(a, a.new_tensor(DType::F32, {x64->ne[1], 10}, "t"));  // values a row apart
    EXPECT_THAT(error_of([&] { ops::mul_mat_bias(a, w, x64, b10, false, cols); }), HasSubstr("contiguous rows"));
  }

  Tensor* q = a.new_tensor(DType::F32, {64, 7, 6}, "q");
  Tensor* k = a.new_tensor(DType::F16, {64, 9, 4}, "k");  // 6 query heads over 4 K/V heads
  EXPECT_THAT(error_of([&] { ops::flash_attn(a, q, k, k, nullptr, 1.0f); }), HasSubstr("shapes do not fit"));
  Tensor* k6 = a.new_tensor(DType::F16, {64, 9, 6}, "k");
  Tensor* k_q4 = a.new_tensor(DType::Q4_0, {64, 9, 6}, "k");  // q8_0 is the one quantized K/V type
  EXPECT_THAT(error_of([&] { ops::flash_attn(a, q, k_q4, k6, nullptr, 1.0f); }), HasSubstr("f32, f16 or q8_0"));
  Tensor* mask = a.new_tensor(DType::F32, {9, 3}, "mask");  // fewer rows than queries
  EXPECT_THAT(error_of([&] { ops::flash_attn(a, q, k6, k6, mask, 1.0f); }), HasSubstr("mask"));
  Tensor* mask_b = a.new_tensor(DType::F32, {9, 7, 1, 2}, "mask");  // two batch masks for one batch
  EXPECT_THAT(error_of([&] { ops::flash_attn(a, q, k6, k6, mask_b, 1.0f); }), HasSubstr("1 or B=1"));
  EXPECT_THAT(error_of([&] { ops::top_k(a, x, 5); }), HasSubstr("top_k: k=5"));
  EXPECT_THAT(error_of([&] { ops::concat(a, x, y, 1); }), HasSubstr("differ in dim 0"));
  // reflection cannot reach further than the row is long
  EXPECT_THAT(error_of([&] { ops::pad_reflect(a, x, 4, 0); }), HasSubstr("pad_reflect: padding 4 + 0"));
  EXPECT_THAT(error_of([&] { ops::pad_reflect(a, x, 0, -1); }), HasSubstr("must each be in 0..3"));
}

TEST(OpsErrors, BuildersRejectUnsupportedTypes) {
  TensorArena a;
  Tensor* h = a.new_tensor(DType::F16, {8, 2}, "h");
  EXPECT_THAT(error_of([&] { ops::gelu(a, h); }), HasSubstr("gelu needs f32 input"));
  EXPECT_THAT(error_of([&] { ops::sigmoid(a, h); }), HasSubstr("sigmoid needs f32 input"));
  EXPECT_THAT(error_of([&] { ops::pad_reflect(a, h, 1, 1); }), HasSubstr("pad_reflect needs f32"));
  EXPECT_THAT(error_of([&] { ops::soft_max(a, h, nullptr, 1.0f); }), HasSubstr("soft_max needs f32"));
  Tensor* q4 = a.new_tensor(DType::Q4_0, {32, 2}, "q4");
  EXPECT_THAT(error_of([&] { ops::concat(a, q4, q4, 1); }), HasSubstr("must share a plain type"));
  EXPECT_THAT(error_of([&] {
                ops::copy(a, q4, a.new_tensor(DType::F32, {32, 2}));
              }),
              HasSubstr("converting from q4_0 is not supported"));
  EXPECT_THAT(error_of([&] { ops::get_rows(a, h, a.new_tensor(DType::F32, {2})); }), HasSubstr("ids must be i32"));
}

TEST(OpsErrors, BufferTooSmall) {
  HostBufferType host("small");
  auto buf = host.alloc(100);
  TensorArena a;
  Tensor* t = a.new_tensor(DType::F32, {26}, "big");  // 104 bytes
  EXPECT_THAT(error_of([&] { buf->place(*t, 0); }), HasSubstr("buffer too small"));
  Tensor* s = a.new_tensor(DType::F32, {20}, "small");
  EXPECT_THAT(error_of([&] { buf->place(*s, 40); }), HasSubstr("needs 80 bytes at offset 40"));
}

// A token id outside the embedding table is caught by both backends, not read out of bounds.
TEST(OpsErrors, GetRowsIdOutOfRange) {
  for (const char* dev : {kCpuDeviceName, kReferenceDeviceName}) {
    HostBufferType host("ids");
    TensorArena a;
    Tensor* table = a.new_tensor(DType::F32, {4, 3}, "table");
    Tensor* ids = a.new_tensor(DType::I32, {2}, "ids");
    auto tb = host.alloc(table->nbytes());
    auto ib = host.alloc(ids->nbytes());
    tb->place(*table, 0);
    ib->place(*ids, 0);
    tb->clear(0);
    const int32_t bad[2] = {1, 3};
    tensor_set(*ids, bad, sizeof bad);
    Tensor* out = ops::get_rows(a, table, ids);
    Graph g;
    g.build(out);
    auto be = Registry::global().find(dev)->init_backend({2});
    GraphAllocator ga(be->device().buffer_type());
    ga.alloc(g);
    EXPECT_THAT(error_of([&] { be->compute(g); }), HasSubstr("get_rows: id 3 at position 1 is outside table")) << dev;
  }
}

// A graph whose memory was never allocated is refused before any thread starts.
TEST(OpsErrors, ComputeWithoutMemory) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {4}, "x");
  Graph g;
  g.build(ops::scale(a, x, 2.0f));
  for (const char* dev : {kCpuDeviceName, kReferenceDeviceName}) {
    auto be = Registry::global().find(dev)->init_backend({1});
    EXPECT_THAT(error_of([&] { be->compute(g); }), HasSubstr("has no memory")) << dev;
  }
}

}  // namespace
}  // namespace hark
