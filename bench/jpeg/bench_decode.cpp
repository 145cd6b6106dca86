// The jpeg target of the pipeline: samples/s of the Loader decoding a jpeg-layout file into
// normalized float batches, against plain libjpeg-turbo decoding (full size, no resize) of the
// same files on the same number of threads, measured in one run. One JSON line.
//
//   bench_jpeg_decode --data photos.h5 [--size 128x128] [--workers N] [--epochs 3]
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "gpufeed/formats/jpeg_codec.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/profiler/clock.hpp"

namespace {

struct Args {
  std::string data;
  std::uint32_t height = 128, width = 128;
  unsigned workers = std::max(1u, std::thread::hardware_concurrency());
  unsigned epochs = 3;
};

Args parse(int argc, char** argv) {
  Args a;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string key = argv[i], value = argv[i + 1];
    if (key == "--data") a.data = value;
    if (key == "--workers") a.workers = static_cast<unsigned>(std::stoul(value));
    if (key == "--epochs") a.epochs = static_cast<unsigned>(std::stoul(value));
    if (key == "--size") {
      a.height = static_cast<std::uint32_t>(std::stoul(value.substr(0, value.find('x'))));
      a.width = static_cast<std::uint32_t>(std::stoul(value.substr(value.find('x') + 1)));
    }
  }
  return a;
}

struct Plain {
  double images_per_s = 0;
  double megapixels_per_s = 0;
};

/// tjDecompress2 at full size on `workers` threads, each with its own handle, each sample once
/// per pass; the bytes are read into memory first so only decoding is timed.
Plain plain_decode(const gpufeed::formats::JpegDatasetReader& reader, unsigned workers,
                   unsigned passes) {
  const std::uint64_t n = reader.num_samples();
  std::vector<std::vector<std::uint8_t>> bytes(n);
  for (std::uint64_t i = 0; i < n; ++i) reader.sample_bytes(i, bytes[i]);
  std::vector<double> pixels(workers, 0.0);
  const std::int64_t t0 = gpufeed::profiler::now_ns();
  std::vector<std::thread> threads;
  for (unsigned w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      gpufeed::formats::JpegDecoder decoder(reader.path());
      for (unsigned p = 0; p < passes; ++p) {
        for (std::uint64_t i = w; i < n; i += workers) {
          const gpufeed::formats::Image image = decoder.decode(bytes[i], i);
          pixels[w] += static_cast<double>(image.width) * image.height;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  const double s = static_cast<double>(gpufeed::profiler::now_ns() - t0) * 1e-9;
  double total = 0;
  for (double p : pixels) total += p;
  return {static_cast<double>(n * passes) / s, total / s / 1e6};
}

double loader_rate(const Args& a) {
  gpufeed::LoaderOptions o;
  o.path = a.data;
  o.batch_size = 64;
  o.workers = a.workers;
  o.order = gpufeed::Order::random;
  o.height = a.height;
  o.width = a.width;
  o.augment = gpufeed::Augment::none;
  gpufeed::Loader loader(o);
  std::uint64_t samples = 0;
  double sink = 0;
  const std::int64_t t0 = gpufeed::profiler::now_ns();
  for (unsigned e = 0; e < a.epochs; ++e) {
    for (gpufeed::Batch& b : loader.epoch(e)) {
      samples += b.size();
      sink += b.images()[0];
    }
  }
  const double s = static_cast<double>(gpufeed::profiler::now_ns() - t0) * 1e-9;
  if (sink == 12345.678) std::puts("");  // keep the reads
  return static_cast<double>(samples) / s;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = parse(argc, argv);
  if (a.data.empty()) {
    std::fprintf(stderr, "usage: bench_jpeg_decode --data photos.h5 [--size HxW] [--workers N]\n");
    return 2;
  }
  try {
    const gpufeed::formats::JpegDatasetReader reader(a.data);
    const Plain plain = plain_decode(reader, a.workers, a.epochs);
    const double loader = loader_rate(a);
    std::printf(
        "{\"workers\": %u, \"size\": \"%ux%u\", \"plain_decode_images_per_s\": %.1f, "
        "\"plain_decode_megapixels_per_s\": %.1f, \"loader_images_per_s\": %.1f, "
        "\"loader_over_plain\": %.3f}\n",
        a.workers, a.height, a.width, plain.images_per_s, plain.megapixels_per_s, loader,
        loader / plain.images_per_s);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_jpeg_decode: error: %s\n", e.what());
    return 1;
  }
  return 0;
}
