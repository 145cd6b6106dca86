#pragma once
// What a batch of GPU-decoded images needs, planned on the host: for each image the region the
// JPEG engines decode (only what the crop and the filter read) and the crop-resize kernel's
// taps, packed into the flat tables the kernel reads, in parts that fit a memory budget.
#include <cstdint>
#include <vector>

#include "cuda/crop_resize.hpp"
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/pipeline/geometry.hpp"

namespace gpufeed::pipeline::detail {

/// A rectangle of a stored image, in its pixels.
struct Roi {
  std::uint32_t x = 0, y = 0, width = 0, height = 0;
  friend bool operator==(const Roi&, const Roi&) = default;
};

/// One image's decode and resample. `roi` covers every pixel the taps read, widened to whole
/// 16-pixel blocks (a JPEG's largest MCU) within the image; `whole` when it is all of it.
struct ImagePlan {
  Roi roi;
  bool whole = false;
  std::int32_t row0 = 0;  ///< the first source row the vertical taps read
  std::uint32_t rows = 0;
  formats::ResizeTaps horizontal, vertical;
  Placement placement;
};

/// The plan for `placement` of a `width` x `height` image (formats::Resizer's taps for its box
/// into its inner rectangle, which must not be empty).
void plan_image(const Placement& placement, std::uint32_t width, std::uint32_t height,
                formats::ResizeFilter filter, ImagePlan& plan);

/// The tables of one kernel launch: the images, their taps, and the bytes their decoded regions
/// and scratch rows take. Reused batch after batch.
class CropResizeBatch {
 public:
  /// Each image's decoded region starts at a multiple of this many bytes.
  static constexpr std::uint64_t kAlignment = 256;

  void clear();
  /// Adds `plan` for batch position `position`. False, with nothing added, when its region and
  /// scratch would take the batch past `budget` bytes and the batch holds an image already (one
  /// image alone is always taken).
  bool add(const ImagePlan& plan, std::uint32_t position, std::uint64_t budget);

  [[nodiscard]] const std::vector<CropResizeImage>& images() const { return images_; }
  [[nodiscard]] const std::vector<std::int32_t>& taps() const { return taps_; }
  [[nodiscard]] const std::vector<Roi>& regions() const { return regions_; }
  /// Whether image i's region is its whole image (nvJPEG then decodes without a ROI).
  [[nodiscard]] bool whole(std::size_t i) const { return whole_[i] != 0; }
  [[nodiscard]] std::uint64_t roi_bytes() const { return roi_bytes_; }
  [[nodiscard]] std::uint64_t tmp_bytes() const { return tmp_bytes_; }
  [[nodiscard]] bool empty() const { return images_.empty(); }
  [[nodiscard]] std::uint32_t size() const { return static_cast<std::uint32_t>(images_.size()); }

 private:
  std::vector<CropResizeImage> images_;
  std::vector<Roi> regions_;  // the images' decoded regions, for nvJPEG
  std::vector<std::uint8_t> whole_;
  std::vector<std::int32_t> taps_;
  std::uint64_t roi_bytes_ = 0;
  std::uint64_t tmp_bytes_ = 0;
};

/// Runs the kernel's arithmetic on the CPU: what the GPU writes for `batch` (the decoded regions
/// at `regions`, laid out as the batch says) into `out` (samples of `out_width` x `out_height`
/// x 3 at their positions). The reference the kernel is tested against.
void crop_resize_on_host(const CropResizeBatch& batch, const std::uint8_t* regions,
                         std::uint8_t* out, std::uint32_t out_width, std::uint32_t out_height);

}  // namespace gpufeed::pipeline::detail
