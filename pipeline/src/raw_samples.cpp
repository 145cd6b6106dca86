#include "raw_samples.hpp"

#include <utility>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/image.hpp"

namespace gpufeed::pipeline::detail {

RawSamples::RawSamples(std::string path, const formats::SampleShape& stored,
                       const Geometry& geometry, formats::ResizeFilter filter, std::uint64_t seed)
    : path_(std::move(path)),
      stored_(stored),
      geometry_(geometry),
      output_(geometry.output(stored)),
      filter_(filter),
      seed_(seed) {}

void RawSamples::place(const std::uint8_t* in, std::uint64_t sample, std::uint64_t epoch,
                       std::uint8_t* out) const {
  const std::uint32_t h = stored_.height, w = stored_.width, c = stored_.channels;
  Placement p;
  try {
    p = pipeline::place(geometry_, w, h, output_.width, output_.height, seed_, epoch, sample);
  } catch (const UsageError& e) {
    throw FormatError(path_ + ": sample " + std::to_string(sample) + ": " + e.what());
  }
  const auto lease = scratch_.lease();
  Scratch& s = *lease;
  const std::uint8_t* hwc = in;
  if (stored_.layout == formats::Layout::nchw && c > 1) {
    s.hwc.resize(std::size_t{h} * w * c);
    const std::size_t plane = std::size_t{h} * w;
    for (std::size_t i = 0; i < plane; ++i) {
      for (std::uint32_t ch = 0; ch < c; ++ch) s.hwc[i * c + ch] = in[ch * plane + i];
    }
    hwc = s.hwc.data();
  }
  const formats::SourcePart part{formats::ConstImageView(hwc, w, h, c), 0, 0, w, h};
  const formats::ImageView dst{out, output_.width, output_.height, c,
                               std::size_t{output_.width} * c};
  render(part, p, dst, s.resizer, filter_);
}

}  // namespace gpufeed::pipeline::detail
