#pragma once
// The raw layout's samples through a Geometry: each stored sample cropped, resized and flipped
// into its place in a batch slot.
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/formats/resize.hpp"
#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/formats/scratch_pool.hpp"
#include "gpufeed/pipeline/geometry.hpp"

namespace gpufeed::pipeline::detail {

/// Places stored uint8 samples (NHWC, or NCHW transposed first) into output samples of
/// Geometry::output(stored) (HWC). Thread-safe: each call leases a resizer and a transpose
/// buffer from its pool. Throws FormatError naming `path` and the sample when the sample cannot
/// take the crop.
class RawSamples {
 public:
  RawSamples(std::string path, const formats::SampleShape& stored, const Geometry& geometry,
             formats::ResizeFilter filter, std::uint64_t seed);

  /// `in`: the stored sample; `out`: its place in the slot.
  void place(const std::uint8_t* in, std::uint64_t sample, std::uint64_t epoch,
             std::uint8_t* out) const;

  [[nodiscard]] const formats::SampleShape& output() const { return output_; }

 private:
  struct Scratch {
    formats::Resizer resizer;
    std::vector<std::uint8_t> hwc;
  };
  const std::string path_;
  const formats::SampleShape stored_;
  const Geometry geometry_;
  const formats::SampleShape output_;
  const formats::ResizeFilter filter_;
  const std::uint64_t seed_;
  mutable formats::detail::ScratchPool<Scratch> scratch_;
};

}  // namespace gpufeed::pipeline::detail
