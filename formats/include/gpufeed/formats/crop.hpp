#pragma once
// Crop rectangles for augmentation and evaluation, drawn reproducibly per sample.
#include <cstdint>

#include "gpufeed/formats/resize.hpp"

namespace gpufeed::formats {

/// A rectangle of whole source pixels.
struct CropBox {
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t width = 0;
  std::uint32_t height = 0;

  /// The same rectangle as a resize box on the image it was chosen on.
  [[nodiscard]] SourceBox box() const {
    return {double(x), double(y), double(x + width), double(y + height)};
  }
  /// The same rectangle on that image decoded at a reduced size (a DCT scale): coordinates
  /// scale by scaled / original in each dimension.
  [[nodiscard]] SourceBox box_scaled(std::uint32_t original_width, std::uint32_t original_height,
                                     std::uint32_t scaled_width, std::uint32_t scaled_height) const;
  friend bool operator==(const CropBox&, const CropBox&) = default;
};

/// Random numbers for one sample, the same on every run: a counter-based generator (SplitMix64
/// over a counter) keyed by a hash of (seed, epoch, sample, stream). The draws of a sample never
/// depend on other samples, thread count or timing. Separate streams give independent draws
/// for separate decisions (crop, flip).
class SampleRandom {
 public:
  SampleRandom(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sample,
               std::uint64_t stream = 0);

  /// 64 random bits.
  std::uint64_t next();
  /// Uniform in [low, high).
  double uniform(double low, double high);
  /// Uniform integer in [0, n), n > 0, without modulo bias.
  std::uint64_t below(std::uint64_t n);

 private:
  std::uint64_t key_;
  std::uint64_t counter_ = 0;
};

/// The streams the augmentations draw from.
inline constexpr std::uint64_t kCropStream = 0;
inline constexpr std::uint64_t kFlipStream = 1;

/// torchvision RandomResizedCrop's parameters (its defaults).
struct RandomResizedCropOptions {
  double min_scale = 0.08;  ///< of the image's area
  double max_scale = 1.0;
  double min_ratio = 3.0 / 4.0;  ///< width / height
  double max_ratio = 4.0 / 3.0;
  int attempts = 10;
};

/// torchvision's RandomResizedCrop.get_params for a `width` x `height` image: up to `attempts`
/// draws of an area fraction and a log-uniform aspect ratio, the first that fits is placed at
/// a uniform position; otherwise the central crop clamped to the ratio range. Drawn from
/// SampleRandom(seed, epoch, sample, kCropStream).
CropBox random_resized_crop(std::uint32_t width, std::uint32_t height, std::uint64_t seed,
                            std::uint64_t epoch, std::uint64_t sample,
                            const RandomResizedCropOptions& options = {});

/// A horizontal flip with probability 1/2, from SampleRandom(seed, epoch, sample, kFlipStream).
bool random_flip(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sample);

/// The central crop for evaluation: the largest rectangle with the target's aspect ratio, each
/// side times `fraction`, centered. fraction 0.875 on a square target is torchvision's
/// Resize(256) + CenterCrop(224).
CropBox center_crop(std::uint32_t width, std::uint32_t height, std::uint32_t target_width,
                    std::uint32_t target_height, double fraction = 1.0);

}  // namespace gpufeed::formats
