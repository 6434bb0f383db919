// glibc malloc's thresholds under the dump (capture/engine/allocator_thresholds.hpp).
#include "engine/allocator_thresholds.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace acccheck::capture {
namespace {

TEST(AllocatorThresholds, TheEnvironmentsChoiceStands) {
  EXPECT_FALSE(allocator_thresholds_chosen_by_user(nullptr, nullptr, nullptr));
  EXPECT_FALSE(allocator_thresholds_chosen_by_user(nullptr, nullptr, "glibc.malloc.arena_max=2"));
  EXPECT_TRUE(allocator_thresholds_chosen_by_user("131072", nullptr, nullptr));
  EXPECT_TRUE(allocator_thresholds_chosen_by_user(nullptr, "0", nullptr));
  EXPECT_TRUE(allocator_thresholds_chosen_by_user(nullptr, nullptr, "glibc.malloc.arena_max=2:glibc.malloc.trim_threshold=0"));
  EXPECT_TRUE(allocator_thresholds_chosen_by_user(nullptr, nullptr, "glibc.malloc.mmap_threshold=65536"));
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)  // a sanitizer's allocator has no thresholds
constexpr std::size_t kBlock = 20u << 20;  // a large weight gradient

// In a fresh process (the threadsafe death-test style runs the test binary anew): exit 0 when a
// 20 MiB block comes from the heap and freeing it leaves the heap as large (no trim and fault-in
// in the next step); 2 when it was mmap'ed, 3 when the heap was trimmed, 4 when nothing was set.
int block_stays_in_heap(bool settle) {
  ::unsetenv("MALLOC_MMAP_THRESHOLD_");
  ::unsetenv("MALLOC_TRIM_THRESHOLD_");
  if (settle && !settle_allocator_thresholds()) return 4;
  const std::size_t mapped_before = ::mallinfo2().hblkhd;
  void* p = std::malloc(kBlock);
  std::memset(p, 1, kBlock);
  if (::mallinfo2().hblkhd != mapped_before) return 2;
  const std::size_t heap = ::mallinfo2().arena;
  std::free(p);
  return ::mallinfo2().arena == heap ? 0 : 3;
}

TEST(AllocatorThresholds, ALargeBlockIsNeitherMappedNorTrimmed) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(block_stays_in_heap(true)), testing::ExitedWithCode(0), "");
}

// What the dump changes: glibc's own start (128 KiB mmap threshold) maps such a block.
TEST(AllocatorThresholds, WithoutThemTheBlockIsMapped) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(block_stays_in_heap(false)), testing::ExitedWithCode(2), "");
}

TEST(AllocatorThresholds, NotSetWhenTheEnvironmentChose) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        ::setenv("MALLOC_TRIM_THRESHOLD_", "131072", 1);
        std::exit(settle_allocator_thresholds() ? 1 : 0);
      },
      testing::ExitedWithCode(0), "");
}
#endif

}  // namespace
}  // namespace acccheck::capture
