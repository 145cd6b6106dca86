// Pillow's resampling (libImaging/Resample.c, 8 bits per channel): weights from a filter whose
// support is scaled by the downscale factor, normalized and rounded to 22-bit fixed point; a
// horizontal pass over the rows the vertical pass needs, then a vertical pass, each rounding
// to 8 bits. Doing exactly the same arithmetic gives exactly Pillow's pixels.
#include "gpufeed/formats/resize.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

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

inline std::int32_t fixed_point(double weight) {
  const double scaled = weight * (1 << detail::kPrecisionBits);
  return static_cast<std::int32_t>(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
}

void check_arguments(const ConstImageView& source, const SourceBox& box,
                     const ImageView& destination) {
  if (source.channels < 1 || source.channels > 4 || source.channels != destination.channels) {
    throw std::invalid_argument("resize needs 1-4 channels on both sides, got " +
                                std::to_string(source.channels) + " and " +
                                std::to_string(destination.channels));
  }
  if (source.width == 0 || source.height == 0 || destination.width == 0 ||
      destination.height == 0 || destination.data == nullptr || source.data == nullptr) {
    throw std::invalid_argument("resize needs non-empty images");
  }
  const bool inside = box.left >= 0 && box.top >= 0 && box.right <= source.width &&
                      box.bottom <= source.height && box.left < box.right && box.top < box.bottom;
  if (!inside) {
    throw std::invalid_argument("resize box (" + std::to_string(box.left) + ", " +
                                std::to_string(box.top) + ", " + std::to_string(box.right) + ", " +
                                std::to_string(box.bottom) + ") is empty or leaves the " +
                                std::to_string(source.width) + "x" + std::to_string(source.height) +
                                " source");
  }
}

}  // namespace

void Resizer::compute_taps(int in_size, double in0, double in1, int out_size, ResizeFilter filter,
                           Taps& taps) {
  const double support_unit = filter == ResizeFilter::area ? 0.5 : 1.0;
  double (*const weight_of)(double) = filter == ResizeFilter::area ? box_weight : triangle_weight;
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

void Resizer::resize(const ConstImageView& source, const ImageView& destination,
                     ResizeFilter filter) {
  resize(source,
         SourceBox{0, 0, static_cast<double>(source.width), static_cast<double>(source.height)},
         destination, filter);
}

void Resizer::resize(const ConstImageView& source, const SourceBox& box,
                     const ImageView& destination, ResizeFilter filter) {
  check_arguments(source, box, destination);
  compute_taps(static_cast<int>(source.width), box.left, box.right,
               static_cast<int>(destination.width), filter, horizontal_);
  compute_taps(static_cast<int>(source.height), box.top, box.bottom,
               static_cast<int>(destination.height), filter, vertical_);
  resample(source, box, destination);
}

// Resamples source rows [first_row, first_row + rows) horizontally into `out`.
void Resizer::horizontal_pass(const ConstImageView& source, int first_row, int rows,
                              const ImageView& out) {
  detail::HorizontalJob job;
  job.in = source.row(static_cast<std::uint32_t>(first_row));
  job.in_stride = source.stride;
  job.in_width = static_cast<int>(source.width);
  job.out = out.data;
  job.out_stride = out.stride;
  job.out_width = static_cast<int>(out.width);
  job.rows = rows;
  job.taps = {horizontal_.first.data(), horizontal_.count.data(), horizontal_.weights.data(),
              horizontal_.size};
  job.scratch = &kernel_scratch_;
  detail::resample_kernels().horizontal[source.channels - 1](job);
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

void Resizer::resample(const ConstImageView& source, const SourceBox& box,
                       const ImageView& destination) {
  const bool horizontal =
      destination.width != source.width || box.left != 0 || box.right != source.width;
  const bool vertical =
      destination.height != source.height || box.top != 0 || box.bottom != source.height;
  if (!vertical) {  // the horizontal pass (if any) writes straight into the destination
    if (horizontal) return horizontal_pass(source, 0, static_cast<int>(source.height), destination);
    const std::size_t row_bytes = std::size_t{destination.width} * destination.channels;
    for (std::uint32_t y = 0; y < destination.height; ++y) {
      std::memcpy(destination.row(y), source.row(y), row_bytes);
    }
    return;
  }
  if (!horizontal) return vertical_pass(source, 0, destination);
  // Only the rows the vertical pass reads are resampled horizontally.
  const int first_row = vertical_.first.front();
  const int rows = vertical_.first.back() + vertical_.count.back() - first_row;
  const std::size_t row_bytes = std::size_t{destination.width} * destination.channels;
  intermediate_.resize(row_bytes * static_cast<std::size_t>(rows));
  const ImageView between{intermediate_.data(), destination.width, static_cast<std::uint32_t>(rows),
                          destination.channels, row_bytes};
  horizontal_pass(source, first_row, rows, between);
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
