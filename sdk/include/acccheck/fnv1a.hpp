// FNV-1a, 64 bits: the one cheap, stable hash acccheck uses for names and file digests (not for
// security: it only tells different inputs apart). Streaming: pass the previous value to continue.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace acccheck {

inline constexpr std::uint64_t kFnv1a64Offset = 1469598103934665603ull;

inline std::uint64_t fnv1a64(const void* data, std::size_t size, std::uint64_t h = kFnv1a64Offset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < size; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}
inline std::uint64_t fnv1a64(std::string_view text, std::uint64_t h = kFnv1a64Offset) {
  return fnv1a64(text.data(), text.size(), h);
}

}  // namespace acccheck
