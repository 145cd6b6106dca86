#pragma once
// Packs images into a schema v1 file: chunks filled and compressed in parallel, written in order.
#include <cstdint>
#include <functional>
#include <span>

#include "gpufeed/formats/dataset_writer.hpp"

namespace gpufeed::formats {

/// Fills `count` samples from sample `first` into `out` (count * sample bytes, NHWC).
/// Called from several threads at once for different ranges.
using SampleSource =
    std::function<void(std::uint64_t first, std::uint64_t count, std::span<std::uint8_t> out)>;
/// Told the number of samples written so far, from the writing thread.
using PackProgress = std::function<void(std::uint64_t samples_done)>;

/// Writes every chunk of `writer`: chunks are filled and encoded on `threads` threads (0: all
/// cores) and written in order on one thread, with at most 4 * threads chunks in memory
/// (ordered_parallel_map). The first exception from `source`, encoding or writing stops it and
/// comes out once the chunks in flight are dropped. Does not commit the writer.
void pack_images(DatasetWriter& writer, const SampleSource& source, unsigned threads,
                 const PackProgress& progress = {});

}  // namespace gpufeed::formats
