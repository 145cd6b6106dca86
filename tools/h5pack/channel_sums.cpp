// Per-channel sums of decoded pixels: the mean and std h5pack stores in /meta.
#include <algorithm>
#include <cmath>

#include "h5pack/image_work.hpp"

namespace gpufeed::tools::h5pack {

namespace {

// Sums runs of interleaved RGB bytes in lanes of 48 bytes (16 pixels): lane j holds channel
// j % 3, and the fixed-length inner loops vectorize. Sums and squares take separate passes so
// that each pass's 48 accumulators stay in registers. A run is at most kMaxRun bytes: the
// second pass finds them in the cache, and no 32-bit lane can overflow (a row of up to 65535
// pixels is at most 4096 adds of 255^2 a lane, far below 2^32).
constexpr std::size_t kLanes = 48;
constexpr std::size_t kMaxRun = kLanes * 1024;

template <bool kSquare>
[[gnu::always_inline]] inline void add_lanes(const std::uint8_t* row, std::size_t bytes,
                                             std::uint64_t (&out)[3]) {
  std::uint32_t lanes[kLanes] = {};
  std::size_t i = 0;
  for (; i + kLanes <= bytes; i += kLanes) {
    for (std::size_t j = 0; j < kLanes; ++j) {
      const std::uint32_t v = row[i + j];
      lanes[j] += kSquare ? v * v : v;
    }
  }
  for (std::size_t j = 0; i + j < bytes; ++j) {
    const std::uint32_t v = row[i + j];
    lanes[j] += kSquare ? v * v : v;
  }
  for (std::size_t j = 0; j < kLanes; ++j) out[j % 3] += lanes[j];
}

[[gnu::always_inline]] inline void add_row_body(const std::uint8_t* row, std::size_t bytes,
                                                ChannelSums& sums) {
  std::uint64_t sum[3] = {};
  std::uint64_t sum_sq[3] = {};
  add_lanes<false>(row, bytes, sum);
  add_lanes<true>(row, bytes, sum_sq);
  for (std::size_t c = 0; c < 3; ++c) {
    sums.sum[c] += sum[c];
    sums.sum_sq[c] += sum_sq[c];
  }
}

void add_row_baseline(const std::uint8_t* row, std::size_t bytes, ChannelSums& sums) {
  add_row_body(row, bytes, sums);
}

// The same loops compiled for AVX2, chosen at run time (not with ifunc, which sanitizers
// do not support).
[[gnu::target("avx2")]] void add_row_avx2(const std::uint8_t* row, std::size_t bytes,
                                          ChannelSums& sums) {
  add_row_body(row, bytes, sums);
}

using AddRow = void (*)(const std::uint8_t*, std::size_t, ChannelSums&);

AddRow pick_add_row() {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") ? add_row_avx2 : add_row_baseline;
}

}  // namespace

void ChannelSums::add(const ChannelSums& other) {
  pixels += other.pixels;
  for (std::size_t c = 0; c < 3; ++c) {
    sum[c] += other.sum[c];
    sum_sq[c] += other.sum_sq[c];
  }
}

formats::ChannelStats ChannelSums::stats() const {
  formats::ChannelStats stats;
  const double n = pixels == 0 ? 1.0 : static_cast<double>(pixels);
  for (std::size_t c = 0; c < 3; ++c) {
    const double mean = static_cast<double>(sum[c]) / n;
    const double variance = static_cast<double>(sum_sq[c]) / n - mean * mean;
    stats.mean.push_back(static_cast<float>(mean));
    stats.std.push_back(static_cast<float>(std::sqrt(variance > 0 ? variance : 0.0)));
  }
  return stats;
}

void add_pixels(const formats::ConstImageView& rgb, ChannelSums& sums) {
  static const AddRow add_run = pick_add_row();
  const std::size_t row_bytes = std::size_t{rgb.width} * 3;
  if (rgb.stride == row_bytes) {
    // Packed rows: one long run, which every 48-byte lane boundary keeps channel-aligned.
    const std::size_t total = row_bytes * rgb.height;
    for (std::size_t at = 0; at < total; at += kMaxRun) {
      add_run(rgb.data + at, std::min(kMaxRun, total - at), sums);
    }
  } else {
    for (std::uint32_t y = 0; y < rgb.height; ++y) add_run(rgb.row(y), row_bytes, sums);
  }
  sums.pixels += std::uint64_t{rgb.width} * rgb.height;
}

void add_image(const formats::ConstImageView& image, ChannelSums& sums) {
  if (image.channels == 3) return add_pixels(image, sums);
  ChannelSums gray;
  for (std::uint32_t y = 0; y < image.height; ++y) {
    const std::uint8_t* row = image.row(y);
    std::uint64_t sum = 0;
    std::uint64_t sum_sq = 0;
    for (std::uint32_t x = 0; x < image.width; ++x) {
      const std::uint32_t v = row[std::size_t{x} * image.channels];
      sum += v;
      sum_sq += v * v;
    }
    gray.sum.fill(gray.sum[0] + sum);
    gray.sum_sq.fill(gray.sum_sq[0] + sum_sq);
  }
  gray.pixels = std::uint64_t{image.width} * image.height;
  sums.add(gray);
}

}  // namespace gpufeed::tools::h5pack
