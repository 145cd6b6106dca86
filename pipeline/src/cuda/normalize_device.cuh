#pragma once
// What every normalize kernel thread does with single values and 16-byte vectors, written once
// for the device and the host: the kernels run these functions on the GPU, and the CPU tests run
// the very same functions for every block and thread of a grid (tests/gpu), so the index
// arithmetic is tested on machines without a GPU. Device-only intrinsics have a host twin here
// that computes the same bits.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <vector_functions.h>
#include <vector_types.h>

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define GPUFEED_HD __host__ __device__ __forceinline__
#else
#define GPUFEED_HD inline
#endif
#if defined(__CUDA_ARCH__)  // device code: nvcc's host pass and g++ know no such pragma
#define GPUFEED_UNROLL _Pragma("unroll")
#else
#include <cmath>
#include <stdexcept>
#include <string>
#define GPUFEED_UNROLL
#endif

namespace gpufeed::pipeline::normalize_device {

constexpr unsigned kThreads = 256;

/// Blocks an SM holds at once, each kThreads: the kernels' register budget (__launch_bounds__)
/// lets that many run, 2048 threads an SM on sm_80, sm_90 and sm_100, 1536 on sm_86, sm_89,
/// sm_110 and sm_120, 1024 on sm_75. launch_normalize() sizes its grid from the device's own
/// figure, so that the whole grid is resident and its grid-stride loops end together.
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 900 || \
    __CUDA_ARCH__ == 1000 || __CUDA_ARCH__ == 1030
constexpr unsigned kMinBlocksPerSm = 8;
#elif __CUDA_ARCH__ == 750
constexpr unsigned kMinBlocksPerSm = 4;
#else
constexpr unsigned kMinBlocksPerSm = 6;
#endif
constexpr unsigned kVectorBytes = 16;

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
  GPUFEED_HD std::uint32_t div(std::uint32_t n) const {
#if defined(__CUDA_ARCH__)
    const std::uint32_t high = __umulhi(n, magic);
#else
    const auto high = static_cast<std::uint32_t>((std::uint64_t{n} * magic) >> 32);
#endif
    return (high + n) >> shift;
  }
};

#if !defined(__CUDA_ARCH__)
/// On the host (the CPU tests), a vector access the device could not make is an error.
inline void check_aligned(const void* p, std::uintptr_t alignment) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0) {
    throw std::logic_error("normalize kernel: misaligned " + std::to_string(alignment) +
                           "-byte access");
  }
}
#endif

/// One input byte or augment word, read through the read-only cache on the device.
template <typename V>
GPUFEED_HD std::uint32_t load_one(const V* p) {
#if defined(__CUDA_ARCH__)
  return __ldg(p);
#else
  return *p;
#endif
}

/// kWords 32-bit words from `p`, aligned to 4 * kWords bytes: one 4-, 8- or 16-byte load.
template <unsigned kWords>
GPUFEED_HD void load_words(const std::uint8_t* p, std::uint32_t (&w)[kWords]) {
  static_assert(kWords == 1 || kWords == 2 || kWords == 4, "a load is 4, 8 or 16 bytes");
#if defined(__CUDA_ARCH__)
  if constexpr (kWords == 1) {
    w[0] = __ldg(reinterpret_cast<const unsigned*>(p));
  } else if constexpr (kWords == 2) {
    const uint2 v = __ldg(reinterpret_cast<const uint2*>(p));
    w[0] = v.x, w[1] = v.y;
  } else {
    const uint4 v = __ldg(reinterpret_cast<const uint4*>(p));
    w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
  }
#else
  check_aligned(p, 4 * kWords);
  std::memcpy(w, p, 4 * kWords);
#endif
}

/// 16 bytes to `p`, aligned to 16 (global or shared memory).
GPUFEED_HD void store16(void* p, const std::uint32_t (&w)[4]) {
#if defined(__CUDA_ARCH__)
  *static_cast<uint4*>(p) = make_uint4(w[0], w[1], w[2], w[3]);
#else
  check_aligned(p, 16);
  std::memcpy(p, w, 16);
#endif
}

/// The same formulation as normalize_cpu(): no fused multiply-add is possible.
GPUFEED_HD float normalize_value(std::uint32_t x, float mean, float inv_std) {
  return (static_cast<float>(x) - mean) * inv_std;
}

// Output element types: conversion from float (round to nearest even) and packing of kPerWord
// consecutive elements into one 32-bit word, the first in the low bits. The primary template
// is for half and bfloat16, whose pairs convert in one instruction.
GPUFEED_HD __half2_raw convert_pair(float a, float b, __half) {
  return __floats2half2_rn(a, b);
}
GPUFEED_HD __nv_bfloat162_raw convert_pair(float a, float b, __nv_bfloat16) {
  return __floats2bfloat162_rn(a, b);
}
GPUFEED_HD __half convert_one(float v, __half) {
  return __float2half_rn(v);
}
GPUFEED_HD __nv_bfloat16 convert_one(float v, __nv_bfloat16) {
  return __float2bfloat16_rn(v);
}

template <typename T>
struct Element {
  static constexpr unsigned kPerWord = 2;
  GPUFEED_HD static std::uint32_t word(const float* v) {
    const auto pair = convert_pair(v[0], v[1], T{});
    return std::uint32_t{pair.x} | (std::uint32_t{pair.y} << 16);
  }
  GPUFEED_HD static T one(float v) { return convert_one(v, T{}); }
};

template <>
struct Element<float> {
  static constexpr unsigned kPerWord = 1;
  GPUFEED_HD static std::uint32_t word(const float* v) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(v[0]);
#else
    std::uint32_t b;
    std::memcpy(&b, v, 4);
    return b;
#endif
  }
  GPUFEED_HD static float one(float v) {
    return v;
  }
};

template <>
struct Element<std::uint8_t> {
  static constexpr unsigned kPerWord = 4;
  GPUFEED_HD static std::uint32_t byte(float v) {
#if defined(__CUDA_ARCH__)
    return __float2uint_rn(fminf(fmaxf(v, 0.0f), 255.0f));
#else
    return static_cast<std::uint32_t>(std::nearbyint(std::fmin(std::fmax(v, 0.0f), 255.0f)));
#endif
  }
  GPUFEED_HD static std::uint32_t word(const float* v) {
    return byte(v[0]) | (byte(v[1]) << 8) | (byte(v[2]) << 16) | (byte(v[3]) << 24);
  }
  GPUFEED_HD static std::uint8_t one(float v) {
    return static_cast<std::uint8_t>(byte(v));
  }
};

/// Output elements in one 16-byte vector.
template <typename T>
inline constexpr unsigned kVector = kVectorBytes / sizeof(T);

/// Stores kVector<T> values at `out`, aligned to 16 bytes, as one 16-byte store.
template <typename T>
GPUFEED_HD void store_vector(T* out, const float (&v)[kVector<T>]) {
  constexpr unsigned kPerWord = Element<T>::kPerWord;
  std::uint32_t w[4];
  GPUFEED_UNROLL
  for (unsigned i = 0; i < 4; ++i) w[i] = Element<T>::word(v + i * kPerWord);
  store16(out, w);
}

/// Elements from `p` to the next 16-byte boundary (0 when aligned); `p` is aligned to its type.
template <typename T>
GPUFEED_HD std::uint32_t elements_to_alignment(const T* p) {
  const auto misaligned = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(p) % 16);
  return misaligned == 0 ? 0 : (16 - misaligned) / static_cast<std::uint32_t>(sizeof(T));
}

/// One entry of a block's table of constants in shared memory: 16 bytes, one load.
struct alignas(16) ChannelEntry {
  float mean;
  float inv_std;
  std::int32_t mirrored;  ///< see fill_table()
  std::int32_t unused;
};

constexpr unsigned kTableRun = 16;  ///< entries per first channel: the longest vector
constexpr unsigned kTableEntries = 4 * kTableRun;

/// Fills entry `thread` of the table. Entry kTableRun * c0 + i is for element i of a run of
/// interleaved (NHWC) elements whose element 0 is channel c0: the constants of channel
/// (c0 + i) % C, and where the element's byte is relative to element 0's when the run's pixels
/// are read backwards (a flip): channel c of pixel p at c - c0 - p * C. So channel c's
/// constants are entry kTableRun * c, and a thread finds each element of a vector at a fixed
/// offset from its first channel's entries, whatever channels its neighbours start with.
GPUFEED_HD void fill_table(const Constants& k, std::uint32_t channels, unsigned thread,
                           ChannelEntry* table) {
  if (thread >= kTableEntries) return;
  const std::uint32_t c0 = thread / kTableRun, i = thread % kTableRun;
  const std::uint32_t pixel = (c0 + i) / channels, c = c0 + i - pixel * channels;
  ChannelEntry e{k.mean[0], k.inv_std[0], 0, 0};
  // Constant indices: indexing the kernel's parameters by thread would copy them to local memory.
  GPUFEED_UNROLL
  for (unsigned j = 1; j < 4; ++j) {
    if (c == j) e.mean = k.mean[j], e.inv_std = k.inv_std[j];
  }
  e.mirrored = static_cast<std::int32_t>(c) - static_cast<std::int32_t>(c0) -
               static_cast<std::int32_t>(pixel * channels);
  table[thread] = e;
}

GPUFEED_HD float normalize_value(std::uint32_t x, const ChannelEntry& k) {
  return normalize_value(x, k.mean, k.inv_std);
}

}  // namespace gpufeed::pipeline::normalize_device
