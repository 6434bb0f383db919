// A compact open-addressing table from a 64-bit name hash to a 64-bit payload: 16 bytes per entry
// instead of the ~100 of std::unordered_map<std::string, ...>, which keeps a million-API compare
// within its memory budget. Callers resolve hash collisions themselves (they can reach the name
// behind a payload), so this table never stores names.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace acccheck::host {

inline std::uint64_t hash_name(std::string_view s) {
  // FNV-1a, then a final avalanche (splitmix64) so linear probing sees well-spread low bits.
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  h ^= h >> 31;
  return h | 1;  // 0 marks an empty slot
}

class NameHashTable {
 public:
  // Calls visit(payload) for every entry with this hash until it returns true; returns whether
  // one did. Then, if none matched, inserts (hash, payload) when insert is true.
  template <class Visit>
  bool find_or_insert(std::uint64_t hash, std::uint64_t payload, bool insert, Visit&& visit) {
    if (slots_.empty()) slots_.resize(1024);
    std::size_t mask = slots_.size() - 1;
    for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.hash == 0) {
        if (!insert) return false;
        s = Slot{hash, payload};
        if (++size_ * 10 > slots_.size() * 7) grow();
        return false;
      }
      if (s.hash == hash && visit(s.payload)) return true;
    }
  }
  std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::uint64_t hash = 0;
    std::uint64_t payload = 0;
  };
  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.resize(old.size() * 2);
    std::size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.hash == 0) continue;
      std::size_t i = s.hash & mask;
      while (slots_[i].hash != 0) i = (i + 1) & mask;
      slots_[i] = s;
    }
  }
  std::vector<Slot> slots_;
  std::size_t size_ = 0;
};

}  // namespace acccheck::host
