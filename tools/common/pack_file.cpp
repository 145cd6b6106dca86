#include "common/pack_file.hpp"

#include <filesystem>
#include <stdexcept>

#include "gpufeed/profiler/clock.hpp"

namespace gpufeed::tools {

PackResult pack_file(const std::string& path, const PackInput& input, const PackSettings& settings,
                     const PackProgress& progress) {
  if (input.labels.size() != input.samples) {
    throw std::logic_error("pack_file: " + std::to_string(input.labels.size()) + " labels for " +
                           std::to_string(input.samples) + " samples");
  }
  const std::int64_t start = profiler::now_ns();
  formats::DatasetWriter writer(path, input.samples, input.shape, settings.writer);
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
  result.seconds = static_cast<double>(profiler::now_ns() - start) * 1e-9;
  return result;
}

}  // namespace gpufeed::tools
