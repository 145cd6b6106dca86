// Array sources (npy, synthetic, cifar10, mnist) to schema v1 files: the raw layout through
// pack_file(), or the jpeg layout with every image encoded on the worker threads.
#include <chrono>

#include <oneapi/tbb/enumerable_thread_specific.h>

#include "common/progress.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/ordered_map.hpp"
#include "h5pack/convert_report.hpp"
#include "h5pack/convert_settings.hpp"

namespace gpufeed::tools::h5pack {

namespace {

struct EncodeThread {
  ImageWorker worker;
  std::vector<std::uint8_t> pixels;
};

}  // namespace

formats::PackResult pack_raw(const formats::PackInput& input, const ConvertSettings& s) {
  formats::PackSettings settings;
  settings.writer.samples_per_chunk = s.chunk;
  settings.writer.gzip_level = s.compression.gzip_level;
  settings.threads = s.workers;
  ProgressBar bar("packing", input.samples, input.shape.bytes());
  formats::PackResult result = formats::pack_file(s.output, input, settings,
                                                  [&bar](std::uint64_t done) { bar.update(done); });
  bar.finish();
  return result;
}

int convert_array_to_raw(const formats::PackInput& input, const ConvertSettings& s) {
  print_raw_summary(s.output, pack_raw(input, s), s.compression);
  return 0;
}

int convert_array_to_jpeg(const formats::PackInput& input, const ConvertSettings& s) {
  const formats::SampleShape shape = input.shape;
  if (shape.channels != 1 && shape.channels != 3) {
    throw UsageError("--store jpeg encodes images of 1 or 3 channels, and " + input.description +
                     " has " + std::to_string(shape.channels) + "; use --store raw");
  }
  const auto start = std::chrono::steady_clock::now();
  formats::JpegDatasetWriter writer(s.output);
  oneapi::tbb::enumerable_thread_specific<EncodeThread> threads;
  ChannelSums sums;
  ProgressBar bar("encoding", input.samples, shape.bytes());
  formats::ordered_parallel_map(
      input.samples, s.workers,
      [&](std::uint64_t i) {
        EncodeThread& t = threads.local();
        t.pixels.resize(shape.bytes());
        input.source(i, 1, t.pixels);
        const formats::ConstImageView image(t.pixels.data(), shape.width, shape.height,
                                            shape.channels);
        return t.worker.encode(image, s.jpeg);
      },
      [&](std::uint64_t i, ImageResult r) {
        writer.append(r.bytes, r.shape, input.labels[i]);
        sums.add(r.sums);
        bar.update(i + 1);
      });
  bar.finish();
  if (!input.class_names.empty()) writer.set_class_names(input.class_names);
  if (!input.source_index.empty()) writer.set_source_index(input.source_index);
  writer.set_channel_stats(sums.stats(3));
  JpegSummary summary{
      writer.num_samples(),
      input.class_names.size(),
      writer.total_bytes(),
      writer.num_samples(),
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(),
      {}};
  summary.formats[static_cast<std::size_t>(formats::ImageFormat::jpeg)] = writer.num_samples();
  writer.commit();
  print_jpeg_summary(s.output, summary);
  return 0;
}

}  // namespace gpufeed::tools::h5pack
