#include <gtest/gtest.h>

#include <cmath>

#include "runtime/dtype.h"

namespace hark {
namespace {

TEST(DType, BlockSizesMatchFileFormat) {
  EXPECT_EQ(dtype_block_bytes(DType::Q4_0), 18u);
  EXPECT_EQ(dtype_block_bytes(DType::Q4_1), 20u);
  EXPECT_EQ(dtype_block_bytes(DType::Q5_0), 22u);
  EXPECT_EQ(dtype_block_bytes(DType::Q5_1), 24u);
  EXPECT_EQ(dtype_block_bytes(DType::Q8_0), 34u);
  EXPECT_EQ(dtype_row_bytes(DType::Q8_0, 384), 12u * 34u);
  EXPECT_EQ(dtype_row_bytes(DType::F16, 3), 6u);
}

TEST(DType, F16RoundTripsEveryHalf) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<f16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f))));
      continue;
    }
    EXPECT_EQ(f32_to_f16(f), h) << "half bits " << h;
  }
}

}  // namespace
}  // namespace hark
