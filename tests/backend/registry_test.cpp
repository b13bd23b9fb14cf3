#include "backend/device_registry.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "runtime/ops.h"

namespace hark {
namespace {

TEST(Registry, ListsBothBuiltInDevices) {
  const Registry& r = Registry::global();
  std::vector<std::string> names;
  for (const Device* d : r.devices()) names.emplace_back(d->name());
  EXPECT_THAT(names, testing::IsSupersetOf({std::string(kCpuDeviceName), std::string(kReferenceDeviceName)}));
}

TEST(Registry, FindsByNameAndType) {
  const Registry& r = Registry::global();
  Device* cpu = r.find(kCpuDeviceName);
  Device* ref = r.find(kReferenceDeviceName);
  ASSERT_NE(cpu, nullptr);
  ASSERT_NE(ref, nullptr);
  EXPECT_NE(cpu, ref);
  EXPECT_STREQ(cpu->name(), "cpu");
  EXPECT_STREQ(ref->name(), "cpu-ref");
  EXPECT_EQ(r.find("no-such-device"), nullptr);
  EXPECT_EQ(r.find(DeviceType::CPU), cpu) << "the optimised CPU device is registered first";
  EXPECT_EQ(ref->type(), DeviceType::CPU);
}

TEST(Registry, BestIsTheCpuDeviceWithoutAGpu) {
  const Registry& r = Registry::global();
  if (r.find(DeviceType::GPU) || r.find(DeviceType::Accelerator)) GTEST_SKIP() << "a GPU backend is built in";
  EXPECT_EQ(r.best(), r.find(kCpuDeviceName));
}

TEST(Registry, BestPrefersAGpu) {
  // A registry of its own, so the global one is left alone.
  struct FakeGpu : Device {
    HostBufferType bt{"fake-gpu"};
    const char* name() const override { return "fake-gpu"; }
    std::string description() const override { return "fake"; }
    DeviceType type() const override { return DeviceType::GPU; }
    void memory(size_t* f, size_t* t) const override { *f = *t = 1; }
    bool supports_op(const Tensor&) const override { return true; }
    bool supports_buffer_type(const BufferType* b) const override { return b == &bt; }
    BufferType* buffer_type() override { return &bt; }
    std::unique_ptr<Backend> init_backend(const BackendParams&) override { return nullptr; }
  };
  Registry r;
  EXPECT_EQ(r.best(), nullptr);
  struct FakeCpu : FakeGpu {
    DeviceType type() const override { return DeviceType::CPU; }
    const char* name() const override { return "cpu"; }
  };
  r.add(std::make_unique<FakeCpu>());
  EXPECT_STREQ(r.best()->name(), "cpu");
  r.add(std::make_unique<FakeGpu>());
  EXPECT_STREQ(r.best()->name(), "fake-gpu");
  EXPECT_EQ(r.devices().size(), 2u);
}

TEST(Registry, DevicesDescribeThemselves) {
  for (Device* d : Registry::global().devices()) {
    SCOPED_TRACE(d->name());
    EXPECT_FALSE(d->description().empty());
    EXPECT_STRNE(device_type_name(d->type()), "?");
    size_t free = 0, total = 0;
    d->memory(&free, &total);
    EXPECT_GT(total, 0u);
    EXPECT_GT(free, 0u);
    EXPECT_LE(free, total);
    ASSERT_NE(d->buffer_type(), nullptr);
    EXPECT_TRUE(d->buffer_type()->is_host());
    EXPECT_GT(d->buffer_type()->alignment(), 0u);
  }
}

TEST(Registry, InitBackendGivesAWorkingStream) {
  for (Device* d : Registry::global().devices()) {
    SCOPED_TRACE(d->name());
    BackendParams p;
    p.n_threads = 2;
    auto b = d->init_backend(p);
    ASSERT_NE(b, nullptr);
    EXPECT_EQ(&b->device(), d);
    EXPECT_GE(b->n_threads(), 1);
    auto ev = b->new_event();
    ASSERT_NE(ev, nullptr);
    ev->record(*b);
    ev->synchronize();
    b->synchronize();
    // An empty graph computes to Ok on every backend.
    Graph g;
    EXPECT_EQ(b->compute(g), ComputeStatus::Ok);
  }
}

TEST(Registry, EachDeviceSupportsOnlyItsOwnBufferType) {
  const Registry& r = Registry::global();
  Device* cpu = r.find(kCpuDeviceName);
  Device* ref = r.find(kReferenceDeviceName);
  ASSERT_TRUE(cpu && ref);
  EXPECT_TRUE(cpu->supports_buffer_type(cpu->buffer_type()));
  EXPECT_TRUE(ref->supports_buffer_type(ref->buffer_type()));
  // Distinct memory kinds, so the scheduler has to copy between them.
  EXPECT_NE(cpu->buffer_type(), ref->buffer_type());
  EXPECT_FALSE(cpu->supports_buffer_type(ref->buffer_type()));
  EXPECT_FALSE(ref->supports_buffer_type(cpu->buffer_type()));
  HostBufferType other("other");
  EXPECT_FALSE(cpu->supports_buffer_type(&other));
  EXPECT_FALSE(cpu->supports_buffer_type(nullptr));
}

TEST(Registry, DevicesSupportTheCommonOps) {
  TensorArena a;
  Tensor* x = a.new_tensor(DType::F32, {32, 4}, "x");
  Tensor* w = a.new_tensor(DType::F16, {32, 8}, "w");
  for (Device* d : Registry::global().devices()) {
    SCOPED_TRACE(d->name());
    EXPECT_TRUE(d->supports_op(*ops::mul_mat(a, w, x)));
    EXPECT_TRUE(d->supports_op(*ops::gelu(a, x)));
    EXPECT_TRUE(d->supports_op(*ops::soft_max(a, x, nullptr, 1.0f)));
    EXPECT_TRUE(d->supports_op(*ops::reshape(a, x, {128})));
  }
}

}  // namespace
}  // namespace hark
