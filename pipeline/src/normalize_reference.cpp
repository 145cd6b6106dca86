#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/normalize_spec.hpp"
#include "half_bits.hpp"

namespace gpufeed::pipeline {

void NormalizeSpec::validate() const {
  const std::string where = "normalize " + formats::to_string(in) + " -> " +
                            std::to_string(out_height) + "x" + std::to_string(out_width) + " " +
                            formats::to_string(out_layout) + " " + to_string(dtype) + ": ";
  if (in.height == 0 || in.width == 0) throw UsageError(where + "the input sample is empty");
  if (in.channels < 1 || in.channels > 4) {
    throw UsageError(where + std::to_string(in.channels) + " channels; 1 to 4 supported");
  }
  if (params.channels != in.channels) {
    throw UsageError(where + "mean/std given for " + std::to_string(params.channels) +
                     " channels, the samples have " + std::to_string(in.channels));
  }
  for (std::uint32_t c = 0; c < in.channels; ++c) {
    if (!std::isfinite(params.mean[c]) || !std::isfinite(params.inv_std[c]) ||
        !(params.inv_std[c] > 0.0f)) {
      throw UsageError(where + "channel " + std::to_string(c) +
                       ": mean and std must be finite and std positive");
    }
  }
  if (out_height == 0 || out_width == 0) throw UsageError(where + "the output window is empty");
  if (out_height > in.height || out_width > in.width) {
    throw UsageError(where +
                     "the output window is larger than the stored sample; crop to at most " +
                     std::to_string(in.height) + "x" + std::to_string(in.width));
  }
  if (in.bytes() >= (std::uint64_t{1} << 31)) {
    throw UsageError(where + "samples of 2^31 elements or more are not supported");
  }
}

namespace {

void check_augment(const NormalizeSpec& spec, const SampleAugment& a, std::uint32_t sample) {
  if (std::uint64_t{a.crop_y} + spec.out_height > spec.in.height ||
      std::uint64_t{a.crop_x} + spec.out_width > spec.in.width || a.flip > 1) {
    throw UsageError("normalize: augment of sample " + std::to_string(sample) + " (crop " +
                     std::to_string(a.crop_y) + "," + std::to_string(a.crop_x) + ", flip " +
                     std::to_string(a.flip) + ") leaves the " + formats::to_string(spec.in) +
                     " sample");
  }
}

void store(DType dtype, double value, void* out, std::uint64_t index) {
  switch (dtype) {
    case DType::float32: {
      const float f = static_cast<float>(value);
      std::memcpy(static_cast<unsigned char*>(out) + index * 4, &f, 4);
      return;
    }
    case DType::float16: {
      const std::uint16_t h = double_to_half_bits(value);
      std::memcpy(static_cast<unsigned char*>(out) + index * 2, &h, 2);
      return;
    }
    case DType::bfloat16: {
      const std::uint16_t b = double_to_bf16_bits(value);
      std::memcpy(static_cast<unsigned char*>(out) + index * 2, &b, 2);
      return;
    }
    case DType::uint8: {
      static_cast<unsigned char*>(out)[index] =
          static_cast<unsigned char>(std::clamp(std::nearbyint(value), 0.0, 255.0));
      return;
    }
  }
}

}  // namespace

void normalize_reference(const NormalizeSpec& spec, const std::uint8_t* in, std::uint32_t count,
                         const SampleAugment* augment, void* out) {
  spec.validate();
  const std::uint64_t channels = spec.in.channels;
  const std::uint64_t ih = spec.in.height, iw = spec.in.width;
  const std::uint64_t oh = spec.out_height, ow = spec.out_width;
  const bool in_nchw = spec.in.layout == formats::Layout::nchw;
  const bool out_nchw = spec.out_layout == formats::Layout::nchw;
  for (std::uint32_t s = 0; s < count; ++s) {
    SampleAugment a;
    if (augment != nullptr) {
      a = augment[s];
      check_augment(spec, a, s);
    }
    const std::uint8_t* sample = in + s * spec.in.bytes();
    for (std::uint64_t c = 0; c < channels; ++c) {
      const double mean = spec.params.mean[c];
      const double inv_std = spec.params.inv_std[c];
      for (std::uint64_t y = 0; y < oh; ++y) {
        for (std::uint64_t x = 0; x < ow; ++x) {
          const std::uint64_t iy = a.crop_y + y;
          const std::uint64_t ix = a.flip != 0 ? a.crop_x + ow - 1 - x : a.crop_x + x;
          const std::uint64_t src =
              in_nchw ? (c * ih + iy) * iw + ix : (iy * iw + ix) * channels + c;
          const std::uint64_t dst = out_nchw ? ((s * channels + c) * oh + y) * ow + x
                                             : ((s * oh + y) * ow + x) * channels + c;
          store(spec.dtype, (static_cast<double>(sample[src]) - mean) * inv_std, out, dst);
        }
      }
    }
  }
}

}  // namespace gpufeed::pipeline
