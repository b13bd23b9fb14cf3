// Blocked attention with a GEMM panel width that does not divide its key tile. The op packs a
// tile's keys and values into the micro-kernel's B panels, and a panel is written whole, so a
// tile of 256 keys packed 12 wide (NEON's micro-kernel) fills 264 rows. The x86 levels pack 8,
// 16 or 32 wide, which divide 256, so only an ARM run could see a packed tile sized for 256: V's
// panels overwrote K's last one there. This runs the op on this machine with a table whose
// panels are 12 wide (the scalar table with an 8 x 12 micro-kernel of plain loops) against the
// stock scalar table, over key counts around the tile's edges.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <random>
#include <vector>

#include "backend/buffer.h"
#include "backend/cpu/cpu_ops.h"
#include "runtime/ops.h"
#include "simd/gemm_blocked.h"
#include "simd/kernels.h"

namespace hark {
namespace {

using Shape = std::array<int64_t, kMaxDims>;

template <int MR, int NR>
void micro_loops(int64_t kc, const float* ap, const float* bp, float* c, int64_t ldc, bool accumulate) {
  float t[MR][NR] = {};
  for (int64_t p = 0; p < kc; ++p, ap += MR, bp += NR)
    for (int i = 0; i < MR; ++i)
      for (int j = 0; j < NR; ++j) t[i][j] += ap[i] * bp[j];
  for (int i = 0; i < MR; ++i)
    for (int j = 0; j < NR; ++j) c[i * ldc + j] = accumulate ? c[i * ldc + j] + t[i][j] : t[i][j];
}

cpu::Kernels twelve_wide_table() {
  using Packed = cpu::detail::PackedGemm<8, 12, micro_loops<8, 12>>;
  cpu::Kernels k = cpu::kernels_for(cpu::SimdLevel::Scalar);
  k.gemm_mr = 8;
  k.gemm_nr = 12;
  k.pack_a = Packed::pack_a;
  k.pack_b = Packed::pack_b;
  k.pack_b_depth_major = Packed::pack_b_depth_major;
  k.gemm_packed = Packed::gemm;
  return k;
}

struct FreeAligned {
  void operator()(void* p) const { std::free(p); }
};

class AttentionPanelWidth : public ::testing::Test {
 protected:
  Tensor* leaf(Shape ne, const char* name, bool random) {
    Tensor* t = arena_.new_tensor(DType::F32, ne, name);
    buffers_.push_back(host_.alloc(t->nbytes()));
    buffers_.back()->place(*t, 0);
    std::uniform_real_distribution<float> d(-1.5f, 1.5f);
    std::vector<float> values(static_cast<size_t>(t->nelements()), 0.0f);
    if (random)
      for (float& e : values) e = d(rng_);
    tensor_set(*t, values.data(), values.size() * sizeof(float));
    return t;
  }

  // The op on one thread with the given table; its output values.
  std::vector<float> run(const cpu::Kernels& table, Tensor& node) {
    const size_t bytes = (cpu::flash_attn_work_size(node, 1) + 63) / 64 * 64;
    std::unique_ptr<void, FreeAligned> scratch(std::aligned_alloc(64, bytes));
    cpu::ComputeContext ctx;
    ctx.wdata = scratch.get();
    ctx.wsize = bytes;
    ctx.k = &table;
    cpu::op_flash_attn(ctx, node);
    std::vector<float> out(static_cast<size_t>(node.nelements()));
    tensor_get(node, out.data(), out.size() * sizeof(float));
    return out;
  }

  TensorArena arena_;
  HostBufferType host_{"attention-panel-width-test"};
  std::vector<std::unique_ptr<Buffer>> buffers_;
  std::mt19937 rng_{11};
};

TEST_F(AttentionPanelWidth, TwelveWidePanelsMatchTheStockTable) {
  const cpu::Kernels twelve = twelve_wide_table();
  const cpu::Kernels& stock = cpu::kernels_for(cpu::SimdLevel::Scalar);
  ASSERT_NE(256 % twelve.gemm_nr, 0) << "the case needs a width that does not divide the tile";
  const int64_t D = 64, H = 2, nq = 40;
  for (int64_t nk : {255, 256, 257, 300, 520, 1500}) {
    SCOPED_TRACE(testing::Message() << nk << " keys");
    Tensor* q = leaf({D, nq, H, 1}, "q", true);
    Tensor* k = leaf({D, nk, H, 1}, "k", true);
    Tensor* v = leaf({D, nk, H, 1}, "v", true);
    Tensor* node = ops::flash_attn(arena_, q, k, v, nullptr, 0.125f, false);
    buffers_.push_back(host_.alloc(node->nbytes()));
    buffers_.back()->place(*node, 0);
    const std::vector<float> want = run(stock, *node);
    const std::vector<float> got = run(twelve, *node);
    ASSERT_EQ(got.size(), want.size());
    double worst = 0;
    for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, static_cast<double>(std::abs(got[i] - want[i])));
    EXPECT_LE(worst, 1e-5);
  }
}

}  // namespace
}  // namespace hark
