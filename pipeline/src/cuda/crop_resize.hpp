#pragma once
// The crop-resize kernel's work, shared by the CUDA kernel and the CPU tests: one table entry
// per image and the arithmetic of one output pixel, in Pillow's 8-bit fixed point (the same
// sums as formats::Resizer, so the kernel's pixels equal the CPU path's for the same decoded
// pixels). Plain C++17 with host-device functions: no CUDA types.
#include <cstdint>

#if defined(__CUDACC__)
#define GPUFEED_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define GPUFEED_HOST_DEVICE inline
#endif

namespace gpufeed::pipeline::detail {

/// Fraction bits of the taps' weights (formats' kPrecisionBits, Pillow's PRECISION_BITS).
inline constexpr int kCropResizePrecision = 22;

/// One image of a batch: where its decoded region is, its taps, where its output goes.
/// Coordinates are in the stored image's pixels; the decoded region (ROI) holds the columns
/// roi_x.. and rows roi_y.. of it, interleaved RGB, `roi_pitch` bytes a row.
struct CropResizeImage {
  std::uint64_t roi_offset = 0;  ///< bytes into the decode buffer
  std::uint64_t tmp_offset = 0;  ///< bytes into the scratch of horizontally resampled rows
  std::uint32_t roi_pitch = 0;
  std::int32_t roi_x = 0, roi_y = 0;
  std::int32_t row0 = 0;   ///< the first source row the vertical pass reads
  std::uint32_t rows = 0;  ///< how many (the rows of the scratch)
  std::uint32_t inner_x = 0, inner_y = 0, inner_width = 0, inner_height = 0;
  std::uint32_t h_taps = 0;  ///< index into the taps table: first[w], count[w], weights[w * h_size]
  std::uint32_t v_taps = 0;  ///< the same for the inner height
  std::uint32_t h_size = 0, v_size = 0;
  std::uint32_t position = 0;  ///< the sample's place in the batch
  std::uint32_t hflip = 0, vflip = 0;
};

GPUFEED_HOST_DEVICE std::uint8_t crop_resize_clip8(std::int32_t sum) {
  const std::int32_t v = sum >> kCropResizePrecision;
  return static_cast<std::uint8_t>(v < 0 ? 0 : (v > 255 ? 255 : v));
}

/// The horizontal pass: scratch pixel (`row`, `x`) of `im` (row < im.rows, x < inner_width),
/// three channels, from the decoded region at `roi`.
GPUFEED_HOST_DEVICE void crop_resize_horizontal(const CropResizeImage& im, const std::int32_t* taps,
                                                const std::uint8_t* roi, std::uint8_t* tmp,
                                                std::uint32_t row, std::uint32_t x) {
  const std::int32_t* first = taps + im.h_taps;
  const std::int32_t* count = first + im.inner_width;
  const std::int32_t* weights = count + im.inner_width + x * im.h_size;
  const std::uint8_t* in = roi + im.roi_offset +
                           std::uint64_t(im.row0 + std::int32_t(row) - im.roi_y) * im.roi_pitch +
                           std::uint64_t(first[x] - im.roi_x) * 3;
  std::int32_t r = 1 << (kCropResizePrecision - 1), g = r, b = r;
  for (std::int32_t t = 0; t < count[x]; ++t, in += 3) {
    const std::int32_t w = weights[t];
    r += in[0] * w;
    g += in[1] * w;
    b += in[2] * w;
  }
  std::uint8_t* out = tmp + im.tmp_offset + (std::uint64_t(row) * im.inner_width + x) * 3;
  out[0] = crop_resize_clip8(r);
  out[1] = crop_resize_clip8(g);
  out[2] = crop_resize_clip8(b);
}

/// The vertical pass and the placement: output pixel (`y`, `x`) of an `out_width` x
/// `out_height` sample (HWC, three channels) at `out`: zero outside the inner rectangle, the
/// flips applied to the whole sample as formats' render() does.
GPUFEED_HOST_DEVICE void crop_resize_output(const CropResizeImage& im, const std::int32_t* taps,
                                            const std::uint8_t* tmp, std::uint8_t* out,
                                            std::uint32_t out_width, std::uint32_t out_height,
                                            std::uint32_t y, std::uint32_t x) {
  std::uint8_t* px = out + (std::uint64_t(y) * out_width + x) * 3;
  const std::uint32_t sy = im.vflip ? out_height - 1 - y : y;  // before the flips
  const std::uint32_t sx = im.hflip ? out_width - 1 - x : x;
  if (sy < im.inner_y || sx < im.inner_x || sy - im.inner_y >= im.inner_height ||
      sx - im.inner_x >= im.inner_width) {
    px[0] = px[1] = px[2] = 0;
    return;
  }
  const std::uint32_t iy = sy - im.inner_y, ix = sx - im.inner_x;
  const std::int32_t* first = taps + im.v_taps;
  const std::int32_t* count = first + im.inner_height;
  const std::int32_t* weights = count + im.inner_height + iy * im.v_size;
  const std::uint64_t stride = std::uint64_t(im.inner_width) * 3;
  const std::uint8_t* in =
      tmp + im.tmp_offset + std::uint64_t(first[iy] - im.row0) * stride + ix * 3;
  std::int32_t r = 1 << (kCropResizePrecision - 1), g = r, b = r;
  for (std::int32_t t = 0; t < count[iy]; ++t, in += stride) {
    const std::int32_t w = weights[t];
    r += in[0] * w;
    g += in[1] * w;
    b += in[2] * w;
  }
  px[0] = crop_resize_clip8(r);
  px[1] = crop_resize_clip8(g);
  px[2] = crop_resize_clip8(b);
}

/// Enqueues the crop-resize kernel for `count` images (the table at `images` and the taps at
/// `taps`, both in device memory) from the decoded regions at `regions` through `scratch` into
/// `out` (samples of `out_width` x `out_height` x 3 at their positions) on `stream` (a
/// cudaStream_t). Throws CudaError when a launch fails. In crop_resize_kernel.cu.
void launch_crop_resize(const CropResizeImage* images, std::uint32_t count,
                        const std::int32_t* taps, const std::uint8_t* regions,
                        std::uint8_t* scratch, std::uint8_t* out, std::uint32_t out_width,
                        std::uint32_t out_height, void* stream);

}  // namespace gpufeed::pipeline::detail
