#include "backend/buffer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <numeric>
#include <vector>

#include "backend/device_registry.h"
#include "backend/graph_allocator.h"
#include "runtime/error.h"
#include "runtime/ops.h"

namespace hark {
namespace {

using testing::AllOf;
using testing::HasSubstr;
using testing::ThrowsMessage;

TEST(Buffer, PlaceSetGetMemset) {
  HostBufferType bt("host", 64);
  auto buf = bt.alloc(1024);
  ASSERT_NE(buf, nullptr);
  EXPECT_EQ(buf->size(), 1024u);
  EXPECT_EQ(buf->type(), &bt);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buf->base()) % 64, 0u) << "buffers honour the type's alignment";
  EXPECT_EQ(buf->usage(), BufferUsage::Any);
  buf->set_usage(BufferUsage::Weights);
  EXPECT_EQ(buf->usage(), BufferUsage::Weights);

  TensorArena a;
  Tensor* t = a.new_tensor(DType::F32, {4, 2}, "t");
  buf->place(*t, 128);
  EXPECT_EQ(t->buffer, buf.get());
  EXPECT_EQ(t->data, static_cast<uint8_t*>(buf->base()) + 128);

  std::vector<float> in(8);
  std::iota(in.begin(), in.end(), 1.0f);
  tensor_set(*t, in.data(), in.size() * sizeof(float));
  std::vector<float> out(8, 0.0f);
  tensor_get(*t, out.data(), out.size() * sizeof(float));
  EXPECT_EQ(in, out);

  // a byte range of the tensor: second row only
  const float row[4] = {-1, -2, -3, -4};
  tensor_set_range(*t, row, 4 * sizeof(float), sizeof(row));
  float back[4];
  tensor_get_range(*t, back, 4 * sizeof(float), sizeof(back));
  EXPECT_EQ(std::memcmp(row, back, sizeof(row)), 0);
  tensor_get(*t, out.data(), out.size() * sizeof(float));
  EXPECT_THAT(out, testing::ElementsAre(1, 2, 3, 4, -1, -2, -3, -4));

  buf->memset_tensor(*t, 0, 0, 4 * sizeof(float));
  tensor_get(*t, out.data(), out.size() * sizeof(float));
  EXPECT_THAT(out, testing::ElementsAre(0, 0, 0, 0, -1, -2, -3, -4));

  buf->clear(0);
  tensor_get(*t, out.data(), out.size() * sizeof(float));
  EXPECT_THAT(out, testing::Each(0.0f));
}

TEST(Buffer, ViewsReadTheirSourceBytes) {
  HostBufferType bt("host");
  auto buf = bt.alloc(256);
  TensorArena a;
  Tensor* t = a.new_tensor(DType::F32, {4, 3}, "t");
  buf->place(*t, 0);
  std::vector<float> in(12);
  std::iota(in.begin(), in.end(), 0.0f);
  tensor_set(*t, in.data(), in.size() * sizeof(float));
  Tensor* row1 = ops::slice(a, t, 1, 1, 2);
  init_view(*row1);
  float r[4];
  tensor_get(*row1, r, sizeof(r));
  EXPECT_THAT(r, testing::ElementsAre(4, 5, 6, 7));
}

TEST(Buffer, TooSmallNamesTensorAndSizes) {
  HostBufferType bt("small-host");
  auto buf = bt.alloc(100);
  TensorArena a;
  Tensor* t = a.new_tensor(DType::F32, {30}, "big_one");  // 120 bytes
  EXPECT_THAT([&] { buf->place(*t, 0); },
              ThrowsMessage<Error>(AllOf(HasSubstr("buffer too small"), HasSubstr("'big_one'"), HasSubstr("120"),
                                         HasSubstr("100"), HasSubstr("small-host"))));
  Tensor* s = a.new_tensor(DType::F32, {10}, "fits_alone");  // 40 bytes
  EXPECT_NO_THROW(buf->place(*s, 60));
  EXPECT_THAT([&] { buf->place(*s, 64); },
              ThrowsMessage<Error>(AllOf(HasSubstr("'fits_alone'"), HasSubstr("offset 64"))));
  EXPECT_THAT([&] { buf->place(*s, SIZE_MAX - 8); }, ThrowsMessage<Error>(HasSubstr("buffer too small")));
}

TEST(Buffer, PlacingAViewIsAnError) {
  HostBufferType bt("host");
  auto buf = bt.alloc(256);
  TensorArena a;
  Tensor* t = a.new_tensor(DType::F32, {16}, "base");
  Tensor* v = ops::reshape(a, t, {4, 4});
  EXPECT_THAT([&] { buf->place(*v, 0); }, ThrowsMessage<Error>(HasSubstr("cannot place view")));
}

TEST(Buffer, OutOfRangeAccessIsAnError) {
  HostBufferType bt("host");
  auto buf = bt.alloc(256);
  TensorArena a;
  Tensor* t = a.new_tensor(DType::F32, {8}, "eight");  // 32 bytes
  buf->place(*t, 0);
  std::vector<uint8_t> bytes(64);
  EXPECT_THAT([&] { tensor_set_range(*t, bytes.data(), 24, 16); },
              ThrowsMessage<Error>(
                  AllOf(HasSubstr("set_tensor"), HasSubstr("'eight'"), HasSubstr("[24, 40)"), HasSubstr("32 bytes"))));
  EXPECT_THAT([&] { tensor_get_range(*t, bytes.data(), 33, 0); }, ThrowsMessage<Error>(HasSubstr("get_tensor")));
  EXPECT_THAT([&] { buf->memset_tensor(*t, 0, 0, 33); }, ThrowsMessage<Error>(HasSubstr("memset_tensor")));
  // whole-tensor helpers check the size they are given
  EXPECT_THAT([&] { tensor_set(*t, bytes.data(), 16); },
              ThrowsMessage<Error>(AllOf(HasSubstr("holds 32 bytes"), HasSubstr("got 16"))));
  EXPECT_THAT([&] { tensor_get(*t, bytes.data(), 64); }, ThrowsMessage<Error>(HasSubstr("asked for 64")));
  // a tensor that is not in any buffer
  Tensor* loose = a.new_tensor(DType::F32, {8}, "loose");
  EXPECT_THAT([&] { tensor_set(*loose, bytes.data(), 32); },
              ThrowsMessage<Error>(AllOf(HasSubstr("'loose'"), HasSubstr("not in a buffer"))));
}

TEST(Buffer, AllocBeyondMaxSizeIsAnError) {
  HostBufferType bt("host");
  EXPECT_THAT([&] { bt.alloc(bt.max_size() + 1); },
              ThrowsMessage<Error>(AllOf(HasSubstr("'host'"), HasSubstr("maximum"))));
}

TEST(Buffer, WrapUsesExternalMemoryWithoutCopyingOrFreeing) {
  HostBufferType bt("wrapped");
  alignas(64) static float storage[16];
  for (int i = 0; i < 16; ++i) storage[i] = static_cast<float>(i);
  bool released = false;
  {
    std::shared_ptr<void> keep(nullptr, [&](void*) { released = true; });
    auto buf = bt.wrap(storage, sizeof(storage), keep);
    keep.reset();
    EXPECT_FALSE(released) << "the buffer holds the keepalive";
    EXPECT_EQ(buf->base(), static_cast<void*>(storage));
    EXPECT_EQ(buf->size(), sizeof(storage));
    TensorArena a;
    Tensor* t = a.new_tensor(DType::F32, {8}, "t");
    buf->place(*t, 8 * sizeof(float));
    float out[8];
    tensor_get(*t, out, sizeof(out));
    EXPECT_EQ(out[0], 8.0f);  // reads the external bytes: nothing was copied
    const float nine = 99.0f;
    tensor_set_range(*t, &nine, 0, sizeof(nine));
    EXPECT_EQ(storage[8], 99.0f);  // writes land in the external memory
  }
  // The buffer is gone; the memory is still ours (a free() of static memory would crash here).
  EXPECT_TRUE(released);
  EXPECT_EQ(storage[8], 99.0f);
}

TEST(Buffer, CopyTensorBytesAcrossTheTwoHostBufferTypes) {
  const Registry& r = Registry::global();
  Device* cpu = r.find(kCpuDeviceName);
  Device* ref = r.find(kReferenceDeviceName);
  ASSERT_TRUE(cpu && ref);
  auto cb = cpu->buffer_type()->alloc(256);
  auto rb = ref->buffer_type()->alloc(256);
  TensorArena a;
  Tensor* src = a.new_tensor(DType::F32, {6, 2}, "src");
  Tensor* dst = a.new_tensor(DType::F32, {12}, "dst");  // same count, other shape
  cb->place(*src, 0);
  rb->place(*dst, 64);
  std::vector<float> in(12);
  std::iota(in.begin(), in.end(), 0.5f);
  tensor_set(*src, in.data(), in.size() * sizeof(float));
  copy_tensor_bytes(*src, *dst);
  std::vector<float> out(12);
  tensor_get(*dst, out.data(), out.size() * sizeof(float));
  EXPECT_EQ(in, out);

  // and back the other way, into an f16 pair
  Tensor* h1 = a.new_tensor(DType::F16, {4}, "h1");
  Tensor* h2 = a.new_tensor(DType::F16, {4}, "h2");
  rb->place(*h1, 192);
  cb->place(*h2, 128);
  const uint16_t hv[4] = {1, 2, 3, 0xFFFF};
  tensor_set(*h1, hv, sizeof(hv));
  copy_tensor_bytes(*h1, *h2);
  uint16_t hb[4];
  tensor_get(*h2, hb, sizeof(hb));
  EXPECT_EQ(std::memcmp(hv, hb, sizeof(hv)), 0);
}

TEST(Buffer, CopyTensorBytesChecksItsOperands) {
  HostBufferType bt("host");
  auto buf = bt.alloc(1024);
  TensorArena a;
  Tensor* f = a.new_tensor(DType::F32, {8}, "f");
  Tensor* h = a.new_tensor(DType::F16, {8}, "h");
  Tensor* g = a.new_tensor(DType::F32, {4}, "short");
  Tensor* m = a.new_tensor(DType::F32, {4, 4}, "m");
  buf->place(*f, 0);
  buf->place(*h, 64);
  buf->place(*g, 128);
  buf->place(*m, 256);
  EXPECT_THAT([&] { copy_tensor_bytes(*f, *h); },
              ThrowsMessage<Error>(AllOf(HasSubstr("same type and size"), HasSubstr("'f'"), HasSubstr("'h'"))));
  EXPECT_THAT([&] { copy_tensor_bytes(*f, *g); }, ThrowsMessage<Error>(HasSubstr("'short'")));
  Tensor* mt = ops::transpose(a, m);
  init_view(*mt);
  Tensor* m2 = a.new_tensor(DType::F32, {4, 4}, "m2");
  buf->place(*m2, 512);
  EXPECT_THAT([&] { copy_tensor_bytes(*mt, *m2); }, ThrowsMessage<Error>(HasSubstr("contiguous")));
  Tensor* loose = a.new_tensor(DType::F32, {8}, "loose");
  EXPECT_THAT([&] { copy_tensor_bytes(*f, *loose); },
              ThrowsMessage<Error>(AllOf(HasSubstr("without a buffer"), HasSubstr("'loose'"))));
}

}  // namespace
}  // namespace hark
