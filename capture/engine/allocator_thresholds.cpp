// glibc malloc's thresholds for a program under the dump (allocator_thresholds.hpp).
#include "engine/allocator_thresholds.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

#include <cstdint>

namespace acccheck::capture {

namespace {
constexpr int kMmapThreshold = 32 << 20;  // glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
constexpr int kTrimThreshold = 2 * kMmapThreshold;  // what its dynamic rule pairs with it
}  // namespace

bool allocator_thresholds_chosen_by_user(const char* mmap_env, const char* trim_env, const char* tunables) {
  if (mmap_env || trim_env) return true;
  return tunables && (std::strstr(tunables, "glibc.malloc.mmap_threshold") ||
                      std::strstr(tunables, "glibc.malloc.trim_threshold"));
}

bool settle_allocator_thresholds() {
#if defined(__GLIBC__)
  if (allocator_thresholds_chosen_by_user(std::getenv("MALLOC_MMAP_THRESHOLD_"), std::getenv("MALLOC_TRIM_THRESHOLD_"),
                                          std::getenv("GLIBC_TUNABLES")))
    return false;
  // Both or neither: setting one turns glibc's dynamic rule off for the other too (the trim
  // threshold alone left the mmap threshold at 128 KiB: 40,000 page faults a resnet18 step).
  return ::mallopt(M_MMAP_THRESHOLD, kMmapThreshold) == 1 && ::mallopt(M_TRIM_THRESHOLD, kTrimThreshold) == 1;
#else
  return false;
#endif
}

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23  // Linux 5.14's value; older C library headers lack it
#endif

namespace {

#if defined(__GLIBC__)
std::uintptr_t page_size() { return static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE)); }

// A block of `bytes` from the heap, `use`d as its whole pages while it is ours, then freed: those
// pages.
template <typename Use>
PageRange with_heap_block(std::size_t bytes, Use use) {
  void* block = std::malloc(bytes);
  if (!block) return {};
  const auto page = page_size(), at = reinterpret_cast<std::uintptr_t>(block);
  PageRange r{(at + page - 1) / page * page, (at + bytes) / page * page};
  if (r.end <= r.begin) r = {};
  use(r);
  std::free(block);
  return r;
}
#endif

}  // namespace

std::size_t PageRange::pages() const {
#if defined(__GLIBC__)
  return end > begin ? (end - begin) / page_size() : 0;
#else
  return 0;
#endif
}

PageRange reserve_heap_headroom(std::size_t bytes) {
#if defined(__GLIBC__)
  return with_heap_block(bytes, [](const PageRange&) {});
#else
  (void)bytes;
  return {};
#endif
}

bool populate_for_writing(const PageRange& range) {
#if defined(__GLIBC__)
  return range.pages() > 0 &&
         ::madvise(reinterpret_cast<void*>(range.begin), range.end - range.begin, MADV_POPULATE_WRITE) == 0;
#else
  (void)range;
  return false;
#endif
}

bool populate_for_writing_supported() {
#if defined(__GLIBC__)
  static const bool supported = [] {
    const auto page = static_cast<std::size_t>(page_size());
    void* p = ::mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    const bool ok = ::madvise(p, page, MADV_POPULATE_WRITE) == 0;
    ::munmap(p, page);
    return ok;
  }();
  return supported;
#else
  return false;
#endif
}

std::uintptr_t heap_end() {
#if defined(__GLIBC__)
  return reinterpret_cast<std::uintptr_t>(::sbrk(0));
#else
  return 0;
#endif
}

std::size_t prepare_heap_headroom(std::size_t bytes) {
#if defined(__GLIBC__)
  const std::uintptr_t page = page_size();  // once, not a sysconf() per page written
  return with_heap_block(bytes, [page](const PageRange& r) {
           for (std::uintptr_t p = r.begin; p < r.end; p += page) *reinterpret_cast<volatile char*>(p) = 0;
         }).pages();
#else
  (void)bytes;
  return 0;
#endif
}

}  // namespace acccheck::capture
