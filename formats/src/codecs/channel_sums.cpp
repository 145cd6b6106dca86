#include "gpufeed/formats/channel_sums.hpp"

#include <algorithm>
#include <cmath>

namespace gpufeed::formats {

namespace {

// Sums runs of interleaved bytes in lanes of 48 bytes: 48 is a multiple of every channel count
// from 1 to 4, so lane j holds channel j % channels, and the fixed-length inner loops
// vectorize. Sums and squares take separate passes so that each pass's 48 accumulators stay in
// registers. A run starts on a pixel and is at most kMaxRun bytes: the second pass finds it in
// the cache, and no 32-bit lane can overflow (1024 adds of 255^2 a lane, far below 2^32).
constexpr std::size_t kLanes = 48;
constexpr std::size_t kMaxRun = kLanes * 1024;

template <bool kSquare>
[[gnu::always_inline]] inline void add_lanes(const std::uint8_t* run, std::size_t bytes,
                                             std::uint32_t channels,
                                             std::array<std::uint64_t, 4>& out) {
  std::uint32_t lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= bytes; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      const std::uint32_t v = run[i + j];
      lanes[j] += kSquare ? v * v : v;
    }
  }
  for (std::size_t j = 0; i + j < bytes; ++j) {
    const std::uint32_t v = run[i + j];
    lanes[j] += kSquare ? v * v : v;
  }
  for (std::size_t j = 0; j < kLanes; ++j) out[j % channels] += lanes[j];
}

[[gnu::always_inline]] inline void add_run_body(const std::uint8_t* run, std::size_t bytes,
                                                std::uint32_t channels, ChannelSums& sums) {
  add_lanes<false>(run, bytes, channels, sums.sum);
  add_lanes<true>(run, bytes, channels, sums.sum_sq);
}

void add_run_baseline(const std::uint8_t* run, std::size_t bytes, std::uint32_t channels,
                      ChannelSums& sums) {
  add_run_body(run, bytes, channels, sums);
}

// The same loops compiled for AVX2, chosen at run time (not with ifunc, which sanitizers
// do not support).
[[gnu::target("avx2")]] void add_run_avx2(const std::uint8_t* run, std::size_t bytes,
                                          std::uint32_t channels, ChannelSums& sums) {
  add_run_body(run, bytes, channels, sums);
}

using AddRun = void (*)(const std::uint8_t*, std::size_t, std::uint32_t, ChannelSums&);

AddRun pick_add_run() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? add_run_avx2 : add_run_baseline;
}

}  // namespace

void ChannelSums::add(const ChannelSums& other) {
  pixels += other.pixels;
  for (std::size_t c = 0; c < sum.size(); ++c) {
    sum[c] += other.sum[c];
    sum_sq[c] += other.sum_sq[c];
  }
}

ChannelStats ChannelSums::stats(std::uint32_t channels) const {
  ChannelStats stats;
  const double n = pixels == 0 ? 1.0 : static_cast<double>(pixels);
  for (std::uint32_t c = 0; c < channels; ++c) {
    const double mean = static_cast<double>(sum[c]) / n;
    const double variance = static_cast<double>(sum_sq[c]) / n - mean * mean;
    stats.mean.push_back(static_cast<float>(mean));
    stats.stddev.push_back(static_cast<float>(std::sqrt(variance > 0 ? variance : 0.0)));
  }
  return stats;
}

void add_pixels(std::span<const std::uint8_t> pixels, std::uint32_t channels, ChannelSums& sums) {
  static const AddRun add_run = pick_add_run();
  for (std::size_t at = 0; at < pixels.size(); at += kMaxRun) {
    add_run(pixels.data() + at, std::min(kMaxRun, pixels.size() - at), channels, sums);
  }
  sums.pixels += pixels.size() / channels;
}

void add_pixels(const ConstImageView& image, ChannelSums& sums) {
  const std::size_t row_bytes = std::size_t{image.width} * image.channels;
  if (image.stride == row_bytes) {
    // Packed rows: one long run, which every 48-byte lane boundary keeps channel-aligned.
    add_pixels({image.data, row_bytes * image.height}, image.channels, sums);
    return;
  }
  for (std::uint32_t y = 0; y < image.height; ++y) {
    add_pixels({image.row(y), row_bytes}, image.channels, sums);
  }
}

}  // namespace gpufeed::formats
