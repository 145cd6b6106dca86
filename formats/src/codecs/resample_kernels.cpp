#include "resample_kernels.hpp"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace gpufeed::formats::detail {

namespace {

constexpr std::int32_t kHalf = 1 << (kPrecisionBits - 1);

inline std::uint8_t clip8(std::int32_t sum) {
  return static_cast<std::uint8_t>(std::clamp(sum >> kPrecisionBits, 0, 255));
}

template <int C>
void horizontal_pixel(const std::uint8_t* pixel, const std::int32_t* k, int count,
                      std::uint8_t* out) {
  std::int32_t sum[C];
  for (int c = 0; c < C; ++c) sum[c] = kHalf;
  for (int t = 0; t < count; ++t) {
    for (int c = 0; c < C; ++c) sum[c] += pixel[t * C + c] * k[t];
  }
  for (int c = 0; c < C; ++c) out[c] = clip8(sum[c]);
}

// Output pixels [begin, end) of every row.
template <int C>
void horizontal_span(const HorizontalJob& job, int begin, int end) {
  const TapsView& taps = job.taps;
  for (int y = 0; y < job.rows; ++y) {
    const std::uint8_t* in = job.in + y * job.in_stride;
    std::uint8_t* out = job.out + y * job.out_stride;
    for (int x = begin; x < end; ++x) {
      horizontal_pixel<C>(in + (taps.first[x] - job.in_x) * C, taps.weights + x * taps.stride,
                          taps.count[x], out + x * C);
    }
  }
}

template <int C>
void horizontal_portable(const HorizontalJob& job) {
  horizontal_span<C>(job, 0, job.out_width);
}

void vertical_portable(const std::uint8_t* rows, std::size_t row_stride,
                       const std::int32_t* weights, int count, std::uint8_t* out,
                       std::size_t bytes) {
  constexpr std::size_t kChunk = 512;  // the sums of a chunk of the row, on the stack
  std::int32_t sums[kChunk];
  for (std::size_t begin = 0; begin < bytes; begin += kChunk) {
    const std::size_t n = std::min(kChunk, bytes - begin);
    std::fill_n(sums, n, kHalf);
    const std::uint8_t* in = rows + begin;
    for (int t = 0; t < count; ++t, in += row_stride) {
      const std::int32_t weight = weights[t];
      for (std::size_t i = 0; i < n; ++i) sums[i] += in[i] * weight;
    }
    for (std::size_t i = 0; i < n; ++i) out[begin + i] = clip8(sums[i]);
  }
}

// ---- AVX2 ----------------------------------------------------------------------------------
// Horizontal: two taps a step. The 8 bytes at a pair of input pixels widen to 8 int32 lanes;
// lanes 0..C-1 hold the first pixel's channels and C..2C-1 the second's, multiplied by a
// vector holding each tap's weight in its pixel's lanes (zero elsewhere; these vectors are
// laid out once per call in job.scratch). At the end lanes C..2C-1 are folded onto 0..C-1.

constexpr int kMaxPairs = 16;  // wider filters (downscaling by more than 15x) run portable

template <int C>
[[gnu::target("avx2")]] inline __m256i pair_weights(const std::int32_t* k) {
  if constexpr (C == 3) return _mm256_setr_epi32(k[0], k[0], k[0], k[1], k[1], k[1], 0, 0);
  return _mm256_setr_epi32(k[0], k[0], k[0], k[0], k[1], k[1], k[1], k[1]);
}

[[gnu::target("avx2")]] inline __m256i times(const std::uint8_t* pixels, __m256i weights) {
  return _mm256_mullo_epi32(_mm256_cvtepu8_epi32(_mm_loadu_si64(pixels)), weights);
}

// One output pixel from the input pixel pairs at `in`: its C bytes in the low bytes.
template <int C, int P>
[[gnu::target("avx2")]] inline std::uint32_t pixel_avx2(const std::uint8_t* in, const __m256i* k,
                                                        int pairs) {
  if constexpr (P > 0) pairs = P;
  const __m256i fold = C == 3 ? _mm256_setr_epi32(3, 4, 5, 7, 7, 7, 7, 7)
                              : _mm256_setr_epi32(4, 5, 6, 7, 7, 7, 7, 7);
  __m256i sum = times(in, k[0]);
  for (int j = 1; j < pairs; ++j) sum = _mm256_add_epi32(sum, times(in + 2 * C * j, k[j]));
  sum = _mm256_add_epi32(sum, _mm256_permutevar8x32_epi32(sum, fold));
  __m128i total = _mm_add_epi32(_mm256_castsi256_si128(sum), _mm_set1_epi32(kHalf));
  total = _mm_srai_epi32(total, kPrecisionBits);
  total = _mm_packs_epi32(total, total);  // with packus: clip8's clamp to 0..255
  return static_cast<std::uint32_t>(_mm_cvtsi128_si32(_mm_packus_epi16(total, total)));
}

// Output pixels [0, end) of every row, `P` tap pairs each (P = 0: `pairs`, known at run time).
template <int C, int P>
[[gnu::target("avx2")]] void pixels_avx2(const HorizontalJob& job, int end, int pairs,
                                         const __m256i* weights) {
  if constexpr (P > 0) pairs = P;
  const int* first = job.taps.first;
  const int in_x = job.in_x;
  const int rows = job.rows;
  // C = 3: a 4-byte store spills onto the next pixel, written next; never past a row.
  const int last = C == 3 && end == job.out_width ? end - 1 : end;
  for (int y = 0; y < rows; ++y) {
    const std::uint8_t* in = job.in + y * job.in_stride;
    std::uint8_t* out = job.out + y * job.out_stride;
    const __m256i* k = weights;
    int x = 0;
    for (; x < last; ++x, k += pairs) {
      const std::uint32_t bytes = pixel_avx2<C, P>(in + (first[x] - in_x) * C, k, pairs);
      std::memcpy(out + x * C, &bytes, 4);
    }
    if (x < end) {
      const std::uint32_t bytes = pixel_avx2<C, P>(in + (first[x] - in_x) * C, k, pairs);
      std::memcpy(out + x * C, &bytes, 3);
    }
  }
}

template <int C>
[[gnu::target("avx2")]] void horizontal_avx2(const HorizontalJob& job) {
  const TapsView& taps = job.taps;
  const int max_count = *std::max_element(taps.count, taps.count + job.out_width);
  const int pairs = std::max(1, (max_count + 1) / 2);
  if (pairs > kMaxPairs || job.scratch == nullptr) return horizontal_portable<C>(job);
  // The leading pixels whose 8-byte reads of all `pairs` pairs stay inside the row; the rest
  // (the last one or two) run portable.
  int end = 0;
  while (end < job.out_width && taps.first[end] >= job.in_x &&
         C * (taps.first[end] - job.in_x + 2 * pairs - 2) + 8 <= C * job.in_width) {
    ++end;
  }
  constexpr std::size_t kLanes = sizeof(__m256i) / sizeof(std::int32_t);
  job.scratch->resize((std::size_t(end) * pairs + 1) * kLanes);  // + 1: room to align
  auto* weights = reinterpret_cast<__m256i*>(
      (reinterpret_cast<std::uintptr_t>(job.scratch->data()) + 31) & ~std::uintptr_t{31});
  for (int x = 0; x < end; ++x) {
    for (int j = 0; j < pairs; ++j) {
      weights[x * pairs + j] = pair_weights<C>(taps.weights + x * taps.stride + 2 * j);
    }
  }
  switch (pairs) {
    case 1:
      pixels_avx2<C, 1>(job, end, pairs, weights);
      break;
    case 2:
      pixels_avx2<C, 2>(job, end, pairs, weights);
      break;
    case 3:
      pixels_avx2<C, 3>(job, end, pairs, weights);
      break;
    case 4:
      pixels_avx2<C, 4>(job, end, pairs, weights);
      break;
    default:
      pixels_avx2<C, 0>(job, end, pairs, weights);
  }
  horizontal_span<C>(job, end, job.out_width);
}

[[gnu::target("avx2")]] inline __m256i accumulate(__m256i sum, const std::uint8_t* in,
                                                  __m256i weight) {
  return _mm256_add_epi32(sum, times(in, weight));
}

// Vertical: 32 bytes of the row a step, their sums in registers over all taps.
[[gnu::target("avx2")]] void vertical_avx2(const std::uint8_t* rows, std::size_t row_stride,
                                           const std::int32_t* weights, int count,
                                           std::uint8_t* out, std::size_t bytes) {
  const __m256i half = _mm256_set1_epi32(kHalf);
  const __m256i in_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  std::size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    __m256i s0 = half, s1 = half, s2 = half, s3 = half;
    const std::uint8_t* in = rows + i;
    for (int t = 0; t < count; ++t, in += row_stride) {
      const __m256i weight = _mm256_set1_epi32(weights[t]);
      s0 = accumulate(s0, in, weight);
      s1 = accumulate(s1, in + 8, weight);
      s2 = accumulate(s2, in + 16, weight);
      s3 = accumulate(s3, in + 24, weight);
    }
    const __m256i w01 = _mm256_packs_epi32(_mm256_srai_epi32(s0, kPrecisionBits),
                                           _mm256_srai_epi32(s1, kPrecisionBits));
    const __m256i w23 = _mm256_packs_epi32(_mm256_srai_epi32(s2, kPrecisionBits),
                                           _mm256_srai_epi32(s3, kPrecisionBits));
    // The packs work within 128-bit lanes: put the 4-byte groups back in order.
    const __m256i packed = _mm256_permutevar8x32_epi32(_mm256_packus_epi16(w01, w23), in_order);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + i), packed);
  }
  if (i < bytes) vertical_portable(rows + i, row_stride, weights, count, out + i, bytes - i);
}

const ResampleKernels kPortable{{horizontal_portable<1>, horizontal_portable<2>,
                                 horizontal_portable<3>, horizontal_portable<4>},
                                vertical_portable};

const ResampleKernels kAvx2{
    {horizontal_portable<1>, horizontal_portable<2>, horizontal_avx2<3>, horizontal_avx2<4>},
    vertical_avx2};

}  // namespace

// Explicit dispatch, as for normalize: ifunc resolvers run before the sanitizer runtimes.
const ResampleKernels& resample_kernels() {
  static const ResampleKernels& kernels = __builtin_cpu_supports("avx2") ? kAvx2 : kPortable;
  return kernels;
}

const ResampleKernels& portable_resample_kernels() {
  return kPortable;
}

}  // namespace gpufeed::formats::detail
