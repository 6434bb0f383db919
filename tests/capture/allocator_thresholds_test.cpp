// glibc malloc's thresholds under the dump (capture/engine/allocator_thresholds.hpp).
#include "engine/allocator_thresholds.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#endif

#include <fstream>
#include <iterator>
#include <string>

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

// ---- the heap's headroom ----------------------------------------------------------------------

long minor_faults() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_minflt;
}

// Transparent huge pages for every anonymous mapping: the heap's growth then faults a 2 MiB page at
// a time, and a block without headroom costs a handful of faults too.
bool huge_pages_always() {
  std::ifstream f("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string s((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  return s.find("[always]") != std::string::npos;
}

constexpr std::size_t kHeadroom = 4u << 20, kGrowth = 2u << 20;

// Written for real: GCC drops a malloc, memset and free whose block is never read.
void written(void* p, std::size_t bytes) {
  std::memset(p, 1, bytes);
  asm volatile("" : : "r"(p) : "memory");
}

enum class Headroom { none, populated, written };

// In a fresh process: the page faults of writing a new 2 MiB block (the heap's growth, as a dumped
// step's) after the thresholds are set and, before it, `how` the headroom was prepared.
long faults_of_growth(Headroom how) {
  ::unsetenv("MALLOC_MMAP_THRESHOLD_");
  ::unsetenv("MALLOC_TRIM_THRESHOLD_");
  if (!settle_allocator_thresholds()) return -1;
  // What the process has freed at the top of its heap so far is used up first (its pages may have
  // been written already): the growth measured is into pages the process never had.
  const std::size_t top = ::mallinfo2().keepcost;
  void* filler = top > 4096 ? std::malloc(top - 4096) : nullptr;
  if (filler) written(filler, top - 4096);
  if (how == Headroom::populated) {
    const PageRange r = reserve_heap_headroom(kHeadroom);
    if (r.pages() < kHeadroom / 4096 - 1 || !populate_for_writing(r)) return -2;
  } else if (how == Headroom::written) {
    if (prepare_heap_headroom(kHeadroom) < kHeadroom / 4096 - 1) return -2;
  }
  const long before = minor_faults();
  void* p = std::malloc(kGrowth);
  written(p, kGrowth);
  const long faults = minor_faults() - before;
  std::free(p);
  std::free(filler);
  return faults;
}

// Exit 0 when the growth took fewer than 16 faults (a 2 MiB block is 512 pages).
int grows_without_faults(Headroom how) {
  const long f = faults_of_growth(how);
  if (f < 0) return static_cast<int>(-f);
  return f < 16 ? 0 : 3;
}

TEST(HeapHeadroom, PopulatedPagesCostTheHeapsGrowthNoFaults) {
  if (!populate_for_writing_supported()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(grows_without_faults(Headroom::populated)), testing::ExitedWithCode(0), "");
}

TEST(HeapHeadroom, WrittenPagesOnKernelsWithoutPopulateDoTheSame) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(grows_without_faults(Headroom::written)), testing::ExitedWithCode(0), "");
}

// What the headroom saves: without it the same growth faults its pages in one by one.
TEST(HeapHeadroom, WithoutItTheGrowthFaultsEveryPage) {
  if (huge_pages_always()) GTEST_SKIP() << "transparent huge pages for every mapping: few faults either way";
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(faults_of_growth(Headroom::none) >= 256 ? 0 : 3), testing::ExitedWithCode(0), "");
}

// The writer thread populates pages the program may be using that very moment: nothing written to
// them changes, pages never written read as zeros, and none of them faults afterwards.
TEST(HeapHeadroom, PopulatingChangesNoByteOfMemoryInUse) {
  if (!populate_for_writing_supported()) GTEST_SKIP() << "this kernel has no MADV_POPULATE_WRITE (Linux 5.14)";
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)), n = 64;
  auto* m = static_cast<unsigned char*>(::mmap(nullptr, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(m, MAP_FAILED);
  for (std::size_t k = 0; k < n; k += 2) std::memset(m + k * page, static_cast<int>(k + 1), page);  // every other page
  const PageRange r{reinterpret_cast<std::uintptr_t>(m), reinterpret_cast<std::uintptr_t>(m) + n * page};
  EXPECT_EQ(r.pages(), n);
  ASSERT_TRUE(populate_for_writing(r));
  const long before = minor_faults();
  for (std::size_t k = 0; k < n; ++k) {
    const unsigned char want = k % 2 == 0 ? static_cast<unsigned char>(k + 1) : 0;
    EXPECT_EQ(m[k * page], want) << "page " << k;
    EXPECT_EQ(m[k * page + page - 1], want) << "page " << k;
    m[k * page + 7] = 0xAB;
  }
  EXPECT_EQ(minor_faults() - before, 0);
  ::munmap(m, n * page);
  // A range no longer mapped (the heap trimmed meanwhile) is refused, not faulted.
  EXPECT_FALSE(populate_for_writing(r));
  EXPECT_FALSE(populate_for_writing(PageRange{}));
}
#endif

}  // namespace
}  // namespace acccheck::capture
