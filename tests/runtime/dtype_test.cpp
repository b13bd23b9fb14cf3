#include <gtest/gtest.h>

#include <cmath>

#include "runtime/dtype.h"
#include "runtime/error.h"

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

TEST(DType, NamesRoundTrip) {
  for (DType t :
       {DType::F32, DType::F16, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1, DType::Q8_0, DType::I32}) {
    DType back;
    ASSERT_TRUE(dtype_from_name(dtype_name(t), &back)) << dtype_name(t);
    EXPECT_EQ(back, t);
  }
  DType unused;
  EXPECT_FALSE(dtype_from_name("q4_2", &unused));
}

TEST(DType, ValidRejectsUnknownFileIds) {
  // 4 and 5 were ggml's removed q4_2/q4_3; a file naming them (or garbage) must be refused.
  for (int32_t raw : {0, 1, 2, 3, 6, 7, 8, 26}) EXPECT_TRUE(dtype_valid(raw)) << raw;
  for (int32_t raw : {-1, 4, 5, 9, 25, 27, 1000}) EXPECT_FALSE(dtype_valid(raw)) << raw;
}

TEST(DType, RowBytesRejectsRaggedRows) {
  EXPECT_THROW(dtype_row_bytes(DType::Q4_0, 33), Error);
  EXPECT_THROW(dtype_row_bytes(DType::Q8_0, -32), Error);
  EXPECT_EQ(dtype_row_bytes(DType::Q5_1, 64), 48u);
  EXPECT_EQ(dtype_row_bytes(DType::F32, 7), 28u);
}

}  // namespace
}  // namespace hark
