#pragma once
// The normalize kernel's thread when output element i reads input byte i: no crop, no flip and
// the same layout in and out (or one channel). A pure map over contiguous bytes whose channel
// is (i / inner) % C, with inner 1 for NHWC and H*W for NCHW. Each thread loads the input bytes
// of kUnroll<T> output vectors (4, 8 or 16 bytes each) before converting any, then stores each
// vector as one 16-byte store; the vectors of a warp are consecutive, so every load and store
// instruction of a warp reads or writes one contiguous span.
#include <cstdint>

#include "cuda/normalize_device.cuh"

namespace gpufeed::pipeline::normalize_device {

/// Output vectors per thread and tile, whose loads are in flight together: 4, or 1 for uint8
/// (16 input bytes each), which would not fit in 32 registers with 4.
template <typename T>
inline constexpr unsigned kUnroll = kVector<T> < 16 ? 4 : 1;

struct ElementwiseArgs {
  const std::uint8_t* in = nullptr;
  void* out = nullptr;
  std::uint32_t head = 0;     ///< elements before the first 16-byte aligned output vector
  std::uint32_t vectors = 0;  ///< whole output vectors after the head
  std::uint32_t tail = 0;     ///< elements after the vectors (fewer than one vector)
  std::uint32_t channels = 1;
  FastDiv inner;            ///< consecutive elements of one channel: 1 (NHWC) or H*W (NCHW)
  FastDiv channel;          ///< by channels
  bool in_aligned = false;  ///< in + head is aligned to a vector's input bytes
  Constants k{};
};

/// Where element e is in its channel's run of `inner` elements, and which channel that is.
struct ChannelCursor {
  std::uint32_t in_run;
  std::uint32_t c;

  GPUFEED_HD ChannelCursor(const ElementwiseArgs& a, std::uint32_t e) {
    const std::uint32_t q = a.inner.div(e);
    in_run = e - q * a.inner.divisor;
    c = q - a.channel.div(q) * a.channels;
  }
  GPUFEED_HD void advance(const ElementwiseArgs& a) {
    if (++in_run == a.inner.divisor) {
      in_run = 0;
      c = c + 1 == a.channels ? 0 : c + 1;
    }
  }
};

/// The input bytes of the vector at element e: one load when aligned, else byte by byte.
template <unsigned kWords>
GPUFEED_HD void load_vector_bytes(const ElementwiseArgs& a, std::uint32_t e,
                                  std::uint32_t (&w)[kWords]) {
  if (a.in_aligned) return load_words<kWords>(a.in + e, w);
  GPUFEED_UNROLL
  for (unsigned i = 0; i < kWords; ++i) {
    const std::uint8_t* p = a.in + e + 4 * i;
    w[i] = load_one(p) | (load_one(p + 1) << 8) | (load_one(p + 2) << 16) | (load_one(p + 3) << 24);
  }
}

/// Byte i of the vector's input words.
template <unsigned kWords>
GPUFEED_HD std::uint32_t byte_of(const std::uint32_t (&w)[kWords], unsigned i) {
  return (w[i / 4] >> (8 * (i % 4))) & 0xFF;
}

template <typename T>
GPUFEED_HD void convert_vector(const ElementwiseArgs& a, const ChannelEntry* table, std::uint32_t e,
                               const std::uint32_t (&w)[kVector<T> / 4], T* out) {
  constexpr unsigned kV = kVector<T>;
  float v[kV];
  if (a.inner.divisor == 1) {  // interleaved channels: each element's at a fixed table entry
    const ChannelEntry* k = table + kTableRun * (e - a.channel.div(e) * a.channels);
    GPUFEED_UNROLL
    for (unsigned i = 0; i < kV; ++i) v[i] = normalize_value(byte_of(w, i), k[i]);
    return store_vector(out + e, v);
  }
  ChannelCursor at(a, e);
  if (at.in_run + kV <= a.inner.divisor) {  // one channel: within an NCHW plane
    const ChannelEntry k = table[kTableRun * at.c];
    GPUFEED_UNROLL
    for (unsigned i = 0; i < kV; ++i) v[i] = normalize_value(byte_of(w, i), k.mean, k.inv_std);
  } else {
    GPUFEED_UNROLL
    for (unsigned i = 0; i < kV; ++i) {
      v[i] = normalize_value(byte_of(w, i), table[kTableRun * at.c]);
      at.advance(a);
    }
  }
  store_vector(out + e, v);
}

/// Thread `thread` of block `block` in a grid of `grid` blocks; `table` holds the constants
/// (fill_table). Block 0's first threads also convert the unaligned head and tail elements.
template <typename T>
GPUFEED_HD void elementwise_thread(const ElementwiseArgs& a, const ChannelEntry* table,
                                   unsigned block, unsigned grid, unsigned thread) {
  constexpr unsigned kV = kVector<T>;
  T* out = static_cast<T*>(a.out);
  if (block == 0 && thread < a.head + a.tail) {
    const std::uint32_t e = thread < a.head ? thread : a.head + a.vectors * kV + thread - a.head;
    const ChannelCursor at(a, e);
    out[e] = Element<T>::one(normalize_value(load_one(a.in + e), table[kTableRun * at.c]));
  }
  constexpr unsigned kU = kUnroll<T>;
  constexpr std::uint32_t kPerTile = kThreads * kU;
  for (std::uint32_t first = block * kPerTile; first < a.vectors; first += grid * kPerTile) {
    std::uint32_t w[kU][kV / 4];
    GPUFEED_UNROLL
    for (unsigned u = 0; u < kU; ++u) {
      const std::uint32_t v = first + u * kThreads + thread;
      if (v < a.vectors) load_vector_bytes(a, a.head + v * kV, w[u]);
    }
    GPUFEED_UNROLL
    for (unsigned u = 0; u < kU; ++u) {
      const std::uint32_t v = first + u * kThreads + thread;
      if (v < a.vectors) convert_vector<T>(a, table, a.head + v * kV, w[u], out);
    }
  }
}

}  // namespace gpufeed::pipeline::normalize_device
