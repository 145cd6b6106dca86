#pragma once
// Per-channel sums of 8-bit pixels, exact in integers: what a dataset's mean and standard
// deviation per channel are made of.
#include <array>
#include <cstdint>
#include <span>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/image.hpp"

namespace gpufeed::formats {

/// The sums of the values and of the squared values of each channel (up to 4) of interleaved
/// 8-bit pixels, and how many pixels they cover. A plain value: one per thread, then add()ed.
struct ChannelSums {
  std::uint64_t pixels = 0;
  std::array<std::uint64_t, 4> sum{};
  std::array<std::uint64_t, 4> sum_sq{};

  void add(const ChannelSums& other);
  /// Mean and standard deviation of the first `channels` channels, 0-255 scale.
  [[nodiscard]] ChannelStats stats(std::uint32_t channels) const;
};

/// Adds interleaved pixels of `channels` channels (1 to 4) to `sums`.
void add_pixels(std::span<const std::uint8_t> pixels, std::uint32_t channels, ChannelSums& sums);
/// Adds the pixels of `image` (1 to 4 channels) to `sums`.
void add_pixels(const ConstImageView& image, ChannelSums& sums);

}  // namespace gpufeed::formats
