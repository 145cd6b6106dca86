#include "gpufeed/formats/pack_file.hpp"
#include "gpufeed/base/errors.hpp"

#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace gpufeed::formats {

PackResult pack_file(const std::string& path, const PackInput& input, const PackSettings& settings,
                     const PackProgress& progress) {
  if (input.labels.size() != input.samples) {
    throw Error("pack_file: " + std::to_string(input.labels.size()) + " labels for " +
                std::to_string(input.samples) + " samples");
  }
  const auto start = std::chrono::steady_clock::now();
  DatasetWriter writer(path, input.samples, input.shape, settings.writer);
  pack_images(writer, input.source, settings.threads, progress);
  writer.write_labels(input.labels);
  if (!input.class_names.empty()) writer.write_class_names(input.class_names);
  writer.commit();

  PackResult result;
  result.samples = writer.num_samples();
  result.shape = writer.sample_shape();
  result.samples_per_chunk = writer.samples_per_chunk();
  result.chunks = writer.num_chunks();
  result.raw_bytes = result.samples * result.shape.bytes();
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  result.file_bytes = ec ? 0 : static_cast<std::uint64_t>(size);
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

}  // namespace gpufeed::formats
