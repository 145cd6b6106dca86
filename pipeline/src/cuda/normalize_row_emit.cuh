#pragma once
// Phase 2 of the row-tile normalize block (normalize_row_stage.cuh): the tile's output from the
// staged bytes. A run is what the tile writes contiguously: all of it for NHWC output, one
// channel's rows for NCHW. Each run is cut into 16-byte aligned vectors, one per thread and
// round; a partial vector at either end of a run is written element by element.
#include <cstdint>

#include "cuda/normalize_row_stage.cuh"

namespace gpufeed::pipeline::normalize_device {

/// An output element's row and pixel in its tile, and its channel.
struct Position {
  std::uint32_t row, x, c;
};

template <bool kOutNchw>
GPUFEED_HD Position position_at(const RowArgs& a, const Tile& t, std::uint32_t run,
                                std::uint32_t e) {
  // A tile of several rows spans whole rows, so that its rows follow each other in a run; in
  // a tile of one row, e / row_elements is 0.
  const std::uint32_t row = a.row_elements.div(e);
  const std::uint32_t rest = e - row * (kOutNchw ? t.width : t.width * a.channels);
  if (kOutNchw) return {row, rest, run};
  const std::uint32_t x = a.pixel.div(rest);
  return {row, x, rest - x * a.channels};
}

/// The position of the run's next element.
template <bool kOutNchw>
GPUFEED_HD void advance(const RowArgs& a, const Tile& t, Position& p) {
  if (!kOutNchw && ++p.c < a.channels) return;
  if (!kOutNchw) p.c = 0;
  if (++p.x == t.width) {
    p.x = 0;
    ++p.row;
  }
}

/// Where the byte of output position p is in shared memory.
template <bool kInNchw>
GPUFEED_HD std::uint32_t source_index(const RowArgs& a, const Tile& t, const RowShared& sh,
                                      const Position& p) {
  const std::uint32_t xs = t.flip ? t.width - 1 - p.x : p.x;
  const std::uint32_t first = sh.segment_first[p.row * a.segments.divisor + (kInNchw ? p.c : 0)];
  return first + (kInNchw ? xs : xs * a.channels + p.c);
}

template <typename T, bool kInNchw, bool kOutNchw>
GPUFEED_HD void emit_vector(const RowArgs& a, const Tile& t, const RowShared& sh, std::uint32_t run,
                            std::uint32_t e, T* out) {
  constexpr unsigned kV = kVector<T>;
  float v[kV];
  Position p = position_at<kOutNchw>(a, t, run, e);
  const std::uint32_t in_row = kOutNchw ? p.x : p.x * a.channels + p.c;
  const bool one_row = in_row + kV <= (kOutNchw ? t.width : t.width * a.channels);
  std::uint32_t s = source_index<kInNchw>(a, t, sh, p);
  if (kOutNchw && one_row) {
    // One channel of one row: equally spaced bytes, backwards when flipped.
    const std::uint32_t pixel = kInNchw ? 1 : a.channels;
    const std::uint32_t step = t.flip ? 0u - pixel : pixel;  // modulo 2^32
    const ChannelEntry k = sh.table[kTableRun * run];
    GPUFEED_UNROLL
    for (unsigned i = 0; i < kV; ++i) {
      v[i] = normalize_value(sh.bytes[s + i * step], k.mean, k.inv_std);
    }
  } else if (!kOutNchw && !kInNchw && one_row) {
    // Pixels to pixels in one row: consecutive bytes, or pixel by pixel backwards when flipped;
    // the table has each element's constants, and its offset when flipped.
    const ChannelEntry* k = sh.table + kTableRun * p.c;
    if (t.flip) {
      GPUFEED_UNROLL
      for (unsigned i = 0; i < kV; ++i) v[i] = normalize_value(sh.bytes[s + k[i].mirrored], k[i]);
    } else {
      GPUFEED_UNROLL
      for (unsigned i = 0; i < kV; ++i) v[i] = normalize_value(sh.bytes[s + i], k[i]);
    }
  } else {
    GPUFEED_UNROLL
    for (unsigned i = 0; i < kV; ++i) {
      const std::uint32_t at = source_index<kInNchw>(a, t, sh, p);
      v[i] = normalize_value(sh.bytes[at], sh.table[kTableRun * p.c]);
      advance<kOutNchw>(a, t, p);
    }
  }
  store_vector(out + e, v);
}

/// The elements of the partial vector at run elements [e, e + kV) that lie in [0, length).
template <typename T, bool kInNchw, bool kOutNchw>
GPUFEED_HD void emit_elements(const RowArgs& a, const Tile& t, const RowShared& sh,
                              std::uint32_t run, std::int32_t e, std::uint32_t length, T* out) {
  for (std::int32_t i = e < 0 ? 0 : e; i < e + static_cast<std::int32_t>(kVector<T>); ++i) {
    if (static_cast<std::uint32_t>(i) >= length) break;
    const Position p = position_at<kOutNchw>(a, t, run, static_cast<std::uint32_t>(i));
    const std::uint32_t at = source_index<kInNchw>(a, t, sh, p);
    const float v = normalize_value(sh.bytes[at], sh.table[kTableRun * p.c]);
    out[i] = Element<T>::one(v);
  }
}

/// Phase 2 for thread `thread`: converts and writes the tile's output.
template <typename T, bool kInNchw, bool kOutNchw>
GPUFEED_HD void emit_tile(const RowArgs& a, const Tile& t, unsigned thread, const RowShared& sh) {
  constexpr std::uint32_t kV = kVector<T>;
  const std::uint32_t length = t.rows * t.width * (kOutNchw ? 1 : a.channels);
  for (std::uint32_t run = 0; run < (kOutNchw ? a.channels : 1); ++run) {
    const std::uint32_t first =
        kOutNchw ? ((t.sample * a.channels + run) * a.out_height + t.y0) * a.out_width + t.x0
                 : ((t.sample * a.out_height + t.y0) * a.out_width + t.x0) * a.channels;
    T* out = static_cast<T*>(a.out) + first;
    // Vectors start at 16-byte boundaries: the first one `lead` elements before the run when
    // the run starts unaligned.
    const std::uint32_t head = umin(elements_to_alignment(out), length);
    const auto lead = static_cast<std::int32_t>(head == 0 ? 0 : kV - head);
    for (auto e = static_cast<std::int32_t>(thread * kV) - lead;
         e < static_cast<std::int32_t>(length); e += kThreads * kV) {
      if (e >= 0 && static_cast<std::uint32_t>(e) + kV <= length) {
        emit_vector<T, kInNchw, kOutNchw>(a, t, sh, run, static_cast<std::uint32_t>(e), out);
      } else {
        emit_elements<T, kInNchw, kOutNchw>(a, t, sh, run, e, length, out);
      }
    }
  }
}

}  // namespace gpufeed::pipeline::normalize_device
