// h5pack convert --shard-size / --part of an image folder or an array source: the stored order
// drawn over the whole source, then each shard of this part packed from its slice of it by the
// converter a single file would use.
#include "common/cli.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "h5pack/convert_settings.hpp"
#include "h5pack/shard_plan.hpp"

namespace gpufeed::tools::h5pack {

namespace {

/// Samples [first, first + count) of `input`.
formats::PackInput slice(const formats::PackInput& input, std::uint64_t first,
                         std::uint64_t count) {
  formats::PackInput part = input;
  part.samples = count;
  const auto bytes = static_cast<std::size_t>(input.shape.bytes());
  part.source = [inner = input.source, first, bytes](std::uint64_t at, std::uint64_t n,
                                                     std::span<std::uint8_t> out) {
    inner(first + at, n, out.first(n * bytes));
  };
  const auto begin = static_cast<std::ptrdiff_t>(first);
  const auto end = static_cast<std::ptrdiff_t>(first + count);
  part.labels.assign(input.labels.begin() + begin, input.labels.begin() + end);
  if (!input.source_index.empty()) {
    part.source_index.assign(input.source_index.begin() + begin, input.source_index.begin() + end);
  } else {
    part.source_index.resize(count);
    for (std::uint64_t i = 0; i < count; ++i) part.source_index[i] = first + i;
  }
  return part;
}

}  // namespace

int convert_folder_shards(const ImageFolder& folder, const ConvertSettings& settings,
                          const ConvertOptions& o, const std::string& store) {
  const std::uint64_t n = folder.files.size();
  const std::uint64_t mean = store == "jpeg"
                                 ? folder.total_bytes / std::max<std::uint64_t>(1, n)
                                 : std::uint64_t{settings.raw.height} * settings.raw.width * 3;
  const std::uint64_t chunk =
      store == "jpeg"
          ? 1
          : formats::samples_per_chunk_for(
                settings.chunk, std::uint64_t{settings.raw.height} * settings.raw.width * 3);
  const ShardPlan plan = plan_shards(n, mean, o, chunk);
  return write_shards(
      plan, o, [&](std::uint64_t first, std::uint64_t count, const std::string& path) {
        ImageFolder part = folder;
        const auto begin = folder.files.begin() + static_cast<std::ptrdiff_t>(first);
        part.files.assign(begin, begin + static_cast<std::ptrdiff_t>(count));
        part.total_bytes = mean * count;
        ConvertSettings s = settings;
        s.output = path;
        if (store == "jpeg") {
          convert_folder_to_jpeg(part, s);
        } else {
          convert_folder_to_raw(part, s);
        }
      });
}

int convert_array_shards(const formats::PackInput& input, const ConvertSettings& settings,
                         const ConvertOptions& o, const std::string& store) {
  // Encoded, an image takes about an eighth of its pixels' bytes.
  const std::uint64_t mean = store == "jpeg" ? input.shape.bytes() / 8 : input.shape.bytes();
  const std::uint64_t chunk =
      store == "jpeg" ? 1 : formats::samples_per_chunk_for(settings.chunk, input.shape.bytes());
  const ShardPlan plan = plan_shards(input.samples, mean, o, chunk);
  return write_shards(plan, o,
                      [&](std::uint64_t first, std::uint64_t count, const std::string& path) {
                        ConvertSettings s = settings;
                        s.output = path;
                        const formats::PackInput part = slice(input, first, count);
                        if (store == "jpeg") {
                          convert_array_to_jpeg(part, s);
                        } else {
                          convert_array_to_raw(part, s);
                        }
                      });
}

}  // namespace gpufeed::tools::h5pack
