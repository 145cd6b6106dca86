#include "gpufeed/pipeline/normalize.hpp"

#include <cmath>
#include <cstring>
#include <string>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline {

NormalizeParams NormalizeParams::make(std::span<const float> mean, std::span<const float> std,
                                      std::uint32_t channels) {
  if (channels < 1 || channels > 4) {
    throw UsageError("images have " + std::to_string(channels) + " channels; 1 to 4 supported");
  }
  if (mean.size() != channels || std.size() != channels) {
    throw UsageError("mean and std need " + std::to_string(channels) + " values each (got " +
                     std::to_string(mean.size()) + " and " + std::to_string(std.size()) + ")");
  }
  NormalizeParams p;
  p.channels = channels;
  for (std::uint32_t c = 0; c < channels; ++c) {
    if (!std::isfinite(mean[c]) || !std::isfinite(std[c]) || !(std[c] > 0.0f)) {
      throw UsageError("channel " + std::to_string(c) + ": mean " + std::to_string(mean[c]) +
                       ", std " + std::to_string(std[c]) + "; std must be finite and positive");
    }
    p.mean[c] = mean[c];
    p.inv_std[c] = 1.0f / std[c];
  }
  return p;
}

namespace {

// The loops are written so GCC vectorizes them; each is compiled for the baseline (SSE2) and
// for AVX2 and picked once at run time. (Explicit dispatch, not target_clones: ifunc resolvers
// run before the sanitizer runtimes are initialized.)
[[gnu::always_inline]] inline void plane_body(const std::uint8_t* in, std::uint64_t n, float mean,
                                              float inv_std, float* out) {
  for (std::uint64_t i = 0; i < n; ++i) out[i] = (static_cast<float>(in[i]) - mean) * inv_std;
}

[[gnu::always_inline]] inline void hwc3_body(const std::uint8_t* in, std::uint64_t pixels,
                                             const NormalizeParams& p, float* out) {
  const float m0 = p.mean[0], m1 = p.mean[1], m2 = p.mean[2];
  const float s0 = p.inv_std[0], s1 = p.inv_std[1], s2 = p.inv_std[2];
  float* __restrict o0 = out;
  float* __restrict o1 = out + pixels;
  float* __restrict o2 = out + 2 * pixels;
  for (std::uint64_t i = 0; i < pixels; ++i) {
    o0[i] = (static_cast<float>(in[3 * i + 0]) - m0) * s0;
    o1[i] = (static_cast<float>(in[3 * i + 1]) - m1) * s1;
    o2[i] = (static_cast<float>(in[3 * i + 2]) - m2) * s2;
  }
}

/// uint8 HWC -> CHW for 3 channels: the same de-interleave as hwc3_body, without arithmetic.
[[gnu::always_inline]] inline void planar3_body(const std::uint8_t* __restrict in,
                                                std::uint64_t pixels,
                                                std::uint8_t* __restrict out) {
  std::uint8_t* __restrict o0 = out;
  std::uint8_t* __restrict o1 = out + pixels;
  std::uint8_t* __restrict o2 = out + 2 * pixels;
  for (std::uint64_t i = 0; i < pixels; ++i) {
    o0[i] = in[3 * i + 0];
    o1[i] = in[3 * i + 1];
    o2[i] = in[3 * i + 2];
  }
}

void plane_sse2(const std::uint8_t* in, std::uint64_t n, float mean, float inv_std, float* out) {
  plane_body(in, n, mean, inv_std, out);
}
[[gnu::target("avx2")]] void plane_avx2(const std::uint8_t* in, std::uint64_t n, float mean,
                                        float inv_std, float* out) {
  plane_body(in, n, mean, inv_std, out);
}
void hwc3_sse2(const std::uint8_t* in, std::uint64_t pixels, const NormalizeParams& p, float* out) {
  hwc3_body(in, pixels, p, out);
}
[[gnu::target("avx2")]] void hwc3_avx2(const std::uint8_t* in, std::uint64_t pixels,
                                       const NormalizeParams& p, float* out) {
  hwc3_body(in, pixels, p, out);
}

void planar3_sse2(const std::uint8_t* in, std::uint64_t pixels, std::uint8_t* out) {
  planar3_body(in, pixels, out);
}
[[gnu::target("avx2")]] void planar3_avx2(const std::uint8_t* in, std::uint64_t pixels,
                                          std::uint8_t* out) {
  planar3_body(in, pixels, out);
}

struct Kernels {
  decltype(&plane_sse2) plane;
  decltype(&hwc3_sse2) hwc3;
  decltype(&planar3_sse2) planar3;
};

const Kernels& kernels() {
  static const Kernels k = __builtin_cpu_supports("avx2")
                               ? Kernels{plane_avx2, hwc3_avx2, planar3_avx2}
                               : Kernels{plane_sse2, hwc3_sse2, planar3_sse2};
  return k;
}

void hwc_generic(const std::uint8_t* in, std::uint64_t pixels, const NormalizeParams& p,
                 float* out) {
  const std::uint32_t c_count = p.channels;
  for (std::uint32_t c = 0; c < c_count; ++c) {
    float* o = out + c * pixels;
    for (std::uint64_t i = 0; i < pixels; ++i) {
      o[i] = (static_cast<float>(in[i * c_count + c]) - p.mean[c]) * p.inv_std[c];
    }
  }
}

}  // namespace

void normalize_cpu(const std::uint8_t* in, const formats::SampleShape& shape, std::uint64_t count,
                   const NormalizeParams& params, float* out) {
  const std::uint64_t pixels = shape.pixels();
  const std::uint64_t elems = shape.bytes();
  const Kernels& k = kernels();
  for (std::uint64_t s = 0; s < count; ++s) {
    const std::uint8_t* src = in + s * elems;
    float* dst = out + s * elems;
    if (shape.layout == formats::Layout::nchw) {
      for (std::uint32_t c = 0; c < shape.channels; ++c) {
        k.plane(src + c * pixels, pixels, params.mean[c], params.inv_std[c], dst + c * pixels);
      }
    } else if (shape.channels == 3) {
      k.hwc3(src, pixels, params, dst);
    } else if (shape.channels == 1) {
      k.plane(src, pixels, params.mean[0], params.inv_std[0], dst);
    } else {
      hwc_generic(src, pixels, params, dst);
    }
  }
}

void planar_cpu(const std::uint8_t* in, const formats::SampleShape& shape, std::uint64_t count,
                std::uint8_t* out) {
  const std::uint64_t pixels = shape.pixels();
  const std::uint64_t elems = shape.bytes();
  const std::uint32_t channels = shape.channels;
  if (shape.layout == formats::Layout::nchw || channels == 1) {
    std::memcpy(out, in, count * elems);
    return;
  }
  const auto planar3_kernel = kernels().planar3;
  for (std::uint64_t s = 0; s < count; ++s) {
    const std::uint8_t* src = in + s * elems;
    std::uint8_t* dst = out + s * elems;
    if (channels == 3) {
      planar3_kernel(src, pixels, dst);
      continue;
    }
    for (std::uint64_t i = 0; i < pixels; ++i) {
      for (std::uint32_t c = 0; c < channels; ++c) dst[c * pixels + i] = src[i * channels + c];
    }
  }
}

void normalize_reference(const std::uint8_t* in, const formats::SampleShape& shape,
                         std::uint64_t count, std::span<const float> mean,
                         std::span<const float> std, float* out) {
  const std::uint64_t hw = shape.pixels();
  const std::uint32_t channels = shape.channels;
  for (std::uint64_t s = 0; s < count; ++s) {
    for (std::uint32_t c = 0; c < channels; ++c) {
      for (std::uint64_t p = 0; p < hw; ++p) {
        const std::uint64_t src =
            shape.layout == formats::Layout::nchw ? c * hw + p : p * channels + c;
        const double x = in[s * hw * channels + src];
        out[(s * channels + c) * hw + p] = static_cast<float>((x - mean[c]) / std[c]);
      }
    }
  }
}

}  // namespace gpufeed::pipeline
