#pragma once
// The normalize kernel's block for everything that is not a plain map (normalize_elementwise):
// crops, flips and layout changes; its phase 2 is in normalize_row_emit.cuh. A block takes a tile
// of output rows of one sample (or a piece of one row, when a row is wider than a tile), and
//   1. stages the window's input bytes in shared memory: each input segment (the row's pixels
//      for NHWC input, one channel's row for NCHW) as 16-byte loads of the aligned lines inside
//      it and single bytes at its ends, kept at the same offset modulo 16 as in global memory so
//      that the 16-byte loads land on 16-byte aligned shared addresses;
//   2. writes the tile's output runs (one for NHWC output, one per channel for NCHW) as 16-byte
//      aligned vectors, each thread reading its elements' bytes from shared memory in whatever
//      order the flip and the layouts ask for; unaligned ends element by element.
// The two phases are separate functions so that a CPU test can run phase 1 for every thread of
// a block, then phase 2, as __syncthreads() orders them on the device.
#include <cstdint>

#include "cuda/normalize_device.cuh"
#include "gpufeed/pipeline/augment.hpp"

namespace gpufeed::pipeline::normalize_device {

struct RowArgs {
  const std::uint8_t* in = nullptr;
  void* out = nullptr;
  const SampleAugment* augment = nullptr;  ///< null: no crop, no flip
  std::uint32_t in_height = 0, in_width = 0, channels = 1, out_height = 0, out_width = 0;
  std::uint32_t max_crop_y = 0, max_crop_x = 0;
  std::uint32_t in_sample = 0;  ///< bytes of one input sample
  std::uint32_t rows = 1;       ///< output rows of a tile (1 when rows are split into pieces)
  std::uint32_t piece = 0;      ///< output pixels of a tile along a row
  FastDiv pieces;               ///< tiles across one row
  FastDiv tiles_per_sample;
  std::uint32_t tiles = 0;           ///< of this launch
  FastDiv chunks;                    ///< 16-byte lines a staged segment can touch
  FastDiv segments;                  ///< staged segments per output row: channels (NCHW input) or 1
  std::uint32_t segment_stride = 0;  ///< shared bytes per staged segment
  std::uint32_t max_segments = 0;    ///< rows * segments per row
  FastDiv row_elements;  ///< output elements of a full row in one run: W (NCHW) or W * C (NHWC)
  FastDiv pixel;         ///< by channels
  Constants k{};
};

GPUFEED_HD std::uint32_t umin(std::uint32_t a, std::uint32_t b) {
  return a < b ? a : b;
}

/// The block's shared memory: the constants table, each staged segment's offset of its first
/// byte, and the staged bytes.
struct RowShared {
  ChannelEntry* table;
  std::uint32_t* segment_first;
  std::uint8_t* bytes;
};

GPUFEED_HD std::uint32_t row_shared_bytes(std::uint32_t max_segments, std::uint32_t stride) {
  return kTableEntries * 16 + (max_segments * 4 + 15) / 16 * 16 + max_segments * stride;
}

GPUFEED_HD RowShared row_shared(const RowArgs& a, void* shared) {
  auto* base = static_cast<std::uint8_t*>(shared);
  return {reinterpret_cast<ChannelEntry*>(base),
          reinterpret_cast<std::uint32_t*>(base + kTableEntries * 16),
          base + row_shared_bytes(a.max_segments, 0)};
}

/// One block's unit of work: output rows [y0, y0 + rows) and pixels [x0, x0 + width) of a sample.
struct Tile {
  std::uint32_t sample, y0, rows, x0, width;
  std::uint32_t crop_y, crop_x;  ///< clamped
  bool flip;
};

GPUFEED_HD Tile tile_at(const RowArgs& a, std::uint32_t t) {
  Tile r{};
  r.sample = a.tiles_per_sample.div(t);
  const std::uint32_t in_sample = t - r.sample * a.tiles_per_sample.divisor;
  const std::uint32_t band = a.pieces.div(in_sample);
  r.x0 = (in_sample - band * a.pieces.divisor) * a.piece;
  r.width = umin(a.piece, a.out_width - r.x0);
  r.y0 = band * a.rows;
  r.rows = umin(a.rows, a.out_height - r.y0);
  r.crop_y = r.crop_x = 0;
  r.flip = false;
  if (a.augment != nullptr) {
    const SampleAugment& g = a.augment[r.sample];
    r.crop_y = umin(load_one(&g.crop_y), a.max_crop_y);
    r.crop_x = umin(load_one(&g.crop_x), a.max_crop_x);
    r.flip = load_one(&g.flip) != 0;
  }
  return r;
}

/// Staged segment k of tile t: its first input byte and its length. Segments are the tile's
/// rows (NHWC input), or each row's channels (NCHW input), of the window read left to right;
/// a flipped tile reads the mirrored window.
template <bool kInNchw>
GPUFEED_HD const std::uint8_t* segment_source(const RowArgs& a, const Tile& t, std::uint32_t k) {
  const std::uint32_t row = a.segments.div(k);
  const std::uint32_t c = k - row * a.segments.divisor;
  const std::uint32_t iy = t.crop_y + t.y0 + row;
  const std::uint32_t ix = t.flip ? t.crop_x + a.out_width - t.x0 - t.width : t.crop_x + t.x0;
  const std::uint32_t offset =
      kInNchw ? (c * a.in_height + iy) * a.in_width + ix : (iy * a.in_width + ix) * a.channels;
  return a.in + t.sample * a.in_sample + offset;
}

/// Phase 1 for thread `thread`: stages the tile's input bytes and each segment's first offset.
template <bool kInNchw>
GPUFEED_HD void stage_tile(const RowArgs& a, const Tile& t, unsigned thread, const RowShared& sh) {
  const std::uint32_t length = kInNchw ? t.width : t.width * a.channels;
  const std::uint32_t lines = t.rows * a.segments.divisor * a.chunks.divisor;
  for (std::uint32_t item = thread; item < lines; item += kThreads) {
    const std::uint32_t k = a.chunks.div(item);
    const std::uint32_t j = item - k * a.chunks.divisor;
    const std::uint8_t* src = segment_source<kInNchw>(a, t, k);
    const auto phase = static_cast<std::uint32_t>(reinterpret_cast<std::uintptr_t>(src) % 16);
    std::uint8_t* dst = sh.bytes + k * a.segment_stride;  // holds src - phase at offset 0
    if (j == 0) sh.segment_first[k] = k * a.segment_stride + phase;
    // Line j spans [16 j - phase, 16 j - phase + 16) relative to src.
    const auto lo = static_cast<std::int32_t>(16 * j) - static_cast<std::int32_t>(phase);
    if (lo >= 0 && static_cast<std::uint32_t>(lo) + 16 <= length) {
      std::uint32_t w[4];
      load_words<4>(src + lo, w);
      store16(dst + 16 * j, w);
      continue;
    }
    // A line at an end of the segment: only its bytes inside the segment.
    const std::int32_t end =
        lo + 16 < static_cast<std::int32_t>(length) ? lo + 16 : static_cast<std::int32_t>(length);
    for (std::int32_t b = lo < 0 ? 0 : lo; b < end; ++b) {
      dst[static_cast<std::int32_t>(phase) + b] = static_cast<std::uint8_t>(load_one(src + b));
    }
  }
}

}  // namespace gpufeed::pipeline::normalize_device
