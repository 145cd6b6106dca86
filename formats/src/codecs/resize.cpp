// Pillow's resampling (libImaging/Resample.c, 8 bits per channel): weights from a filter whose
// support is scaled by the downscale factor, normalized and rounded to 22-bit fixed point; a
// horizontal pass over the rows the vertical pass needs, then a vertical pass, each rounding
// to 8 bits. Doing exactly the same arithmetic gives exactly Pillow's pixels.
#include "gpufeed/formats/resize.hpp"
#include "gpufeed/base/errors.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "resample_kernels.hpp"

namespace gpufeed::formats {

namespace {

double box_weight(double x) {
  return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
}

double triangle_weight(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

// Pillow's bicubic (a = -0.5), support 2: negative lobes, so sums are clamped (clip8).
double bicubic_weight(double x) {
  constexpr double a = -0.5;
  x = std::fabs(x);
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return (((x - 5.0) * x + 8.0) * x - 4.0) * a;
  return 0.0;
}

inline std::int32_t fixed_point(double weight) {
  const double scaled = weight * (1 << detail::kPrecisionBits);
  return static_cast<std::int32_t>(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
}

void check_box(const SourceBox& box, std::uint32_t width, std::uint32_t height) {
  const bool inside = box.left >= 0 && box.top >= 0 && box.right <= width && box.bottom <= height &&
                      box.left < box.right && box.top < box.bottom;
  if (!inside) {
    throw UsageError("resize box (" + std::to_string(box.left) + ", " + std::to_string(box.top) +
                     ", " + std::to_string(box.right) + ", " + std::to_string(box.bottom) +
                     ") is empty or leaves the " + std::to_string(width) + "x" +
                     std::to_string(height) + " source");
  }
}

void check_arguments(const SourcePart& part, const SourceBox& box, const ImageView& destination) {
  const ConstImageView& source = part.pixels;
  if (source.channels < 1 || source.channels > 4 || source.channels != destination.channels) {
    throw UsageError("resize needs 1-4 channels on both sides, got " +
                     std::to_string(source.channels) + " and " +
                     std::to_string(destination.channels));
  }
  if (source.width == 0 || source.height == 0 || destination.width == 0 ||
      destination.height == 0 || destination.data == nullptr || source.data == nullptr) {
    throw UsageError("resize needs non-empty images");
  }
  check_box(box, part.source_width, part.source_height);
}

bool covers(const SourcePart& part, const PixelRect& rect) {
  return rect.x >= part.x && rect.y >= part.y &&
         rect.x + rect.width <= part.x + part.pixels.width &&
         rect.y + rect.height <= part.y + part.pixels.height;
}

}  // namespace

void compute_resize_taps(int in_size, double in0, double in1, int out_size, ResizeFilter filter,
                         ResizeTaps& taps) {
  const double support_unit =
      filter == ResizeFilter::area ? 0.5 : (filter == ResizeFilter::bicubic ? 2.0 : 1.0);
  double (*const weight_of)(double) =
      filter == ResizeFilter::area
          ? box_weight
          : (filter == ResizeFilter::bicubic ? bicubic_weight : triangle_weight);
  const double scale = (in1 - in0) / out_size;
  const double filter_scale = std::max(scale, 1.0);
  const double support = support_unit * filter_scale;
  // Pillow's kernel size is ceil(support) * 2 + 1; one zero more makes it even, so the SIMD
  // kernels can read the taps in pairs.
  taps.size = static_cast<int>(std::ceil(support)) * 2 + 2;
  taps.first.resize(static_cast<std::size_t>(out_size));
  taps.count.resize(static_cast<std::size_t>(out_size));
  taps.weights.assign(static_cast<std::size_t>(out_size) * taps.size, 0);
  const double inverse_scale = 1.0 / filter_scale;  // Pillow multiplies by the reciprocal
  for (int i = 0; i < out_size; ++i) {
    const double center = in0 + (i + 0.5) * scale;
    const int first = std::max(static_cast<int>(center - support + 0.5), 0);
    const int count = std::min(static_cast<int>(center + support + 0.5), in_size) - first;
    const auto weight = [&](int t) {
      return weight_of((t + first - center + 0.5) * inverse_scale);
    };
    double total = 0.0;
    for (int t = 0; t < count; ++t) total += weight(t);
    std::int32_t* k = taps.weights.data() + static_cast<std::size_t>(i) * taps.size;
    for (int t = 0; t < count; ++t) k[t] = fixed_point(total != 0.0 ? weight(t) / total : 0.0);
    taps.first[i] = first;
    taps.count[i] = std::max(count, 0);
  }
}

void Resizer::compute_taps(int in_size, double in0, double in1, int out_size, ResizeFilter filter,
                           Taps& taps) {
  if (taps.in_size == in_size && taps.in0 == in0 && taps.in1 == in1 && taps.out_size == out_size &&
      taps.filter == filter) {
    return;
  }
  compute_resize_taps(in_size, in0, in1, out_size, filter, taps);
  taps.in_size = in_size;
  taps.in0 = in0;
  taps.in1 = in1;
  taps.out_size = out_size;
  taps.filter = filter;
}

void Resizer::resize(const ConstImageView& source, const ImageView& destination,
                     ResizeFilter filter) {
  resize(source,
         SourceBox{0, 0, static_cast<double>(source.width), static_cast<double>(source.height)},
         destination, filter);
}

void Resizer::resize(const ConstImageView& source, const SourceBox& box,
                     const ImageView& destination, ResizeFilter filter) {
  resize(SourcePart{source, 0, 0, source.width, source.height}, box, destination, filter);
}

PixelRect Resizer::footprint(std::uint32_t source_width, std::uint32_t source_height,
                             const SourceBox& box, std::uint32_t out_width,
                             std::uint32_t out_height, ResizeFilter filter) {
  if (source_width == 0 || source_height == 0 || out_width == 0 || out_height == 0) {
    throw UsageError("resize needs non-empty images");
  }
  check_box(box, source_width, source_height);
  plan(source_width, source_height, box, out_width, out_height, filter);
  return planned_footprint(box, source_width, source_height, out_width, out_height);
}

void Resizer::resize(const SourcePart& part, const SourceBox& box, const ImageView& destination,
                     ResizeFilter filter) {
  check_arguments(part, box, destination);
  plan(part.source_width, part.source_height, box, destination.width, destination.height, filter);
  const PixelRect needed = planned_footprint(box, part.source_width, part.source_height,
                                             destination.width, destination.height);
  if (!covers(part, needed)) {
    throw UsageError("resize: the source part at (" + std::to_string(part.x) + ", " +
                     std::to_string(part.y) + ") " + std::to_string(part.pixels.width) + "x" +
                     std::to_string(part.pixels.height) +
                     " does not hold the pixels the filter reads, (" + std::to_string(needed.x) +
                     ", " + std::to_string(needed.y) + ") " + std::to_string(needed.width) + "x" +
                     std::to_string(needed.height));
  }
  resample(part, box, destination);
}

void Resizer::plan(std::uint32_t source_width, std::uint32_t source_height, const SourceBox& box,
                   std::uint32_t out_width, std::uint32_t out_height, ResizeFilter filter) {
  compute_taps(static_cast<int>(source_width), box.left, box.right, static_cast<int>(out_width),
               filter, horizontal_);
  compute_taps(static_cast<int>(source_height), box.top, box.bottom, static_cast<int>(out_height),
               filter, vertical_);
}

// A dimension the box covers whole at the same size is copied, not resampled: all of it is read.
PixelRect Resizer::planned_footprint(const SourceBox& box, std::uint32_t source_width,
                                     std::uint32_t source_height, std::uint32_t out_width,
                                     std::uint32_t out_height) const {
  const auto span = [](int begin, int end) {
    return std::pair{static_cast<std::uint32_t>(begin), static_cast<std::uint32_t>(end - begin)};
  };
  PixelRect rect{0, 0, source_width, source_height};
  if (out_width != source_width || box.left != 0 || box.right != source_width) {
    int x0 = static_cast<int>(source_width), x1 = 0;
    for (std::size_t i = 0; i < horizontal_.first.size(); ++i) {
      if (horizontal_.count[i] == 0) continue;
      x0 = std::min(x0, horizontal_.first[i]);
      x1 = std::max(x1, horizontal_.first[i] + horizontal_.count[i]);
    }
    if (x1 > x0) std::tie(rect.x, rect.width) = span(x0, x1);
  }
  if (out_height != source_height || box.top != 0 || box.bottom != source_height) {
    const int y0 = vertical_.first.front();
    const int y1 = vertical_.first.back() + vertical_.count.back();
    if (y1 > y0) std::tie(rect.y, rect.height) = span(y0, y1);
  }
  return rect;
}

// Resamples source rows [first_row, first_row + rows) horizontally into `out`.
void Resizer::horizontal_pass(const SourcePart& part, int first_row, int rows,
                              const ImageView& out) {
  detail::HorizontalJob job;
  job.in = part.pixels.row(static_cast<std::uint32_t>(first_row) - part.y);
  job.in_stride = part.pixels.stride;
  job.in_width = static_cast<int>(part.pixels.width);
  job.in_x = static_cast<int>(part.x);
  job.out = out.data;
  job.out_stride = out.stride;
  job.out_width = static_cast<int>(out.width);
  job.rows = rows;
  job.taps = {horizontal_.first.data(), horizontal_.count.data(), horizontal_.weights.data(),
              horizontal_.size};
  job.scratch = &kernel_scratch_;
  detail::resample_kernels().horizontal[part.pixels.channels - 1](job);
}

// Combines rows of `rows` (whose row 0 is source row `row_offset`) into the destination, a
// whole row at a time.
void Resizer::vertical_pass(const ConstImageView& rows, int row_offset,
                            const ImageView& destination) const {
  const detail::VerticalRowKernel kernel = detail::resample_kernels().vertical;
  const std::size_t row_bytes = std::size_t{destination.width} * destination.channels;
  for (std::uint32_t y = 0; y < destination.height; ++y) {
    const int first = vertical_.first[y] - row_offset;
    kernel(rows.row(static_cast<std::uint32_t>(first)), rows.stride,
           vertical_.weights.data() + std::size_t{y} * vertical_.size, vertical_.count[y],
           destination.row(y), row_bytes);
  }
}

// The part covers the footprint: whole rows and columns where a dimension is copied.
void Resizer::resample(const SourcePart& part, const SourceBox& box, const ImageView& destination) {
  const std::uint32_t width = part.source_width, height = part.source_height;
  const bool horizontal = destination.width != width || box.left != 0 || box.right != width;
  const bool vertical = destination.height != height || box.top != 0 || box.bottom != height;
  if (!vertical) {  // the horizontal pass (if any) writes straight into the destination
    if (horizontal) return horizontal_pass(part, 0, static_cast<int>(height), destination);
    const std::size_t row_bytes = std::size_t{destination.width} * destination.channels;
    for (std::uint32_t y = 0; y < destination.height; ++y) {
      std::memcpy(destination.row(y), part.pixels.row(y), row_bytes);
    }
    return;
  }
  if (!horizontal) return vertical_pass(part.pixels, static_cast<int>(part.y), destination);
  // Only the rows the vertical pass reads are resampled horizontally.
  const int first_row = vertical_.first.front();
  const int rows = vertical_.first.back() + vertical_.count.back() - first_row;
  const std::size_t row_bytes = std::size_t{destination.width} * destination.channels;
  intermediate_.resize(row_bytes * static_cast<std::size_t>(rows));
  const ImageView between{intermediate_.data(), destination.width, static_cast<std::uint32_t>(rows),
                          destination.channels, row_bytes};
  horizontal_pass(part, first_row, rows, between);
  vertical_pass(between, first_row, destination);
}

void resize(const ConstImageView& source, const SourceBox& box, const ImageView& destination,
            ResizeFilter filter) {
  Resizer().resize(source, box, destination, filter);
}

void resize(const ConstImageView& source, const ImageView& destination, ResizeFilter filter) {
  Resizer().resize(source, destination, filter);
}

}  // namespace gpufeed::formats
