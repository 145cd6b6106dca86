#include "gpufeed/formats/pack_file.hpp"
#include "gpufeed/base/errors.hpp"

#include <chrono>
#include <memory>
#include <utility>

#include <filesystem>
#include <stdexcept>
#include "gpufeed/formats/crop.hpp"

namespace gpufeed::formats {

std::vector<std::uint64_t> stored_order(std::uint64_t n, std::uint64_t seed) {
  std::vector<std::uint64_t> order(n);
  for (std::uint64_t i = 0; i < n; ++i) order[i] = i;
  SampleRandom random(seed, 0, 0, 0x5701ED);
  for (std::uint64_t i = n; i > 1; --i) std::swap(order[i - 1], order[random.below(i)]);
  return order;
}

PackInput in_order(PackInput input, std::vector<std::uint64_t> order) {
  if (order.size() != input.samples) {
    throw Error("in_order: " + std::to_string(order.size()) + " positions for " +
                std::to_string(input.samples) + " samples");
  }
  const std::uint64_t bytes = input.shape.bytes();
  auto shared = std::make_shared<const std::vector<std::uint64_t>>(order);
  SampleSource inner = std::move(input.source);
  input.source = [inner, shared, bytes](std::uint64_t first, std::uint64_t count,
                                        std::span<std::uint8_t> out) {
    for (std::uint64_t s = 0; s < count; ++s) {
      inner((*shared)[first + s], 1, out.subspan(s * bytes, bytes));
    }
  };
  std::vector<std::int64_t> labels(order.size());
  for (std::size_t i = 0; i < order.size(); ++i) labels[i] = input.labels[order[i]];
  input.labels = std::move(labels);
  if (!input.source_index.empty()) {
    for (std::uint64_t& o : order) o = input.source_index[o];
  }
  input.source_index = std::move(order);
  return input;
}

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
  if (!input.source_index.empty()) writer.write_source_index(input.source_index);
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
