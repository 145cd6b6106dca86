// The jpeg-layout target of the pipeline: samples/s of the Loader decoding a jpeg-layout file
// (JPEG, PNG or WebP samples) into normalized float batches, against plain decoding (full size,
// no resize: tjDecompress2 for JPEG, libspng, libwebp) of the same files on the same number of
// threads, measured in one run. The two alternate, one pass over the file each per round after
// a warm-up round, so a change in the machine's load hits both; the ratio is the median of the
// rounds' ratios. One JSON line.
//
// --plain-only times plain decoding alone (run_formats_vs_pillow.sh alternates it with Pillow).
//
//   bench_jpeg_decode --data photos.h5 [--size 128x128] [--workers N] [--rounds 5]
//                     [--augment none|flip|crop-flip|center] [--plain-only 1]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpufeed/formats/image_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/profiler/clock.hpp"

namespace {

struct Args {
  std::string data;
  std::uint32_t height = 128, width = 128;
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  unsigned rounds = 5;
  gpufeed::Augment augment = gpufeed::Augment::none;
  bool plain_only = false;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--data") a.data = value;
    if (key == "--workers") a.workers = static_cast<unsigned>(std::stoul(value));
    if (key == "--rounds" || key == "--epochs") a.rounds = static_cast<unsigned>(std::stoul(value));
    if (key == "--augment") a.augment = gpufeed::parse_augment(value);
    if (key == "--plain-only") a.plain_only = value != "0";
    if (key == "--size") {
      a.height = static_cast<std::uint32_t>(std::stoul(value.substr(0, value.find('x'))));
      a.width = static_cast<std::uint32_t>(std::stoul(value.substr(value.find('x') + 1)));
    }
  }
  a.rounds = std::max(1u, a.rounds);
  return a;
}

/// Each sample decoded at full size to RGB by its own format's library (ImageDecoder:
/// tjDecompress2, libspng, libwebp) on `workers` threads, each with its own decoder and a reused
/// output buffer, each sample once per pass; the bytes are read into memory first so only
/// decoding is timed.
class PlainDecode {
 public:
  PlainDecode(const gpufeed::formats::JpegDatasetReader& reader, unsigned workers)
      : reader_(reader), workers_(workers), bytes_(reader.num_samples()) {
    for (std::uint64_t i = 0; i < bytes_.size(); ++i) reader.sample_bytes(i, bytes_[i]);
  }

  /// One pass; returns images/s and adds the decoded pixels to `megapixels`.
  double pass(double& megapixels) const {
    const std::uint64_t n = bytes_.size();
    std::vector<double> pixels(workers_, 0.0);
    const std::int64_t t0 = gpufeed::profiler::now_ns();
    std::vector<std::thread> threads;
    for (unsigned w = 0; w < workers_; ++w) {
      threads.emplace_back([&, w] {
        gpufeed::formats::ImageDecoder decoder(reader_.path());
        std::vector<std::uint8_t> out;
        for (std::uint64_t i = w; i < n; i += workers_) {
          const gpufeed::formats::ImageInfo info = decoder.header(bytes_[i], i);
          if (out.size() < std::size_t{info.width} * info.height * 3) {
            out.resize(std::size_t{info.width} * info.height * 3);
          }
          const gpufeed::formats::ImageView view{out.data(), info.width, info.height, 3,
                                                 std::size_t{info.width} * 3};
          decoder.decode(bytes_[i], info, view, i);
          pixels[w] += static_cast<double>(info.width) * info.height;
        }
      });
    }
    for (auto& t : threads) t.join();
    const double s = static_cast<double>(gpufeed::profiler::now_ns() - t0) * 1e-9;
    for (double p : pixels) megapixels += p * 1e-6;
    return static_cast<double>(n) / s;
  }

  [[nodiscard]] double seconds_of(double images_per_s) const {
    return static_cast<double>(bytes_.size()) / images_per_s;
  }

 private:
  const gpufeed::formats::JpegDatasetReader& reader_;
  unsigned workers_;
  std::vector<std::vector<std::uint8_t>> bytes_;
};

gpufeed::LoaderOptions loader_options(const Args& a) {
  gpufeed::LoaderOptions o;
  o.source.path = a.data;
  o.sampling.batch_size = 64;
  o.resources.workers = a.workers;
  o.sampling.order = gpufeed::Order::random;
  o.image.height = a.height;
  o.image.width = a.width;
  o.image.augment = a.augment;
  return o;
}

/// One epoch of the Loader; returns images/s.
double loader_epoch(gpufeed::Loader& loader, unsigned epoch) {
  std::uint64_t samples = 0;
  double sink = 0;
  const std::int64_t t0 = gpufeed::profiler::now_ns();
  for (gpufeed::Batch& b : loader.epoch(epoch)) {
    samples += b.size();
    sink += b.images()[0];
  }
  const double s = static_cast<double>(gpufeed::profiler::now_ns() - t0) * 1e-9;
  if (sink == 12345.678) std::puts("");  // keep the reads
  return static_cast<double>(samples) / s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (a.data.empty()) {
    std::fprintf(stderr,
                 "usage: bench_jpeg_decode --data photos.h5 [--size HxW] [--workers N] "
                 "[--rounds R] [--augment MODE] [--plain-only 1]\n");
    return 2;
  }
  try {
    const gpufeed::formats::JpegDatasetReader reader(a.data);
    const PlainDecode plain(reader, a.workers);
    double megapixels = 0;
    plain.pass(megapixels);  // warm-up: threads, page faults, caches
    if (a.plain_only) {
      std::vector<double> rate;
      megapixels = 0;
      for (unsigned r = 0; r < a.rounds; ++r) rate.push_back(plain.pass(megapixels));
      double seconds = 0;
      for (double x : rate) seconds += plain.seconds_of(x);
      std::printf(
          "{\"workers\": %u, \"rounds\": %u, \"plain_decode_images_per_s\": %.1f, "
          "\"plain_decode_megapixels_per_s\": %.1f}\n",
          a.workers, a.rounds, median(rate), megapixels / seconds);
      return 0;
    }
    gpufeed::Loader loader(loader_options(a));
    loader_epoch(loader, 0);
    megapixels = 0;
    std::vector<double> plain_rate, loader_rate, ratio;
    for (unsigned r = 0; r < a.rounds; ++r) {
      plain_rate.push_back(plain.pass(megapixels));
      loader_rate.push_back(loader_epoch(loader, r + 1));
      ratio.push_back(loader_rate.back() / plain_rate.back());
    }
    std::string each;
    for (double r : ratio) each += (each.empty() ? "" : ", ") + std::to_string(r).substr(0, 5);
    double plain_seconds = 0;
    for (double rate : plain_rate) plain_seconds += plain.seconds_of(rate);
    std::printf(
        "{\"workers\": %u, \"size\": \"%ux%u\", \"augment\": \"%s\", \"rounds\": %u, "
        "\"plain_decode_images_per_s\": %.1f, \"plain_decode_megapixels_per_s\": %.1f, "
        "\"loader_images_per_s\": %.1f, \"loader_over_plain\": %.3f, "
        "\"loader_over_plain_min\": %.3f, \"loader_over_plain_max\": %.3f, "
        "\"loader_over_plain_rounds\": [%s]}\n",
        a.workers, a.height, a.width, gpufeed::to_string(a.augment).c_str(), a.rounds,
        median(plain_rate), megapixels / plain_seconds, median(loader_rate), median(ratio),
        *std::min_element(ratio.begin(), ratio.end()),
        *std::max_element(ratio.begin(), ratio.end()), each.c_str());
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_jpeg_decode: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
