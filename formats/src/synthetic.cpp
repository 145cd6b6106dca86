#include "gpufeed/formats/synthetic.hpp"
#include "gpufeed/base/errors.hpp"

#include <algorithm>
#include <regex>
#include <stdexcept>

#include "gpufeed/formats/schema.hpp"

namespace gpufeed::formats {

namespace {

const std::regex& spec_pattern() {
  static const std::regex pattern(R"(^(\d+):(\d+)x(\d+)x(\d+)$)");
  return pattern;
}

std::uint64_t parse_count(const std::string& digits, const std::string& text) {
  if (digits.size() > 12) {
    throw UsageError("synthetic dataset '" + text + "': " + digits + " is too large");
  }
  return std::stoull(digits);
}

constexpr std::uint64_t kGradientDomain = 0x6772616469656e74ull;  // "gradient"
constexpr std::uint64_t kLabelDomain = 0x6c6162656c730000ull;     // "labels"

/// Per-channel gradient of one sample: value = base + gx * x/W + gy * y/H.
struct Gradient {
  float base[4];
  float gx[4];
  float gy[4];
};

Gradient sample_gradient(std::uint64_t seed, std::uint64_t sample, std::uint32_t channels) {
  Gradient g{};
  for (std::uint32_t c = 0; c < channels && c < 4; ++c) {
    const std::uint64_t h = hash3(seed ^ kGradientDomain, sample, c);
    g.base[c] = static_cast<float>(48 + (h & 0x9f));
    g.gx[c] = static_cast<float>(static_cast<int>((h >> 8) & 0xff) - 128);
    g.gy[c] = static_cast<float>(static_cast<int>((h >> 16) & 0xff) - 128);
  }
  return g;
}

void fill_sample(const SampleShape& shape, std::uint64_t seed, std::uint64_t sample,
                 std::uint8_t* out) {
  const Gradient g = sample_gradient(seed, sample, shape.channels);
  const std::uint64_t prefix = mix64(seed ^ mix64(sample));
  const float inv_w = 1.0f / static_cast<float>(shape.width);
  const float inv_h = 1.0f / static_cast<float>(shape.height);
  std::uint64_t pixel = 0;
  for (std::uint32_t y = 0; y < shape.height; ++y) {
    const float fy = static_cast<float>(y) * inv_h;
    for (std::uint32_t x = 0; x < shape.width; ++x, ++pixel) {
      const float fx = static_cast<float>(x) * inv_w;
      const std::uint64_t noise = mix64(prefix + pixel);
      for (std::uint32_t c = 0; c < shape.channels; ++c) {
        const std::uint32_t k = c & 3;
        const auto n = static_cast<float>(static_cast<int>((noise >> (8 * k)) & 31) - 16);
        const float v = g.base[k] + g.gx[k] * fx + g.gy[k] * fy + n;
        *out++ = static_cast<std::uint8_t>(std::clamp(v, 0.0f, 255.0f));
      }
    }
  }
}

}  // namespace

bool looks_like_synthetic_spec(const std::string& text) {
  return std::regex_match(text, spec_pattern());
}

SyntheticSpec parse_synthetic_spec(const std::string& text) {
  std::smatch m;
  if (!std::regex_match(text, m, spec_pattern())) {
    throw UsageError("synthetic dataset '" + text +
                     "' is not of the form N:HxWxC; write e.g. 20000:64x64x3");
  }
  SyntheticSpec spec;
  spec.samples = parse_count(m[1].str(), text);
  const std::uint64_t h = parse_count(m[2].str(), text);
  const std::uint64_t w = parse_count(m[3].str(), text);
  const std::uint64_t c = parse_count(m[4].str(), text);
  if (spec.samples == 0 || h == 0 || w == 0 || c == 0 || c > 4) {
    throw UsageError("synthetic dataset '" + text +
                     "': N, H and W must be at least 1 and C between 1 and 4");
  }
  if (h > 65535 || w > 65535 || h * w * c > schema::kMaxSampleBytes) {
    throw UsageError("synthetic dataset '" + text +
                     "': one image is larger than 256 MiB; use a smaller HxWxC");
  }
  if (spec.samples > schema::kMaxSamples) {
    throw UsageError("synthetic dataset '" + text + "': " + m[1].str() +
                     " samples are more than the " + std::to_string(schema::kMaxSamples) +
                     " a dataset may hold; use a smaller N");
  }
  spec.shape = {static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(w),
                static_cast<std::uint32_t>(c), Layout::nhwc};
  return spec;
}

std::string to_string(const SyntheticSpec& spec) {
  return std::to_string(spec.samples) + ":" + std::to_string(spec.shape.height) + "x" +
         std::to_string(spec.shape.width) + "x" + std::to_string(spec.shape.channels);
}

std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

std::uint64_t hash3(std::uint64_t seed, std::uint64_t a, std::uint64_t b) {
  return mix64(mix64(seed ^ mix64(a)) + b);
}

void fill_synthetic(const SampleShape& shape, std::uint64_t seed, std::uint64_t first,
                    std::uint64_t count, std::span<std::uint8_t> out) {
  const std::uint64_t bytes = shape.bytes();
  if (out.size() < count * bytes) {
    throw UsageError("fill_synthetic: output buffer too small");
  }
  for (std::uint64_t i = 0; i < count; ++i) {
    fill_sample(shape, seed, first + i, out.data() + i * bytes);
  }
}

std::vector<std::int64_t> synthetic_labels(std::uint64_t samples, std::uint64_t seed,
                                           std::uint32_t classes) {
  if (classes == 0) throw UsageError("a synthetic dataset needs at least 1 class");
  std::vector<std::int64_t> labels(samples);
  for (std::uint64_t i = 0; i < samples; ++i) {
    labels[i] = static_cast<std::int64_t>(hash3(seed ^ kLabelDomain, i, 0) % classes);
  }
  return labels;
}

std::vector<std::string> synthetic_class_names(std::uint32_t classes) {
  std::vector<std::string> names;
  names.reserve(classes);
  for (std::uint32_t k = 0; k < classes; ++k) names.push_back("class" + std::to_string(k));
  return names;
}

PackInput synthetic_input(const SyntheticSpec& spec, std::uint64_t seed, std::uint32_t classes) {
  PackInput input;
  input.samples = spec.samples;
  input.shape = spec.shape;
  input.description = "synthetic " + to_string(spec) + " (seed " + std::to_string(seed) + ")";
  input.source = [shape = spec.shape, seed](std::uint64_t first, std::uint64_t count,
                                            std::span<std::uint8_t> out) {
    fill_synthetic(shape, seed, first, count, out);
  };
  input.labels = synthetic_labels(spec.samples, seed, classes);
  input.class_names = synthetic_class_names(classes);
  return input;
}

}  // namespace gpufeed::formats
