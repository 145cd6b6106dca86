#pragma once
// Deterministic, image-like synthetic datasets: a smooth per-sample gradient plus noise from a
// counter-based hash of (seed, sample, pixel). The same bytes on every machine and for every
// thread count, and any range of samples can be made on any thread.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/pack_file.hpp"
#include "gpufeed/formats/sample_shape.hpp"

namespace gpufeed::formats {

struct SyntheticSpec {
  std::uint64_t samples = 0;
  SampleShape shape;
};

/// True when `text` has the form N:HxWxC (digits only; values are not checked).
bool looks_like_synthetic_spec(const std::string& text);
/// Parses "N:HxWxC", e.g. "20000:64x64x3". Throws UsageError naming the text.
SyntheticSpec parse_synthetic_spec(const std::string& text);
/// "20000:64x64x3"
std::string to_string(const SyntheticSpec& spec);

/// SplitMix64's finalizer: a bijective 64-bit mix.
std::uint64_t mix64(std::uint64_t x);
/// A stateless hash of (seed, a, b).
std::uint64_t hash3(std::uint64_t seed, std::uint64_t a, std::uint64_t b);

/// Fills `count` samples from sample `first` into `out` (count * shape.bytes() bytes, NHWC).
void fill_synthetic(const SampleShape& shape, std::uint64_t seed, std::uint64_t first,
                    std::uint64_t count, std::span<std::uint8_t> out);

/// label(i) = hash(seed, i) % classes.
std::vector<std::int64_t> synthetic_labels(std::uint64_t samples, std::uint64_t seed,
                                           std::uint32_t classes);
/// "class0", "class1", ...
std::vector<std::string> synthetic_class_names(std::uint32_t classes);

/// Everything pack_file() needs to write a synthetic dataset.
PackInput synthetic_input(const SyntheticSpec& spec, std::uint64_t seed, std::uint32_t classes);

}  // namespace gpufeed::formats
