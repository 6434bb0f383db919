// The capture's pointer → pointer map (engine/pointer_map.hpp): what goes in comes out, through
// growth and collisions, and nothing else does.
#include "engine/pointer_map.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace {

using acccheck::capture::PointerMap;

const void* key_at(std::uintptr_t v) { return reinterpret_cast<const void*>(v); }

TEST(PointerMap, EmptyFindsNothing) {
  PointerMap<int> m;
  EXPECT_EQ(m.find(key_at(0x1000)), nullptr);
  EXPECT_EQ(m.size(), 0u);
}

// 5,000 entries: the table grows from 256 slots several times, and every value is found again
// under its own key, none under keys never inserted.
TEST(PointerMap, EveryEntrySurvivesGrowth) {
  std::vector<int> values(5000);
  PointerMap<int> m;
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<int>(i);
    m.insert(key_at(0x10000 + 64 * i), &values[i]);  // aligned like operator name objects
  }
  EXPECT_EQ(m.size(), 5000u);
  for (std::size_t i = 0; i < values.size(); ++i) {
    int* v = m.find(key_at(0x10000 + 64 * i));
    ASSERT_NE(v, nullptr) << i;
    EXPECT_EQ(*v, static_cast<int>(i));
    EXPECT_EQ(m.find(key_at(0x10000 + 64 * i + 8)), nullptr) << i;
  }
}

// Keys that differ only above bit 32 or only in the low bits still land apart and are told apart.
TEST(PointerMap, KeysDifferingInHighOrLowBitsAreDistinct) {
  int a = 1, b = 2, c = 3, d = 4;
  PointerMap<int> m;
  m.insert(key_at(0x7f0000001000), &a);
  m.insert(key_at(0x7f0100001000), &b);
  m.insert(key_at(0x7f0000001008), &c);
  m.insert(key_at(0x000000001000), &d);
  EXPECT_EQ(m.find(key_at(0x7f0000001000)), &a);
  EXPECT_EQ(m.find(key_at(0x7f0100001000)), &b);
  EXPECT_EQ(m.find(key_at(0x7f0000001008)), &c);
  EXPECT_EQ(m.find(key_at(0x000000001000)), &d);
  EXPECT_EQ(m.find(key_at(0x7f0200001000)), nullptr);
}

TEST(PointerMap, ClearForgetsEverything) {
  int a = 1;
  PointerMap<int> m;
  m.insert(key_at(0x2000), &a);
  m.clear();
  EXPECT_EQ(m.size(), 0u);
  EXPECT_EQ(m.find(key_at(0x2000)), nullptr);
  m.insert(key_at(0x2000), &a);  // usable again after clearing
  EXPECT_EQ(m.find(key_at(0x2000)), &a);
}

}  // namespace
