// glibc malloc's thresholds for a program under the dump (allocator_thresholds.hpp).
#include "engine/allocator_thresholds.hpp"

#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

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

}  // namespace acccheck::capture
