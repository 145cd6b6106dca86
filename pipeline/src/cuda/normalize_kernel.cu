// uint8 samples to normalized float / half / bfloat16 tensors: (x - mean[c]) * inv_std[c] in
// float, then rounded to nearest. Two fast paths move 16 elements per thread with 16-byte loads
// and stores; everything else (crop, flip, layout changes other than NHWC->NCHW with 3
// channels, unaligned buffers) takes the generic path, one output element per thread.
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

__device__ __forceinline__ float pick(const float (&a)[4], std::uint32_t c) {
  return c == 0 ? a[0] : c == 1 ? a[1] : c == 2 ? a[2] : a[3];
}

/// The same formulation as normalize_cpu().
__device__ __forceinline__ float normalize_value(std::uint32_t x, float mean, float inv_std) {
  return (static_cast<float>(x) - mean) * inv_std;
}

template <int kWords>
__device__ __forceinline__ std::uint32_t byte_at(const std::uint32_t (&w)[kWords], int b) {
  return (w[b >> 2] >> ((b & 3) * 8)) & 0xFFu;
}

/// Conversions from float by output type (round to nearest even), and half bit patterns.
struct Out {
  __device__ static float from(float v, const float*) { return v; }
  __device__ static __half from(float v, const __half*) { return __float2half_rn(v); }
  __device__ static __nv_bfloat16 from(float v, const __nv_bfloat16*) {
    return __float2bfloat16_rn(v);
  }
  __device__ static std::uint32_t bits(__half h) { return __half_as_ushort(h); }
  __device__ static std::uint32_t bits(__nv_bfloat16 h) { return __bfloat16_as_ushort(h); }
};

/// Stores 16 values at a 16-byte aligned `dst`: four float4 or two uint4 of packed halves.
__device__ __forceinline__ void store16(float* dst, const float (&v)[16]) {
  float4* d = reinterpret_cast<float4*>(dst);
#pragma unroll
  for (int k = 0; k < 4; ++k)
    d[k] = make_float4(v[4 * k], v[4 * k + 1], v[4 * k + 2], v[4 * k + 3]);
}
template <typename Half>
__device__ __forceinline__ void store16(Half* dst, const float (&v)[16]) {
  std::uint32_t packed[8];
#pragma unroll
  for (int k = 0; k < 8; ++k) {
    packed[k] =
        Out::bits(Out::from(v[2 * k], dst)) | (Out::bits(Out::from(v[2 * k + 1], dst)) << 16);
  }
  uint4* d = reinterpret_cast<uint4*>(dst);
  d[0] = make_uint4(packed[0], packed[1], packed[2], packed[3]);
  d[1] = make_uint4(packed[4], packed[5], packed[6], packed[7]);
}

/// Same layout in and out, no crop or flip: element i of the output comes from byte i of the
/// input. Each thread converts 16 elements. NCHW needs planes of a multiple of 16 elements (one
/// channel per group); NHWC needs only a multiple of 16 elements in all.
template <typename T, bool kNchw>
__global__ void identity16_kernel(const uint4* __restrict__ in, T* __restrict__ out,
                                  std::uint32_t groups, FastDiv plane_div, FastDiv channel_div,
                                  Constants k) {
  for (std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups;
       g += blockDim.x * gridDim.x) {
    const uint4 w = __ldg(in + g);
    const std::uint32_t words[4] = {w.x, w.y, w.z, w.w};
    const std::uint32_t i0 = g * 16;
    float v[16];
    if (kNchw) {
      const std::uint32_t plane_index = plane_div.div(i0);  // sample * C + channel
      const std::uint32_t c = plane_index - channel_div.div(plane_index) * channel_div.divisor;
      const float mean = pick(k.mean, c), inv_std = pick(k.inv_std, c);
#pragma unroll
      for (int j = 0; j < 16; ++j) v[j] = normalize_value(byte_at(words, j), mean, inv_std);
    } else {
      std::uint32_t c = i0 - channel_div.div(i0) * channel_div.divisor;
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        v[j] = normalize_value(byte_at(words, j), pick(k.mean, c), pick(k.inv_std, c));
        c = c + 1 == channel_div.divisor ? 0 : c + 1;
      }
    }
    store16(out + i0, v);
  }
}

/// NHWC with 3 channels to NCHW, no crop or flip: each thread reads 16 pixels (48 bytes, three
/// uint4) and writes 16 values to each of the 3 planes. Planes are a multiple of 16 pixels.
template <typename T>
__global__ void hwc3_to_chw16_kernel(const uint4* __restrict__ in, T* __restrict__ out,
                                     std::uint32_t groups, FastDiv plane_div, Constants k) {
  for (std::uint32_t g = blockIdx.x * blockDim.x + threadIdx.x; g < groups;
       g += blockDim.x * gridDim.x) {
    const uint4 a = __ldg(in + 3 * g), b = __ldg(in + 3 * g + 1), c = __ldg(in + 3 * g + 2);
    const std::uint32_t words[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
    const std::uint32_t p_global = g * 16;
    const std::uint32_t plane = plane_div.divisor;
    const std::uint32_t sample = plane_div.div(p_global);
    const std::uint32_t p = p_global - sample * plane;
#pragma unroll
    for (int ch = 0; ch < 3; ++ch) {
      float v[16];
#pragma unroll
      for (int j = 0; j < 16; ++j) {
        v[j] = normalize_value(byte_at(words, 3 * j + ch), k.mean[ch], k.inv_std[ch]);
      }
      store16(out + (sample * 3 + ch) * plane + p, v);
    }
  }
}

/// Sizes for the generic kernel. The divisors split an output index into (sample, c, y, x).
struct Geometry {
  std::uint32_t elements;  ///< output elements of this launch
  std::uint32_t in_height, in_width, channels, out_height, out_width, in_sample;
  std::uint32_t max_crop_y, max_crop_x;
  FastDiv d1, d2, d3;  ///< NCHW out: plane, width, channels; NHWC out: channels, width, height
};

template <typename T, bool kInNchw, bool kOutNchw>
__global__ void generic_kernel(const std::uint8_t* __restrict__ in, T* __restrict__ out,
                               const SampleAugment* __restrict__ augment, Geometry geo,
                               Constants k) {
  for (std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < geo.elements;
       i += blockDim.x * gridDim.x) {
    std::uint32_t s, c, y, x;
    if (kOutNchw) {
      const std::uint32_t q = geo.d1.div(i);  // s * C + c
      const std::uint32_t p = i - q * geo.d1.divisor;
      y = geo.d2.div(p);
      x = p - y * geo.out_width;
      s = geo.d3.div(q);
      c = q - s * geo.channels;
    } else {
      const std::uint32_t pixel = geo.d1.div(i);
      c = i - pixel * geo.channels;
      const std::uint32_t row = geo.d2.div(pixel);  // s * out_height + y
      x = pixel - row * geo.out_width;
      s = geo.d3.div(row);
      y = row - s * geo.out_height;
    }
    std::uint32_t iy = y, ix = x;
    if (augment != nullptr) {
      const SampleAugment* a = augment + s;
      iy += min(__ldg(&a->crop_y), geo.max_crop_y);
      const std::uint32_t cx = min(__ldg(&a->crop_x), geo.max_crop_x);
      ix = __ldg(&a->flip) != 0 ? cx + geo.out_width - 1 - x : cx + x;
    }
    const std::uint32_t src =
        s * geo.in_sample + (kInNchw ? (c * geo.in_height + iy) * geo.in_width + ix
                                     : (iy * geo.in_width + ix) * geo.channels + c);
    out[i] = Out::from(normalize_value(__ldg(in + src), pick(k.mean, c), pick(k.inv_std, c)), out);
  }
}

unsigned blocks_for(std::uint64_t work, unsigned max_blocks) {
  return static_cast<unsigned>(
      std::min<std::uint64_t>((work + kThreads - 1) / kThreads, max_blocks));
}

bool aligned16(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

template <typename T, bool kInNchw, bool kOutNchw>
void launch_generic(const NormalizeKernelArgs& a, const std::uint8_t* in, std::uint32_t count,
                    const SampleAugment* augment, T* out, cudaStream_t stream, unsigned max_blocks,
                    const Constants& k) {
  const Geometry geo{count * a.out_height * a.out_width * a.channels,
                     a.in_height,
                     a.in_width,
                     a.channels,
                     a.out_height,
                     a.out_width,
                     a.in_height * a.in_width * a.channels,
                     a.in_height - a.out_height,
                     a.in_width - a.out_width,
                     FastDiv(kOutNchw ? a.out_height * a.out_width : a.channels),
                     FastDiv(a.out_width),
                     FastDiv(kOutNchw ? a.channels : a.out_height)};
  generic_kernel<T, kInNchw, kOutNchw>
      <<<blocks_for(geo.elements, max_blocks), kThreads, 0, stream>>>(in, out, augment, geo, k);
}

/// One launch for `count` samples whose elements fit in 31 bits.
template <typename T>
void launch_chunk(const NormalizeKernelArgs& a, const std::uint8_t* in, std::uint32_t count,
                  const SampleAugment* augment, T* out, cudaStream_t stream, unsigned max_blocks,
                  const Constants& k) {
  const std::uint32_t plane = a.in_height * a.in_width;
  const std::uint32_t total = count * plane * a.channels;
  const bool plain = augment == nullptr && a.out_height == a.in_height &&
                     a.out_width == a.in_width && aligned16(in) && aligned16(out);
  // With one channel NHWC and NCHW are the same order.
  const bool both_nchw = a.in_nchw && a.out_nchw && a.channels > 1;
  const bool both_nhwc = (!a.in_nchw && !a.out_nchw) || a.channels == 1;
  const uint4* in16 = reinterpret_cast<const uint4*>(in);
  if (plain && both_nchw && plane % 16 == 0) {
    identity16_kernel<T, true><<<blocks_for(total / 16, max_blocks), kThreads, 0, stream>>>(
        in16, out, total / 16, FastDiv(plane), FastDiv(a.channels), k);
  } else if (plain && both_nhwc && total % 16 == 0) {
    identity16_kernel<T, false><<<blocks_for(total / 16, max_blocks), kThreads, 0, stream>>>(
        in16, out, total / 16, FastDiv(plane), FastDiv(a.channels), k);
  } else if (plain && !a.in_nchw && a.out_nchw && a.channels == 3 && plane % 16 == 0) {
    hwc3_to_chw16_kernel<T><<<blocks_for(total / 48, max_blocks), kThreads, 0, stream>>>(
        in16, out, count * plane / 16, FastDiv(plane), k);
  } else if (a.in_nchw && a.out_nchw) {
    launch_generic<T, true, true>(a, in, count, augment, out, stream, max_blocks, k);
  } else if (a.in_nchw) {
    launch_generic<T, true, false>(a, in, count, augment, out, stream, max_blocks, k);
  } else if (a.out_nchw) {
    launch_generic<T, false, true>(a, in, count, augment, out, stream, max_blocks, k);
  } else {
    launch_generic<T, false, false>(a, in, count, augment, out, stream, max_blocks, k);
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
  }
}

}  // namespace detail
}  // namespace gpufeed
