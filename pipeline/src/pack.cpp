#include "gpufeed/pipeline/pack.hpp"

#include <algorithm>
#include <memory>
#include <thread>
#include <vector>

#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

#include "gpufeed/profiler/range.hpp"

namespace gpufeed {

void pack_images(formats::DatasetWriter& writer, const SampleSource& source, unsigned threads,
                 const PackProgress& progress) {
  const unsigned workers =
      threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
  const std::uint64_t chunks = writer.num_chunks();
  const std::uint64_t k = writer.samples_per_chunk();
  const std::uint64_t sample_bytes = writer.sample_shape().bytes();
  std::uint64_t next = 0;
  std::uint64_t done = 0;
  oneapi::tbb::task_arena arena(static_cast<int>(workers), 1);
  arena.execute([&] {
    oneapi::tbb::parallel_pipeline(
        2 * workers,
        oneapi::tbb::make_filter<void, std::uint64_t>(
            oneapi::tbb::filter_mode::serial_in_order,
            [&](oneapi::tbb::flow_control& fc) -> std::uint64_t {
              if (next == chunks) {
                fc.stop();
                return 0;
              }
              return next++;
            }) &
            oneapi::tbb::make_filter<std::uint64_t, std::shared_ptr<formats::EncodedChunk>>(
                oneapi::tbb::filter_mode::parallel,
                [&](std::uint64_t index) {
                  GPUFEED_RANGE("encode");
                  const std::uint64_t count = writer.chunk_sample_count(index);
                  std::vector<std::uint8_t> raw(count * sample_bytes);
                  source(index * k, count, raw);
                  return std::make_shared<formats::EncodedChunk>(writer.encode(index, raw));
                }) &
            oneapi::tbb::make_filter<std::shared_ptr<formats::EncodedChunk>, void>(
                oneapi::tbb::filter_mode::serial_in_order,
                [&](const std::shared_ptr<formats::EncodedChunk>& chunk) {
                  writer.write(*chunk);
                  done += writer.chunk_sample_count(chunk->index);
                  if (progress) progress(done);
                }));
  });
}

}  // namespace gpufeed
