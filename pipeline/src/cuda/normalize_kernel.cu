// uint8 samples to normalized float / half / bfloat16 tensors: (x - mean[c]) * inv_std[c] in
// float, then rounded to nearest. One kernel for every layout pair, crop and flip: each thread
// owns kPixels output pixels kThreads apart (so that every load and store instruction of a warp
// touches consecutive pixels: coalesced whether the row is read forwards or mirrored), finds
// each pixel's sample, row and column once for all its channels, issues all its loads before
// its first store (several reads in flight per thread), and writes each channel's values.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>

#include "cuda/cuda_check.hpp"
#include "cuda/normalize_kernel.hpp"

namespace gpufeed {
namespace {

constexpr unsigned kThreads = 256;

/// Per-channel constants, passed by value to every launch.
struct Constants {
  float mean[4];
  float inv_std[4];
};

/// n / d for n < 2^31 as multiply-high, add and shift (d < 2^31).
struct FastDiv {
  std::uint32_t divisor = 1;
  std::uint32_t magic = 1;
  std::uint32_t shift = 0;

  FastDiv() = default;
  explicit FastDiv(std::uint32_t d) : divisor(d) {
    while (shift < 31 && (std::uint64_t{1} << shift) < d) ++shift;
    const std::uint64_t one = 1;
    magic = static_cast<std::uint32_t>(((one << 32) * ((one << shift) - d)) / d + 1);
  }
  __device__ __forceinline__ std::uint32_t div(std::uint32_t n) const {
    return (__umulhi(n, magic) + n) >> shift;
  }
};

/// The same formulation as normalize_cpu().
__device__ __forceinline__ float normalize_value(std::uint32_t x, float mean, float inv_std) {
  return (static_cast<float>(x) - mean) * inv_std;
}

/// Conversions from float by output type (round to nearest even).
struct Out {
  __device__ static float from(float v, const float*) { return v; }
  __device__ static __half from(float v, const __half*) { return __float2half_rn(v); }
  __device__ static __nv_bfloat16 from(float v, const __nv_bfloat16*) {
    return __float2bfloat16_rn(v);
  }
  __device__ static std::uint8_t from(float v, const std::uint8_t*) {
    return static_cast<std::uint8_t>(__float2uint_rn(fminf(fmaxf(v, 0.0f), 255.0f)));
  }
};

constexpr unsigned kPixels = 4;  ///< output pixels per thread, kThreads apart
constexpr unsigned kTile = kThreads * kPixels;

/// Sizes for the kernel. `row` splits an output pixel index into (sample * out_height + y, x),
/// `height` that row into (sample, y).
struct Geometry {
  std::uint32_t pixels;  ///< output pixels of this launch (samples x out_height x out_width)
  std::uint32_t in_height, in_width, channels, out_height, out_width;
  std::uint32_t in_sample;  ///< bytes of one input sample
  std::uint32_t plane;      ///< out_height * out_width
  std::uint32_t max_crop_y, max_crop_x;
  FastDiv row, height;
};

template <typename T, bool kInNchw, bool kOutNchw>
__global__ void __launch_bounds__(kThreads)
    normalize_kernel(const std::uint8_t* __restrict__ in, T* __restrict__ out,
                     const SampleAugment* __restrict__ augment, Geometry geo, Constants k) {
  const std::uint32_t tiles = (geo.pixels + kTile - 1) / kTile;
  const std::uint32_t channels = geo.channels;
  for (std::uint32_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    std::uint32_t bytes[kPixels];  // the pixel's channels, one byte each
    std::uint32_t dst[kPixels];    // output index of channel 0
#pragma unroll
    for (unsigned j = 0; j < kPixels; ++j) {
      const std::uint32_t p = tile * kTile + j * kThreads + threadIdx.x;
      dst[j] = ~0u;
      if (p >= geo.pixels) continue;
      const std::uint32_t row = geo.row.div(p);  // sample * out_height + y
      const std::uint32_t x = p - row * geo.out_width;
      const std::uint32_t s = geo.height.div(row);
      const std::uint32_t y = row - s * geo.out_height;
      std::uint32_t iy = y, ix = x;
      if (augment != nullptr) {
        const SampleAugment* a = augment + s;
        iy += min(__ldg(&a->crop_y), geo.max_crop_y);
        const std::uint32_t cx = min(__ldg(&a->crop_x), geo.max_crop_x);
        ix = __ldg(&a->flip) != 0 ? cx + geo.out_width - 1 - x : cx + x;
      }
      const std::uint8_t* src = in + s * geo.in_sample;
      bytes[j] = 0;
      if (kInNchw) {
        const std::uint32_t in_plane = geo.in_height * geo.in_width;
        src += iy * geo.in_width + ix;
#pragma unroll
        for (unsigned c = 0; c < 4; ++c) {
          if (c < channels) bytes[j] |= std::uint32_t{__ldg(src + c * in_plane)} << (8 * c);
        }
      } else {
        src += (iy * geo.in_width + ix) * channels;
#pragma unroll
        for (unsigned c = 0; c < 4; ++c) {
          if (c < channels) bytes[j] |= std::uint32_t{__ldg(src + c)} << (8 * c);
        }
      }
      // NCHW: sample s's plane c at the pixel's place in it; NHWC: the pixel's channels.
      dst[j] = kOutNchw ? s * channels * geo.plane + (p - s * geo.plane) : p * channels;
    }
#pragma unroll
    for (unsigned j = 0; j < kPixels; ++j) {
      if (dst[j] == ~0u) continue;
#pragma unroll
      for (unsigned c = 0; c < 4; ++c) {
        if (c >= channels) break;
        const float v = normalize_value((bytes[j] >> (8 * c)) & 0xFFu, k.mean[c], k.inv_std[c]);
        out[dst[j] + (kOutNchw ? c * geo.plane : c)] = Out::from(v, out);
      }
    }
  }
}

unsigned blocks_for(std::uint64_t work, unsigned max_blocks) {
  return static_cast<unsigned>(
      std::min<std::uint64_t>((work + kThreads - 1) / kThreads, max_blocks));
}

/// One launch for `count` samples whose elements fit in 31 bits.
template <typename T>
void launch_chunk(const NormalizeKernelArgs& a, const std::uint8_t* in, std::uint32_t count,
                  const SampleAugment* augment, T* out, cudaStream_t stream, unsigned max_blocks,
                  const Constants& k) {
  const std::uint32_t plane = a.out_height * a.out_width;
  const Geometry geo{count * plane,
                     a.in_height,
                     a.in_width,
                     a.channels,
                     a.out_height,
                     a.out_width,
                     a.in_height * a.in_width * a.channels,
                     plane,
                     a.in_height - a.out_height,
                     a.in_width - a.out_width,
                     FastDiv(a.out_width),
                     FastDiv(a.out_height)};
  // With one channel NHWC and NCHW are the same order.
  const bool in_nchw = a.in_nchw && a.channels > 1, out_nchw = a.out_nchw && a.channels > 1;
  const unsigned blocks =
      blocks_for((std::uint64_t{geo.pixels} + kPixels - 1) / kPixels, max_blocks);
  if (in_nchw && out_nchw) {
    normalize_kernel<T, true, true><<<blocks, kThreads, 0, stream>>>(in, out, augment, geo, k);
  } else if (in_nchw) {
    normalize_kernel<T, true, false><<<blocks, kThreads, 0, stream>>>(in, out, augment, geo, k);
  } else if (out_nchw) {
    normalize_kernel<T, false, true><<<blocks, kThreads, 0, stream>>>(in, out, augment, geo, k);
  } else {
    normalize_kernel<T, false, false><<<blocks, kThreads, 0, stream>>>(in, out, augment, geo, k);
  }
  GPUFEED_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

namespace detail {

void launch_normalize_chunk(const NormalizeKernelArgs& args, const std::uint8_t* in_device,
                            std::uint32_t count, const SampleAugment* augment_device,
                            void* out_device, void* stream, unsigned max_blocks) {
  Constants k{};
  std::copy(args.mean, args.mean + 4, k.mean);
  std::copy(args.inv_std, args.inv_std + 4, k.inv_std);
  const auto s = static_cast<cudaStream_t>(stream);
  switch (args.dtype) {
    case DType::float32:
      return launch_chunk(args, in_device, count, augment_device, static_cast<float*>(out_device),
                          s, max_blocks, k);
    case DType::float16:
      return launch_chunk(args, in_device, count, augment_device, static_cast<__half*>(out_device),
                          s, max_blocks, k);
    case DType::bfloat16:
      return launch_chunk(args, in_device, count, augment_device,
                          static_cast<__nv_bfloat16*>(out_device), s, max_blocks, k);
    case DType::uint8:
      return launch_chunk(args, in_device, count, augment_device,
                          static_cast<std::uint8_t*>(out_device), s, max_blocks, k);
  }
}

}  // namespace detail
}  // namespace gpufeed
