// PointerMap: values per pointer through growth, lookups of absent keys, and clear() forgetting
// every key while later use works as on a new map.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/pointer_map.h"

namespace hark {
namespace {

TEST(PointerMap, KeepsAValuePerPointerThroughGrowth) {
  std::vector<int64_t> objects(5000);  // distinct addresses 8 bytes apart, as tensors' are
  PointerMap m;
  EXPECT_EQ(m.find(&objects[0]), nullptr);
  for (size_t i = 0; i < objects.size(); ++i) m.at(&objects[i], -1) = static_cast<int32_t>(i);
  EXPECT_EQ(m.size(), objects.size());
  for (size_t i = 0; i < objects.size(); ++i) {
    int32_t* v = m.find(&objects[i]);
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(*v, static_cast<int32_t>(i));
  }
  // at() on a present key returns its value, not `fresh`.
  EXPECT_EQ(m.at(&objects[42], 7), 42);
  int64_t elsewhere = 0;
  EXPECT_FALSE(m.contains(&elsewhere));
  EXPECT_EQ(m.at(&elsewhere, 7), 7);
  EXPECT_EQ(m.size(), objects.size() + 1);
}

TEST(PointerMap, ClearForgetsEveryKey) {
  std::vector<int64_t> objects(300);
  PointerMap m;
  for (int round = 0; round < 3; ++round) {
    for (size_t i = 0; i < objects.size(); i += 2) ++m.at(&objects[i]);
    for (size_t i = 0; i < objects.size(); ++i) {
      int32_t* v = m.find(&objects[i]);
      if (i % 2 == 0) {
        ASSERT_NE(v, nullptr);
        EXPECT_EQ(*v, 1) << "round " << round << ", a value from before clear() survived";
      } else {
        EXPECT_EQ(v, nullptr);
      }
    }
    m.clear();
    EXPECT_EQ(m.size(), 0u);
    EXPECT_FALSE(m.contains(&objects[0]));
  }
}

}  // namespace
}  // namespace hark
