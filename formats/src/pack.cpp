#include "gpufeed/formats/pack.hpp"

#include <vector>

#include "gpufeed/formats/ordered_map.hpp"

namespace gpufeed::formats {

void pack_images(DatasetWriter& writer, const SampleSource& source, unsigned threads,
                 const PackProgress& progress) {
  const std::uint64_t k = writer.samples_per_chunk();
  const std::uint64_t sample_bytes = writer.sample_shape().bytes();
  std::uint64_t done = 0;
  ordered_parallel_map(
      writer.num_chunks(), threads,
      [&](std::uint64_t index) {
        const std::uint64_t count = writer.chunk_sample_count(index);
        std::vector<std::uint8_t> raw(count * sample_bytes);
        source(index * k, count, raw);
        return writer.encode(index, raw);
      },
      [&](std::uint64_t index, const EncodedChunk& chunk) {
        writer.write(chunk);
        done += writer.chunk_sample_count(index);
        if (progress) progress(done);
      });
}

}  // namespace gpufeed::formats
