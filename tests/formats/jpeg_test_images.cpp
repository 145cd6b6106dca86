#include "jpeg_test_images.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

#include "test_files.hpp"

namespace gpufeed::testing {

namespace {

std::uint32_t hash(std::uint32_t x, std::uint32_t y, std::uint32_t seed) {
  std::uint32_t h = x * 0x9e3779b1u ^ y * 0x85ebca77u ^ seed * 0xc2b2ae3du;
  h ^= h >> 15;
  h *= 0x2c1b3c6du;
  h ^= h >> 12;
  return h;
}

struct Disc {
  double cx, cy, radius;
  double colour[3];
};

std::uint8_t to_byte(double value) {
  return static_cast<std::uint8_t>(std::clamp(std::lround(value), 0L, 255L));
}

}  // namespace

formats::Image photo_like(std::uint32_t width, std::uint32_t height, std::uint32_t channels,
                          std::uint32_t seed) {
  constexpr double kTau = 2 * std::numbers::pi;
  Disc discs[3];
  for (std::uint32_t d = 0; d < 3; ++d) {
    const std::uint32_t h = hash(d, 7, seed);
    discs[d] = {(h % 1000) / 1000.0 * width,
                (h / 1000 % 1000) / 1000.0 * height,
                (0.1 + (h % 97) / 400.0) * std::min(width, height),
                {double(h % 251), double(h / 7 % 251), double(h / 13 % 251)}};
  }
  formats::Image image(width, height, channels);
  for (std::uint32_t y = 0; y < height; ++y) {
    for (std::uint32_t x = 0; x < width; ++x) {
      const double fx = double(x) / width;
      const double fy = double(y) / height;
      double rgb[3] = {128 + 90 * std::sin(kTau * (fx * 1.3 + seed * 0.1)) * std::cos(kTau * fy),
                       120 + 70 * std::cos(kTau * (fx * 0.6 - fy * 1.1)),
                       100 + 60 * std::sin(kTau * (fy * 1.7 + fx * 0.4))};
      for (const Disc& d : discs) {
        if (std::hypot(x - d.cx, y - d.cy) < d.radius) {
          for (int c = 0; c < 3; ++c) rgb[c] = 0.3 * rgb[c] + 0.7 * d.colour[c];
        }
      }
      const double texture = double(hash(x, y, seed) % 25) - 12;
      std::uint8_t* pixel = image.pixels.data() + (std::size_t{y} * width + x) * channels;
      if (channels == 1) {
        pixel[0] = to_byte(0.299 * rgb[0] + 0.587 * rgb[1] + 0.114 * rgb[2] + texture);
        continue;
      }
      for (std::uint32_t c = 0; c < channels; ++c) pixel[c] = to_byte(rgb[c % 3] + texture);
    }
  }
  return image;
}

std::vector<std::uint8_t> encode_jpeg(const formats::Image& image, int quality,
                                      formats::JpegSubsampling subsampling, bool progressive) {
  formats::JpegEncoder encoder(quality, subsampling, progressive);
  return encoder.encode(image.view());
}

PixelDifference difference(const formats::Image& a, const formats::Image& b) {
  if (a.width != b.width || a.height != b.height || a.channels != b.channels) {
    throw std::invalid_argument("difference of images of different shapes");
  }
  PixelDifference result;
  double total = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    const int d = std::abs(int(a.pixels[i]) - int(b.pixels[i]));
    result.max = std::max(result.max, d);
    total += d;
  }
  result.mean = a.pixels.empty() ? 0 : total / double(a.pixels.size());
  return result;
}

double psnr(const formats::Image& a, const formats::Image& b) {
  if (a.pixels.size() != b.pixels.size()) throw std::invalid_argument("psnr of different shapes");
  double squared = 0;
  for (std::size_t i = 0; i < a.pixels.size(); ++i) {
    const double d = double(a.pixels[i]) - double(b.pixels[i]);
    squared += d * d;
  }
  const double mse = squared / double(a.pixels.size());
  return mse == 0 ? 100.0 : 10 * std::log10(255.0 * 255.0 / mse);
}

std::size_t find_marker(const std::vector<std::uint8_t>& bytes, std::uint8_t marker) {
  for (std::size_t i = 0; i + 1 < bytes.size(); ++i) {
    if (bytes[i] == 0xFF && bytes[i + 1] == marker) return i;
  }
  throw std::runtime_error("marker not found");
}

std::vector<std::uint8_t> with_declared_size(std::vector<std::uint8_t> bytes, std::uint16_t width,
                                             std::uint16_t height) {
  // SOF0: FF C0, length (2), precision (1), height (2), width (2), components (1), ...
  const std::size_t sof = find_marker(bytes, 0xC0);
  bytes[sof + 5] = static_cast<std::uint8_t>(height >> 8);
  bytes[sof + 6] = static_cast<std::uint8_t>(height & 0xFF);
  bytes[sof + 7] = static_cast<std::uint8_t>(width >> 8);
  bytes[sof + 8] = static_cast<std::uint8_t>(width & 0xFF);
  return bytes;
}

void write_jpeg_layout(const std::string& path, const JpegLayoutArrays& arrays) {
  UserDataset bytes;
  bytes.name = "/jpeg/bytes";
  bytes.dims = {arrays.bytes.size()};
  bytes.chunk = arrays.chunk;
  bytes.layout = H5D_CONTIGUOUS;
  bytes.user_block = arrays.user_block;
  write_user_file(path, bytes, arrays.bytes);
  add_int_dataset(path, "/jpeg/offsets", arrays.offsets, H5T_STD_U64LE);
  add_int_dataset(path, "/jpeg/shapes", arrays.shapes, H5T_STD_U16LE,
                  {arrays.shapes.size() / 3, 3});
  add_int_dataset(path, "/labels", arrays.labels, H5T_STD_I64LE);
}

JpegLayoutArrays jpeg_layout_of(const std::vector<std::vector<std::uint8_t>>& samples) {
  JpegLayoutArrays arrays;
  arrays.offsets.push_back(0);
  for (std::size_t i = 0; i < samples.size(); ++i) {
    arrays.bytes.insert(arrays.bytes.end(), samples[i].begin(), samples[i].end());
    arrays.offsets.push_back(static_cast<std::int64_t>(arrays.bytes.size()));
    arrays.shapes.insert(arrays.shapes.end(), {8, 8, 3});
    arrays.labels.push_back(static_cast<std::int64_t>(i));
  }
  return arrays;
}

}  // namespace gpufeed::testing
