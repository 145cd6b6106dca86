#pragma once
// torchvision's geometric transforms, fused into the decode: what part of each stored image a
// sample shows, drawn per (seed, epoch, sample) with torchvision's parameter distributions.
#include <cstdint>
#include <string>

#include "gpufeed/formats/resize.hpp"
#include "gpufeed/formats/sample_shape.hpp"

namespace gpufeed::pipeline {

/// LoaderOptions::image.geometry: Resize, then one crop, then flips, as torchvision composes them
/// (`Resize(256), CenterCrop(224)`, `RandomResizedCrop(224, scale, ratio)`, `RandomCrop(32,
/// padding=4)`, `RandomHorizontalFlip(p)`, `RandomVerticalFlip(p)`). The loader never
/// materializes the intermediate images: each sample's crop becomes one box of the stored
/// image, resized once (Pillow's antialiased filters) straight into the batch slot, and a JPEG
/// is decoded at the smallest DCT scale and only over the rows the box needs. Padding is
/// zeros (torchvision's fill=0). Plain data: copy it freely.
struct Geometry {
  enum class Resize : std::uint8_t {
    none,
    shorter,  ///< Resize(int): the shorter side becomes `resize_height`, the other follows
    exact,    ///< Resize((h, w))
  };
  enum class Crop : std::uint8_t {
    none,
    center,          ///< CenterCrop((h, w)), padded with zeros where the image is smaller
    random,          ///< RandomCrop((h, w), padding, pad_if_needed)
    random_resized,  ///< RandomResizedCrop((h, w), scale, ratio)
  };
  Resize resize = Resize::none;
  std::uint32_t resize_height = 0;  ///< shorter: the side; exact: the height
  std::uint32_t resize_width = 0;   ///< exact: the width
  std::uint32_t resize_max = 0;     ///< shorter: Resize's max_size for the longer side; 0: none
  Crop crop = Crop::none;
  std::uint32_t crop_height = 0;  ///< the crop's output size
  std::uint32_t crop_width = 0;
  /// random: zero padding left, top, right, bottom (RandomCrop's padding).
  std::uint32_t pad_left = 0, pad_top = 0, pad_right = 0, pad_bottom = 0;
  bool pad_if_needed = false;                ///< random: pad an image smaller than the crop
  double scale_min = 0.08, scale_max = 1.0;  ///< random_resized: area fraction
  double ratio_min = 3.0 / 4.0, ratio_max = 4.0 / 3.0;  ///< random_resized: width / height
  double hflip = 0.0;                                   ///< probability of a left-right mirror
  double vflip = 0.0;                                   ///< probability of an upside-down mirror

  /// Whether any of it is set (the loader then ignores `augment`'s crops).
  [[nodiscard]] bool active() const {
    return resize != Resize::none || crop != Crop::none || hflip > 0 || vflip > 0;
  }
  /// Throws OptionError naming the field for a value torchvision would refuse (an empty size,
  /// a probability outside [0, 1], scale or ratio ranges out of order).
  void validate() const;
  /// The size every sample comes out at: the crop's, else the exact resize's, else (Resize to
  /// a shorter side or nothing) the stored image's resized: only defined for images of one
  /// size, `stored`; 0x0 when `stored` is unknown (a jpeg file) and the size depends on it.
  [[nodiscard]] formats::SampleShape output(const formats::SampleShape& stored) const;
  /// torchvision's spelling of it, for messages and stats: "Resize(256) CenterCrop(224)".
  [[nodiscard]] std::string describe() const;
};

/// Parses none | center | random | random-resized; throws OptionError naming `crop`.
Geometry::Crop parse_crop(const std::string& text);
std::string to_string(Geometry::Crop crop);
/// Parses "LOW,HIGH" (crop_scale, crop_ratio) into `low` and `high`; throws OptionError
/// naming `field`.
void parse_range(const std::string& field, const std::string& text, double& low, double& high);
/// Sets resize from "N" (the shorter side) or "HxW"; "none" clears it.
void parse_resize(const std::string& text, Geometry& geometry);
/// Sets the padding from "N" (every side), "H,V" (left/right, top/bottom) or "L,T,R,B".
void parse_padding(const std::string& text, Geometry& geometry);

/// Where one sample's pixels come from: `box` of the stored image (pixel-edge coordinates, in
/// stored pixels) resized into the `inner` rectangle of the output; the output outside `inner`
/// is padding (zeros). Then mirrored as the flags say.
struct Placement {
  formats::SourceBox box;
  std::uint32_t inner_x = 0, inner_y = 0, inner_width = 0, inner_height = 0;
  bool hflip = false;
  bool vflip = false;
  /// No resampling needed: the box is whole pixels of the inner rectangle's size.
  [[nodiscard]] bool is_copy() const;
};

/// The placement of `sample` of `epoch` for a `width` x `height` stored image and an output of
/// `out_width` x `out_height` (Geometry::output). Draws come from formats::SampleRandom
/// streams of (seed, epoch, sample): never from other samples, threads or timing. Throws
/// UsageError when the image cannot take the crop (RandomCrop larger than the padded image,
/// as torchvision refuses it); the loader reports it as the sample's FormatError.
Placement place(const Geometry& geometry, std::uint32_t width, std::uint32_t height,
                std::uint32_t out_width, std::uint32_t out_height, std::uint64_t seed,
                std::uint64_t epoch, std::uint64_t sample);

/// Renders `placement` into `out` (the whole output sample, HWC, densely packed: stride = width
/// x channels): zeros outside the inner
/// rectangle, the box of the source resized (or copied, Placement::is_copy) into it, then the
/// flips. `part` holds at least the pixels `resizer.footprint()` names for the box.
void render(const formats::SourcePart& part, const Placement& placement,
            const formats::ImageView& out, formats::Resizer& resizer, formats::ResizeFilter filter);

/// torchvision's Resize(int) output size for a `width` x `height` image: the shorter side
/// becomes `side`, the longer `int(side * long / short)`, both scaled down when the longer
/// exceeds `max_size` (0: no limit).
void shorter_side_size(std::uint32_t width, std::uint32_t height, std::uint32_t side,
                       std::uint32_t max_size, std::uint32_t& out_width, std::uint32_t& out_height);

/// The random stream of the vertical flip (the crop and horizontal flip use formats'
/// kCropStream and kFlipStream).
inline constexpr std::uint64_t kVFlipStream = 2;

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::Geometry;
using pipeline::to_string;
}  // namespace gpufeed
