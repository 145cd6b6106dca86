#include "gpufeed/formats/crop.hpp"
#include "gpufeed/base/errors.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpufeed::formats {

namespace {

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// SplitMix64's finalizer: a bijection whose output bits each depend on every input bit.
std::uint64_t mix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Python's round(): halves go to the even neighbour (the default rounding mode).
std::uint32_t round_half_even(double value) {
  return static_cast<std::uint32_t>(std::max(0.0, std::nearbyint(value)));
}

CropBox centered(std::uint32_t width, std::uint32_t height, std::uint32_t crop_width,
                 std::uint32_t crop_height) {
  crop_width = std::clamp<std::uint32_t>(crop_width, 1, width);
  crop_height = std::clamp<std::uint32_t>(crop_height, 1, height);
  return {(width - crop_width) / 2, (height - crop_height) / 2, crop_width, crop_height};
}

}  // namespace

SourceBox CropBox::box_scaled(std::uint32_t original_width, std::uint32_t original_height,
                              std::uint32_t scaled_width, std::uint32_t scaled_height) const {
  const double sx = double(scaled_width) / original_width;
  const double sy = double(scaled_height) / original_height;
  return {std::min(x * sx, double(scaled_width)), std::min(y * sy, double(scaled_height)),
          std::min((x + width) * sx, double(scaled_width)),
          std::min((y + height) * sy, double(scaled_height))};
}

SampleRandom::SampleRandom(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sample,
                           std::uint64_t stream)
    : key_(mix(mix(mix(mix(seed + kGolden) ^ epoch) ^ sample) ^ stream)) {}

std::uint64_t SampleRandom::next() {
  return mix(key_ + ++counter_ * kGolden);
}

double SampleRandom::uniform(double low, double high) {
  const double unit = static_cast<double>(next() >> 11) * 0x1.0p-53;
  return low + (high - low) * unit;
}

std::uint64_t SampleRandom::below(std::uint64_t n) {
  if (n == 0) throw UsageError("SampleRandom::below needs n > 0");
  const std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  const std::uint64_t limit = max - max % n;  // draws at or above it would favour small values
  std::uint64_t draw = next();
  while (draw >= limit) draw = next();
  return draw % n;
}

CropBox random_resized_crop(std::uint32_t width, std::uint32_t height, std::uint64_t seed,
                            std::uint64_t epoch, std::uint64_t sample,
                            const RandomResizedCropOptions& options) {
  if (width == 0 || height == 0) throw UsageError("cannot crop an empty image");
  SampleRandom random(seed, epoch, sample, kCropStream);
  const double area = double(width) * height;
  const double log_min = std::log(options.min_ratio);
  const double log_max = std::log(options.max_ratio);
  for (int attempt = 0; attempt < options.attempts; ++attempt) {
    const double target_area = area * random.uniform(options.min_scale, options.max_scale);
    const double ratio = std::exp(random.uniform(log_min, log_max));
    const std::uint32_t w = round_half_even(std::sqrt(target_area * ratio));
    const std::uint32_t h = round_half_even(std::sqrt(target_area / ratio));
    if (w > 0 && w <= width && h > 0 && h <= height) {
      const auto y = static_cast<std::uint32_t>(random.below(height - h + 1));
      const auto x = static_cast<std::uint32_t>(random.below(width - w + 1));
      return {x, y, w, h};
    }
  }
  const double in_ratio = double(width) / height;
  if (in_ratio < options.min_ratio) {
    return centered(width, height, width, round_half_even(width / options.min_ratio));
  }
  if (in_ratio > options.max_ratio) {
    return centered(width, height, round_half_even(height * options.max_ratio), height);
  }
  return {0, 0, width, height};
}

bool random_flip(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sample) {
  return (SampleRandom(seed, epoch, sample, kFlipStream).next() >> 63) != 0;
}

CropBox center_crop(std::uint32_t width, std::uint32_t height, std::uint32_t target_width,
                    std::uint32_t target_height, double fraction) {
  if (width == 0 || height == 0 || target_width == 0 || target_height == 0 || fraction <= 0 ||
      fraction > 1) {
    throw UsageError("center_crop needs non-empty sizes and a fraction in (0, 1]");
  }
  const double aspect = double(target_width) / target_height;
  double crop_width = width;
  double crop_height = width / aspect;
  if (crop_height > height) {
    crop_height = height;
    crop_width = height * aspect;
  }
  return centered(width, height, round_half_even(crop_width * fraction),
                  round_half_even(crop_height * fraction));
}

}  // namespace gpufeed::formats
