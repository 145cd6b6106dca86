#include "cuda/normalize_plan.hpp"

#include <algorithm>

namespace gpufeed::pipeline::normalize_device {

namespace {

/// Staged input bytes a row tile aims at: 8 blocks of an SM keep ~8 KiB each in flight while
/// staging, and use 72 KiB of its shared memory.
constexpr std::uint32_t kTileBytes = 8192;
constexpr std::uint32_t kMaxTileRows = 64;  ///< bounds the table of segment offsets

std::uint32_t ceil_div(std::uint64_t n, std::uint64_t d) {
  return static_cast<std::uint32_t>((n + d - 1) / d);
}

/// Blocks for `work` units of a grid-stride loop: at most max_blocks, and as few as do it in
/// the same number of rounds, so that every block's loop runs that many rounds. (With 5376
/// tiles on 1056 blocks, 96 blocks would run a sixth round alone: a sixth of the time with
/// 9% of the grid's loads in flight.)
unsigned grid_for(std::uint64_t work, unsigned max_blocks) {
  const std::uint64_t rounds = std::max<std::uint64_t>(1, ceil_div(work, std::max(max_blocks, 1u)));
  return static_cast<unsigned>(std::max<std::uint64_t>(1, ceil_div(work, rounds)));
}

Constants constants_of(const NormalizeKernelArgs& a) {
  Constants k{};
  std::copy(a.mean, a.mean + 4, k.mean);
  std::copy(a.inv_std, a.inv_std + 4, k.inv_std);
  return k;
}

template <typename T>
ElementwiseArgs map_args(const NormalizeKernelArgs& a, const std::uint8_t* in, std::uint32_t count,
                         T* out) {
  const std::uint32_t plane = a.in_height * a.in_width;
  const std::uint32_t elements = count * plane * a.channels;
  constexpr std::uint32_t kV = kVector<T>;
  ElementwiseArgs m;
  m.in = in;
  m.out = out;
  m.head = std::min(elements_to_alignment(out), elements);
  m.vectors = (elements - m.head) / kV;
  m.tail = elements - m.head - m.vectors * kV;
  m.channels = a.channels;
  m.inner = FastDiv(a.in_nchw || a.channels == 1 ? plane : 1);
  m.channel = FastDiv(a.channels);
  // A vector's kV input bytes (4, 8 or 16) are one load, aligned to its size.
  m.in_aligned = reinterpret_cast<std::uintptr_t>(in + m.head) % kV == 0;
  m.k = constants_of(a);
  return m;
}

/// Rows per tile and pixels per tile along a row: whole rows while a row's staged segments fit
/// in kTileBytes, as many as fit; pieces of one row otherwise.
void shape_tiles(const NormalizeKernelArgs& a, RowArgs& r) {
  const std::uint32_t segments = a.in_nchw ? a.channels : 1;
  auto stride = [&](std::uint32_t pixels) {  // a segment's bytes, rounded, and room for its phase
    const std::uint32_t length = a.in_nchw ? pixels : pixels * a.channels;
    return (length + 15) / 16 * 16 + 16;
  };
  std::uint32_t pieces = 1;
  r.piece = a.out_width;
  r.rows = 1;
  if (std::uint64_t{a.out_width} * a.channels > kTileBytes) {
    r.piece = kTileBytes / a.channels / 16 * 16;  // pieces of a row start 16-byte aligned
    pieces = ceil_div(a.out_width, r.piece);
  } else {
    const std::uint32_t fit = kTileBytes / (segments * stride(a.out_width));
    const std::uint32_t most = std::clamp(fit, 1u, std::min(a.out_height, kMaxTileRows));
    r.rows = ceil_div(a.out_height, ceil_div(a.out_height, most));  // bands of equal height
  }
  r.pieces = FastDiv(pieces);
  r.tiles_per_sample = FastDiv(ceil_div(a.out_height, r.rows) * pieces);
  r.segments = FastDiv(segments);
  r.segment_stride = stride(r.piece);
  r.chunks = FastDiv(r.segment_stride / 16);
  r.max_segments = r.rows * segments;
}

RowArgs row_args(const NormalizeKernelArgs& a, const std::uint8_t* in, std::uint32_t count,
                 const SampleAugment* augment, void* out) {
  RowArgs r;
  r.in = in;
  r.out = out;
  r.augment = augment;
  r.in_height = a.in_height;
  r.in_width = a.in_width;
  r.channels = a.channels;
  r.out_height = a.out_height;
  r.out_width = a.out_width;
  r.max_crop_y = a.in_height - a.out_height;
  r.max_crop_x = a.in_width - a.out_width;
  r.in_sample = a.in_height * a.in_width * a.channels;
  shape_tiles(a, r);
  r.tiles = count * r.tiles_per_sample.divisor;
  r.row_elements = FastDiv(a.out_nchw ? a.out_width : a.out_width * a.channels);
  r.pixel = FastDiv(a.channels);
  r.k = constants_of(a);
  return r;
}

}  // namespace

LaunchPlan plan_launch(const NormalizeKernelArgs& args, const std::uint8_t* in, std::uint32_t count,
                       const SampleAugment* augment, void* out, unsigned max_blocks) {
  LaunchPlan p;
  p.dtype = args.dtype;
  // With one channel NHWC and NCHW are the same order.
  p.in_nchw = args.in_nchw && args.channels > 1;
  p.out_nchw = args.out_nchw && args.channels > 1;
  p.elementwise = augment == nullptr && p.in_nchw == p.out_nchw &&
                  args.out_height == args.in_height && args.out_width == args.in_width;
  if (p.elementwise) {
    p.in_nchw = p.out_nchw = false;  // one kernel per element type
    with_kernel_types(p, [&](auto type, auto, auto) {
      using T = typename decltype(type)::type;
      p.map = map_args(args, in, count, static_cast<T*>(out));
      p.blocks = grid_for(ceil_div(p.map.vectors, kThreads * kUnroll<T>), max_blocks);
    });
    return p;
  }
  NormalizeKernelArgs a = args;
  a.in_nchw = p.in_nchw;
  a.out_nchw = p.out_nchw;
  p.rows = row_args(a, in, count, augment, out);
  p.blocks = grid_for(p.rows.tiles, max_blocks);
  p.shared_bytes = row_shared_bytes(p.rows.max_segments, p.rows.segment_stride);
  return p;
}

}  // namespace gpufeed::pipeline::normalize_device
