#pragma once
// What one normalize pass does, on the CPU or the GPU: uint8 samples of `in` (NHWC or NCHW) to
// an out_height x out_width window in `out_layout`, as (x - mean[c]) / std[c] in `dtype`, with an
// optional per-sample crop offset and horizontal flip (SampleAugment).
#include <cstdint>

#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/pipeline/augment.hpp"
#include "gpufeed/pipeline/dtype.hpp"
#include "gpufeed/pipeline/normalize.hpp"

namespace gpufeed::pipeline {

struct NormalizeSpec {
  formats::SampleShape in;       ///< stored sample shape and layout
  std::uint32_t out_height = 0;  ///< output window; equal to in.height when nothing is cropped
  std::uint32_t out_width = 0;   ///< output window; equal to in.width when nothing is cropped
  formats::Layout out_layout = formats::Layout::nchw;
  DType dtype = DType::float32;
  NormalizeParams params;  ///< mean and 1/std per channel; params.channels == in.channels

  /// Throws UsageError for an empty input, 0 or more than 4 channels, params for another
  /// channel count or with non-finite constants, an empty window or one larger than the input,
  /// or a sample (input or output) of 2^31 elements or more.
  void validate() const;
  /// Elements of one output sample: out_height * out_width * channels.
  [[nodiscard]] std::uint64_t out_elements() const {
    return std::uint64_t{out_height} * out_width * in.channels;
  }
  /// Bytes of one output sample.
  [[nodiscard]] std::uint64_t out_bytes() const { return out_elements() * dtype_size(dtype); }
};

/// The plain reference for normalize kernels: for every output element, (x - mean) * inv_std in
/// double precision, rounded once (to nearest even) to `spec.dtype`. Output element (s, c, y, x)
/// is at ((s*C + c)*out_height + y)*out_width + x for NCHW and ((s*out_height + y)*out_width +
/// x)*C + c for NHWC; it reads input pixel (crop_y + y, flip ? crop_x + out_width - 1 - x :
/// crop_x + x) of sample s. `augment` holds `count` entries, or is null for no crop and no flip.
/// Throws UsageError when the spec is invalid or an augment's window leaves the sample.
void normalize_reference(const NormalizeSpec& spec, const std::uint8_t* in, std::uint32_t count,
                         const SampleAugment* augment, void* out);

}  // namespace gpufeed::pipeline
