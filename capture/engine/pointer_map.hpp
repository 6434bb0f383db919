// A map from pointers to pointers for the capture's per-call look-ups (a thread's operator
// classifications): open addressing with linear probing in one array, so a look-up reads one cache
// line. std::unordered_map keeps a bucket array and a node per entry, two or three scattered lines a
// look-up, which the step's own memory traffic evicts between two calls of an operator: in a dumped
// gpt step its probes held two fifths of the capture fallback's own samples.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace acccheck::capture {

template <typename V>
class PointerMap {
 public:
  // The value stored for `key`, or nullptr.
  V* find(const void* key) const {
    if (slots_.empty()) return nullptr;
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = home(key, mask);; i = (i + 1) & mask) {
      if (slots_[i].key == key) return slots_[i].value;
      if (!slots_[i].key) return nullptr;  // never full: at most half the slots are taken
    }
  }
  // `key` (not null, not present) → `value`.
  void insert(const void* key, V* value) {
    if ((count_ + 1) * 2 > slots_.size()) grow();
    place(slots_, key, value);
    ++count_;
  }
  void clear() {
    slots_.clear();
    count_ = 0;
  }
  std::size_t size() const { return count_; }

 private:
  struct Slot {
    const void* key = nullptr;
    V* value = nullptr;
  };
  static std::size_t home(const void* key, std::size_t mask) {
    // Fibonacci hashing: the high bits of the product, so pointers that differ only in their high
    // or low bits still spread.
    const auto p = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(key));
    return static_cast<std::size_t>((p * 0x9E3779B97F4A7C15ull) >> 32) & mask;
  }
  static void place(std::vector<Slot>& slots, const void* key, V* value) {
    const std::size_t mask = slots.size() - 1;
    std::size_t i = home(key, mask);
    while (slots[i].key) i = (i + 1) & mask;
    slots[i] = Slot{key, value};
  }
  void grow() {
    std::vector<Slot> bigger(slots_.empty() ? 256 : slots_.size() * 2);
    for (const Slot& s : slots_)
      if (s.key) place(bigger, s.key, s.value);
    slots_.swap(bigger);
  }
  std::vector<Slot> slots_;  // a power of two in size (or empty), at most half full
  std::size_t count_ = 0;
};

}  // namespace acccheck::capture
