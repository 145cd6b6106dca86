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

namespace gpufeed::formats {

namespace {

constexpr int kPrecisionBits = 32 - 8 - 2;
constexpr std::int32_t kHalf = 1 << (kPrecisionBits - 1);

double box_weight(double x) {
  return x > -0.5 && x <= 0.5 ? 1.0 : 0.0;
}

double triangle_weight(double x) {
  x = std::fabs(x);
  return x < 1.0 ? 1.0 - x : 0.0;
}

inline std::uint8_t clip8(std::int32_t sum) {
  return static_cast<std::uint8_t>(std::clamp(sum >> kPrecisionBits, 0, 255));
}

inline std::int32_t fixed_point(double weight) {
  const double scaled = weight * (1 << kPrecisionBits);
  return static_cast<std::int32_t>(scaled < 0 ? scaled - 0.5 : scaled + 0.5);
}

// One output row from one input row; C channels known at compile time.
template <int C>
void resample_row(const std::uint8_t* in, std::uint8_t* out, int out_width, const int* first,
                  const int* count, const std::int32_t* weights, int taps) {
  for (int x = 0; x < out_width; ++x) {
    const std::uint8_t* pixel = in + first[x] * C;
    const std::int32_t* k = weights + x * taps;
    std::int32_t sum[C];
    for (int c = 0; c < C; ++c) sum[c] = kHalf;
    for (int t = 0; t < count[x]; ++t) {
      for (int c = 0; c < C; ++c) sum[c] += pixel[t * C + c] * k[t];
    }
    for (int c = 0; c < C; ++c) out[x * C + c] = clip8(sum[c]);
  }
}

using RowResampler = void (*)(const std::uint8_t*, std::uint8_t*, int, const int*, const int*,
                              const std::int32_t*, int);

RowResampler row_resampler(std::uint32_t channels) {
  switch (channels) {
    case 1:
      return resample_row<1>;
    case 2:
      return resample_row<2>;
    case 3:
      return resample_row<3>;
    default:
      return resample_row<4>;
  }
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
  taps.size = static_cast<int>(std::ceil(support)) * 2 + 1;
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
                              const ImageView& out) const {
  const RowResampler resample_row_of = row_resampler(source.channels);
  for (int y = 0; y < rows; ++y) {
    resample_row_of(source.row(static_cast<std::uint32_t>(first_row + y)),
                    out.row(static_cast<std::uint32_t>(y)), static_cast<int>(out.width),
                    horizontal_.first.data(), horizontal_.count.data(), horizontal_.weights.data(),
                    horizontal_.size);
  }
}

// Combines rows of `rows` (whose row 0 is source row `row_offset`) into the destination. The
// inner loop runs along a whole row, so it vectorizes whatever the channel count.
void Resizer::vertical_pass(const ConstImageView& rows, int row_offset,
                            const ImageView& destination) {
  const std::size_t row_bytes = std::size_t{destination.width} * destination.channels;
  sums_.resize(row_bytes);
  for (std::uint32_t y = 0; y < destination.height; ++y) {
    const std::int32_t* k = vertical_.weights.data() + std::size_t{y} * vertical_.size;
    const int first = vertical_.first[y] - row_offset;
    std::fill(sums_.begin(), sums_.end(), kHalf);
    for (int t = 0; t < vertical_.count[y]; ++t) {
      const std::uint8_t* in = rows.row(static_cast<std::uint32_t>(first + t));
      const std::int32_t weight = k[t];
      for (std::size_t i = 0; i < row_bytes; ++i) sums_[i] += in[i] * weight;
    }
    std::uint8_t* out = destination.row(y);
    for (std::size_t i = 0; i < row_bytes; ++i) out[i] = clip8(sums_[i]);
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
