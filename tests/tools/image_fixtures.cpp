#include "image_fixtures.hpp"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

#include "gpufeed/formats/jpeg_codec.hpp"

namespace gpufeed::testing {

namespace fs = std::filesystem;

formats::Image smooth_image(std::uint32_t width, std::uint32_t height, std::uint32_t channels,
                            std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  formats::Image image(width, height, channels);
  double base[3];
  double gx[3];
  double wave[3];
  for (int c = 0; c < 3; ++c) {
    base[c] = 40 + 150 * unit(rng);
    gx[c] = 80 * (unit(rng) - 0.5);
    wave[c] = 40 * unit(rng);
  }
  const double fx = 0.05 + 0.2 * unit(rng);
  const double fy = 0.05 + 0.2 * unit(rng);
  std::normal_distribution<double> noise(0.0, 3.0);
  std::uint8_t* p = image.pixels.data();
  for (std::uint32_t y = 0; y < height; ++y) {
    for (std::uint32_t x = 0; x < width; ++x) {
      const double u = static_cast<double>(x) / width;
      for (std::uint32_t c = 0; c < channels; ++c) {
        const double v =
            base[c] + gx[c] * u + wave[c] * std::sin(fx * x) * std::cos(fy * y) + noise(rng);
        *p++ = static_cast<std::uint8_t>(std::clamp(v, 0.0, 255.0));
      }
    }
  }
  return image;
}

std::vector<std::uint8_t> encode_jpeg(const formats::Image& image, int quality, bool progressive) {
  formats::JpegEncoder encoder(quality, formats::JpegSubsampling::s420, progressive);
  return encoder.encode(image.view());
}

std::vector<std::string> fixture_classes() {
  return {"Moose", "ant", "zebra"};
}

namespace {

struct Planned {
  std::string relative;  ///< under the class folder
  std::uint32_t width;
  std::uint32_t height;
  std::uint32_t channels;
  bool progressive;
};

// Per class, in the order h5pack must pack them (torchvision: sorted folders, sorted names).
const std::vector<std::vector<Planned>>& plan() {
  static const std::vector<std::vector<Planned>> images = {
      {{"a.jpg", 64, 48, 3, false}, {"b.JPEG", 17, 23, 1, false}, {"c.jpg", 150, 120, 3, true}},
      {{"img1.jpg", 40, 90, 3, false},
       {"img2.jpeg", 33, 33, 3, false},
       {"img3.jpg", 120, 80, 1, false},
       {"sub/deep.jpg", 70, 50, 3, false}},
      {{"z0.jpg", 100, 64, 3, false}, {"z1.jpg", 48, 100, 3, false}, {"z2.jpg", 25, 31, 3, false}},
  };
  return images;
}

}  // namespace

std::vector<FolderImage> make_image_folder(const fs::path& root) {
  const auto classes = fixture_classes();
  std::vector<FolderImage> out;
  std::uint64_t seed = 100;
  // Created zebra first, Moose last: the order on disk must not matter.
  for (int k = static_cast<int>(classes.size()) - 1; k >= 0; --k) {
    fs::create_directories(root / classes[k] / "sub");
    for (const Planned& p : plan()[k]) {
      const formats::Image image = smooth_image(p.width, p.height, p.channels, ++seed);
      FolderImage f{(root / classes[k] / p.relative).string(),
                    k,
                    encode_jpeg(image, 90, p.progressive),
                    p.height,
                    p.width,
                    p.channels};
      write_file(f.path, f.bytes);
      out.push_back(std::move(f));
    }
  }
  const std::string readme = "these are test images\n";
  write_file((root / "ant" / "README.txt").string(),
             {reinterpret_cast<const std::uint8_t*>(readme.data()), readme.size()});
  std::stable_sort(out.begin(), out.end(),
                   [](const FolderImage& a, const FolderImage& b) { return a.label < b.label; });
  return out;
}

}  // namespace gpufeed::testing
