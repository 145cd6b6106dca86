#pragma once
// A small, fully specified random generator, so sample orders are identical on every platform
// and standard library (std::shuffle and the std distributions are implementation-defined).
#include <cstdint>
#include <iterator>
#include <utility>

namespace gpufeed::pipeline {

__extension__ using uint128 = unsigned __int128;

/// SplitMix64 (Steele, Lea, Flood 2014): 64-bit state, passes BigCrush, trivially seeded.
class SplitMix64 {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, bound) without modulo bias (Lemire 2019), bound > 0.
  std::uint64_t below(std::uint64_t bound) {
    uint128 m = static_cast<uint128>(next()) * bound;
    auto low = static_cast<std::uint64_t>(m);
    if (low < bound) {
      const std::uint64_t threshold = (0 - bound) % bound;
      while (low < threshold) {
        m = static_cast<uint128>(next()) * bound;
        low = static_cast<std::uint64_t>(m);
      }
    }
    return static_cast<std::uint64_t>(m >> 64);
  }

 private:
  std::uint64_t state_;
};

/// One well-mixed seed from several values (seed, epoch, ...).
inline std::uint64_t mix_seed(std::uint64_t a, std::uint64_t b) {
  SplitMix64 g(a ^ (b * 0xD1B54A32D192ED03ull));
  g.next();
  return g.next();
}

/// Fisher-Yates with SplitMix64::below.
template <typename It>
void shuffle(It first, It last, SplitMix64& rng) {
  const auto n = static_cast<std::uint64_t>(std::distance(first, last));
  for (std::uint64_t i = n; i > 1; --i) {
    const std::uint64_t j = rng.below(i);
    using std::swap;
    swap(first[static_cast<std::ptrdiff_t>(i - 1)], first[static_cast<std::ptrdiff_t>(j)]);
  }
}

}  // namespace gpufeed::pipeline
