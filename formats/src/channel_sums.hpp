#pragma once
// Per-channel pixel sums for a dataset's mean and standard deviation.
#include <cstdint>
#include <span>
#include <vector>

namespace gpufeed::formats::detail {

/// Sums the values and squared values of each channel of interleaved (NHWC) pixels. Exact:
/// the sums are formed from per-value counts, and one chunk's counts stay far below 2^53.
void channel_sums(std::span<const std::uint8_t> pixels, std::uint32_t channels,
                  std::vector<double>& sum, std::vector<double>& sum_sq);

}  // namespace gpufeed::formats::detail
