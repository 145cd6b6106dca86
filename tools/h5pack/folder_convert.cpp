// Image folders to schema v1 files: a oneTBB pipeline reads and decodes (and re-encodes or
// resizes) the files on every worker thread and hands them in order to one writer.
#include <cerrno>
#include <chrono>
#include <cstring>

#include <oneapi/tbb/enumerable_thread_specific.h>

#include "common/progress.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/ordered_map.hpp"
#include "gpufeed/storage/file_io.hpp"
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

/// The image of `file`: its file, or its range of the folder's staging file (tar shards).
ImageResult to_jpeg(ImageWorker& worker, const ImageFolder& folder, const ImageFile& file,
                    const JpegSettings& settings) {
  if (!folder.staging) return worker.to_jpeg(file.path, settings);
  std::vector<std::uint8_t> bytes(file.bytes);
  const storage::ReadResult got = storage::pread_full(folder.staging->get(), bytes, file.offset);
  if (got.error != 0 || got.bytes != bytes.size()) {
    throw formats::IoError("cannot read " + file.path + " back from the staging file beside " +
                           "the output: " + std::strerror(got.error != 0 ? got.error : EIO));
  }
  return worker.to_jpeg(std::move(bytes), file.path, settings);
}

/// Runs `work(worker, file)` on every file on s.workers threads and hands each good result, in
/// the folder's order, to `keep(file, result)`; a bad file stops the run or is counted.
template <class Work, class Keep>
void for_each_image(const ImageFolder& folder, const ConvertSettings& s, const char* label,
                    SkipLog& skipped, Work&& work, Keep&& keep) {
  Workers workers;
  ProgressBar bar(label, folder.files.size(), mean_file_bytes(folder));
  formats::ordered_parallel_map(
      folder.files.size(), s.workers,
      [&](std::uint64_t i) { return work(workers.local(), folder.files[i]); },
      [&](std::uint64_t i, ImageResult r) {
        const ImageFile& file = folder.files[i];
        if (r.bad) {
          bar.finish();
          on_bad_file(file, *r.bad, s.skip_bad, skipped);
        } else {
          keep(file, r);
        }
        bar.update(i + 1);
      });
}

/// Decodes and resizes every file into `staging`, in order; returns the labels of those kept.
/// Fills `input.labels` and `input.source_index` of the files kept.
void decode_to_staging(const ImageFolder& folder, const ConvertSettings& s, RawStaging& staging,
                       SkipLog& skipped, formats::PackInput& input) {
  for_each_image(
      folder, s, "decoding", skipped,
      [&](ImageWorker& worker, const ImageFile& file) { return worker.to_raw(file.path, s.raw); },
      [&](const ImageFile& file, const ImageResult& r) {
        staging.append(r.bytes);
        input.labels.push_back(file.label);
        input.source_index.push_back(file.source);
      });
}

}  // namespace

int convert_folder_to_jpeg(const ImageFolder& folder, const ConvertSettings& s) {
  const auto start = Clock::now();
  formats::JpegDatasetWriter writer(s.output);
  ChannelSums sums;
  SkipLog skipped;
  JpegSummary summary;
  std::vector<std::uint64_t> sources;
  for_each_image(
      folder, s, "converting", skipped,
      [&](ImageWorker& worker, const ImageFile& file) {
        return to_jpeg(worker, folder, file, s.jpeg);
      },
      [&](const ImageFile& file, const ImageResult& r) {
        writer.append(r.bytes, r.shape, file.label);
        sources.push_back(file.source);
        sums.add(r.sums);
        summary.reencoded += r.reencoded ? 1 : 0;
        ++summary.formats[static_cast<std::size_t>(r.format)];
      });
  check_some_left(folder, writer.num_samples());
  writer.set_class_names(folder.class_names);
  writer.set_source_index(std::move(sources));
  writer.set_channel_stats(sums.stats(3));
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
  formats::PackInput input;
  decode_to_staging(folder, s, staging, skipped, input);
  check_some_left(folder, staging.samples());
  staging.flush();
  input.samples = staging.samples();
  input.shape = shape;
  input.source = staging.source();
  input.class_names = folder.class_names;
  input.description = folder.root;
  formats::PackResult result = pack_raw(input, s);
  result.seconds = seconds_since(start);
  print_raw_summary(s.output, result, s.compression);
  skipped.print();
  print_folder_notes(folder);
  return 0;
}

}  // namespace gpufeed::tools::h5pack
