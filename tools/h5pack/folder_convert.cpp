// Image folders to schema v1 files: a oneTBB pipeline reads and decodes (and re-encodes or
// resizes) the files on every worker thread and hands them in order to one writer.
#include <chrono>

#include <oneapi/tbb/enumerable_thread_specific.h>

#include "common/ordered_pipeline.hpp"
#include "common/progress.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "h5pack/convert_report.hpp"
#include "h5pack/convert_settings.hpp"
#include "h5pack/raw_staging.hpp"

namespace gpufeed::tools::h5pack {

namespace {

using Clock = std::chrono::steady_clock;
using Workers = oneapi::tbb::enumerable_thread_specific<ImageWorker>;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

std::uint64_t mean_file_bytes(const ImageFolder& folder) {
  return folder.total_bytes / folder.files.size();
}

/// The writer's side of a bad file: stop on it, or count it.
void on_bad_file(const ImageFile& file, const BadFile& bad, bool skip_bad, SkipLog& skipped) {
  if (!skip_bad) throw BadFileError(bad);
  skipped.add(file.path, bad);
}

void check_some_left(const ImageFolder& folder, std::uint64_t packed) {
  if (packed > 0) return;
  throw formats::FormatError("every one of the " + std::to_string(folder.files.size()) +
                             " image files in " + folder.root +
                             " is bad, so there is nothing to pack");
}

/// Decodes and resizes every file into `staging`, in order; returns the labels of those kept.
std::vector<std::int64_t> decode_to_staging(const ImageFolder& folder, const ConvertSettings& s,
                                            RawStaging& staging, SkipLog& skipped) {
  Workers workers;
  std::vector<std::int64_t> labels;
  ProgressBar bar("decoding", folder.files.size(), mean_file_bytes(folder));
  ordered_parallel_map(
      folder.files.size(), s.workers,
      [&](std::uint64_t i) { return workers.local().to_raw(folder.files[i].path, s.raw); },
      [&](std::uint64_t i, ImageResult r) {
        const ImageFile& file = folder.files[i];
        if (r.bad) {
          bar.finish();
          on_bad_file(file, *r.bad, s.skip_bad, skipped);
        } else {
          staging.append(r.bytes);
          labels.push_back(file.label);
        }
        bar.update(i + 1);
      });
  return labels;
}

}  // namespace

int convert_folder_to_jpeg(const ImageFolder& folder, const ConvertSettings& s) {
  const auto start = Clock::now();
  formats::JpegDatasetWriter writer(s.output);
  Workers workers;
  ChannelSums sums;
  SkipLog skipped;
  JpegSummary summary;
  ProgressBar bar("converting", folder.files.size(), mean_file_bytes(folder));
  ordered_parallel_map(
      folder.files.size(), s.workers,
      [&](std::uint64_t i) { return workers.local().to_jpeg(folder.files[i].path, s.jpeg); },
      [&](std::uint64_t i, ImageResult r) {
        const ImageFile& file = folder.files[i];
        if (r.bad) {
          bar.finish();
          on_bad_file(file, *r.bad, s.skip_bad, skipped);
        } else {
          writer.append(r.bytes, r.shape, file.label);
          sums.add(r.sums);
          summary.reencoded += r.reencoded ? 1 : 0;
          ++summary.formats[static_cast<std::size_t>(r.format)];
        }
        bar.update(i + 1);
      });
  bar.finish();
  check_some_left(folder, writer.num_samples());
  writer.set_class_names(folder.class_names);
  writer.set_channel_stats(sums.stats());
  summary.jpeg_bytes = writer.total_bytes();
  summary.samples = writer.num_samples();
  summary.classes = folder.class_names.size();
  writer.commit();
  summary.seconds = seconds_since(start);
  print_jpeg_summary(s.output, summary);
  skipped.print();
  print_folder_notes(folder);
  return 0;
}

int convert_folder_to_raw(const ImageFolder& folder, const ConvertSettings& s) {
  const auto start = Clock::now();
  const formats::SampleShape shape{s.raw.height, s.raw.width, 3, formats::Layout::nhwc};
  RawStaging staging(s.output, shape.bytes());
  SkipLog skipped;
  PackInput input;
  input.labels = decode_to_staging(folder, s, staging, skipped);
  check_some_left(folder, staging.samples());
  staging.flush();
  input.samples = staging.samples();
  input.shape = shape;
  input.source = staging.source();
  input.class_names = folder.class_names;
  input.description = folder.root;
  PackResult result = pack_raw(input, s);
  result.seconds = seconds_since(start);
  print_raw_summary(s.output, result, s.compression);
  skipped.print();
  print_folder_notes(folder);
  return 0;
}

}  // namespace gpufeed::tools::h5pack
