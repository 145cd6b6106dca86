#pragma once
// Resizing uint8 HWC images the way Pillow's Image.resize does: separable convolution whose
// filter support grows with the downscale factor (antialiasing), 8-bit fixed point.
#include <cstdint>
#include <vector>

#include "gpufeed/formats/image.hpp"

namespace gpufeed::formats {

enum class ResizeFilter {
  bilinear,  ///< triangle filter: Pillow's Image.BILINEAR (antialiased when downscaling)
  area,      ///< box filter: Pillow's Image.BOX, the mean over each output pixel's footprint
  bicubic,   ///< Pillow's Image.BICUBIC (a = -0.5, antialiased when downscaling)
};

/// A region of the source in pixel-edge coordinates (Pillow's `box`): the whole of a W x H
/// image is {0, 0, W, H}. Fractions are allowed, so a crop chosen on the full-size image maps
/// exactly onto an image decoded at a reduced DCT scale.
struct SourceBox {
  double left = 0;
  double top = 0;
  double right = 0;
  double bottom = 0;

  [[nodiscard]] double width() const { return right - left; }
  [[nodiscard]] double height() const { return bottom - top; }
};

/// Part of a source image held in memory: `pixels` are the source's columns from x and rows
/// from y on, of a `source_width` x `source_height` source.
struct SourcePart {
  ConstImageView pixels;
  std::uint32_t x = 0;
  std::uint32_t y = 0;
  std::uint32_t source_width = 0;
  std::uint32_t source_height = 0;
};

/// The taps of one dimension of a resize, as Resizer computes them (Pillow's weights, 22-bit
/// fixed point): output i reads `count[i]` inputs from `first[i]`, weighted by
/// weights[i * size ...] (zero past count[i]; `size` is even). A sum of products starts at
/// 1 << 21 and is shifted right by 22 and clamped to 0-255: that is Pillow's 8-bit pixel.
struct ResizeTaps {
  int size = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<std::int32_t> weights;
};

/// Computes the taps that resample source coordinates [in0, in1) of an `in_size` source into
/// `out_size` outputs with `filter` into `taps` (its vectors are reused).
void compute_resize_taps(int in_size, double in0, double in1, int out_size, ResizeFilter filter,
                         ResizeTaps& taps);

/// Resizes images into destinations someone else owns (a batch slot) and keeps its scratch
/// buffers between calls, so in steady state it allocates nothing. One per thread; not
/// thread-safe. Results equal Pillow's resize(size, filter, box) for the same filter (both
/// compute the same weights and round the same fixed-point sums).
class Resizer {
 public:
  /// Resizes all of `source` to the size of `destination`. Channels must match (1-4).
  void resize(const ConstImageView& source, const ImageView& destination, ResizeFilter filter);
  /// Resizes the `box` region of `source`, which must lie inside it and not be empty.
  void resize(const ConstImageView& source, const SourceBox& box, const ImageView& destination,
              ResizeFilter filter);

  /// The source pixels resize() reads for `box` of a `source_width` x `source_height` source
  /// resized to `out_width` x `out_height`: the box and the filter's reach around it. A decoder
  /// that produces only these saves the rest (JpegDecoder::decode_region).
  PixelRect footprint(std::uint32_t source_width, std::uint32_t source_height, const SourceBox& box,
                      std::uint32_t out_width, std::uint32_t out_height, ResizeFilter filter);
  /// Resizes `box` of a source of which only `part` is in memory; `part` must hold the
  /// footprint(). The result equals resizing the whole source.
  void resize(const SourcePart& part, const SourceBox& box, const ImageView& destination,
              ResizeFilter filter);

 private:
  /// The taps of one dimension and the arguments they were computed for: the same resize
  /// again reuses them.
  struct Taps : ResizeTaps {
    int in_size = -1;
    double in0 = 0, in1 = 0;
    int out_size = -1;
    ResizeFilter filter = ResizeFilter::bilinear;
  };
  static void compute_taps(int in_size, double in0, double in1, int out_size, ResizeFilter filter,
                           Taps& taps);
  void plan(std::uint32_t source_width, std::uint32_t source_height, const SourceBox& box,
            std::uint32_t out_width, std::uint32_t out_height, ResizeFilter filter);
  [[nodiscard]] PixelRect planned_footprint(const SourceBox& box, std::uint32_t source_width,
                                            std::uint32_t source_height, std::uint32_t out_width,
                                            std::uint32_t out_height) const;
  void resample(const SourcePart& part, const SourceBox& box, const ImageView& destination);
  void horizontal_pass(const SourcePart& part, int first_row, int rows, const ImageView& out);
  void vertical_pass(const ConstImageView& rows, int row_offset,
                     const ImageView& destination) const;

  Taps horizontal_;
  Taps vertical_;
  std::vector<std::uint8_t> intermediate_;
  std::vector<std::int32_t> kernel_scratch_;
};

/// Resizer::resize with a temporary Resizer.
void resize(const ConstImageView& source, const SourceBox& box, const ImageView& destination,
            ResizeFilter filter);
void resize(const ConstImageView& source, const ImageView& destination, ResizeFilter filter);

}  // namespace gpufeed::formats
