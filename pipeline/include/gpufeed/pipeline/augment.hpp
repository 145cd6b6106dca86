#pragma once
#include <array>
#include <cstdint>
#include <string>

namespace gpufeed::pipeline {

/// What normalization does to one sample beyond (x - mean) / std: take the output window at
/// (crop_y, crop_x) of the stored image, and mirror it left-right when `flip` is set.
struct SampleAugment {
  std::uint32_t crop_y = 0;
  std::uint32_t crop_x = 0;
  std::uint32_t flip = 0;  ///< 0 or 1 (a 32-bit field keeps the struct 12 bytes, no padding)
};

/// LoaderOptions::image.augment: what the loader does to every sample it delivers.
enum class Augment {
  none,       ///< the image as stored (jpeg: resized to the output size)
  flip,       ///< mirrored left-right with probability 1/2, drawn per (seed, epoch, sample)
  crop_flip,  ///< torchvision RandomResizedCrop + flip (jpeg layout: the crop is resized)
  center,     ///< evaluation: the central 87.5% crop, resized (jpeg layout)
};
inline constexpr std::array<const char*, 4> kAugmentNames{"none", "flip", "crop-flip", "center"};
std::string to_string(Augment augment);
/// Parses none | flip | crop-flip | center; throws UsageError otherwise.
Augment parse_augment(const std::string& text);

/// Whether echo `repeat` (1, 2, ...) of `sample` is mirrored relative to the sample's fresh
/// delivery in `epoch`: a fair coin per (seed, epoch, sample, repeat); false for repeat 0.
/// Re-augmented echoes (LoaderOptions::echo.reaugment) show each repeat with this flip.
bool echo_flip(std::uint64_t seed, std::uint64_t epoch, std::uint64_t sample, std::uint32_t repeat);

/// LoaderOptions::on_error: what a sample that cannot be decoded does to the run. A read that
/// fails (an I/O error of the disk, formats::IoError) stops the run either way: the disk is at
/// fault, not the sample, and replacing samples would hide it.
enum class OnError {
  fail,  ///< stop with an error naming the file and sample
  skip,  ///< count it and deliver another sample in its place, so batches stay full
};
OnError parse_on_error(const std::string& text);
std::string to_string(OnError on_error);

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::Augment;
using pipeline::kAugmentNames;
using pipeline::OnError;
using pipeline::parse_augment;
using pipeline::parse_on_error;
using pipeline::to_string;
}  // namespace gpufeed
