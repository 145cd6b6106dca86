#pragma once
// Per-stage counters, by the stages of gpufeed/base/stages.hpp (the names of NVTX ranges,
// reports, --json).
#include <array>
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpufeed/base/knobs.hpp"
#include "gpufeed/base/stages.hpp"
#include "gpufeed/storage/object_store.hpp"

namespace gpufeed::pipeline {

struct StageStats {
  std::int64_t busy_ns = 0;  ///< summed over all threads working in the stage
  std::uint64_t items = 0;   ///< batches (chunks for `read`)
};

/// One change the online tuner made (workers=auto, prefetch=auto).
struct TuningChange {
  std::int64_t time_ns = 0;  ///< on the profiler's clock (profiler::now_ns())
  Knob knob = Knob::workers;
  unsigned from = 0;
  unsigned to = 0;
  Stage stage = Stage::read;  ///< the loader stage that was busiest when it decided
  std::string reason;         ///< what it measured
};

/// A file in object storage: what reading it asked of the network (the counters of the
/// object-store client it reads through, shared by the loaders of one process with the same
/// AWS configuration), and the GETs the loader keeps in flight at most.
struct NetworkStats : storage::ObjectStoreStats {
  unsigned read_requests = 0;

  /// Mean time to the first byte of a request, in milliseconds (0 before any request).
  [[nodiscard]] double mean_first_byte_ms() const {
    return requests == 0 ? 0.0
                         : static_cast<double>(first_byte_ns) / 1e6 / static_cast<double>(requests);
  }
};

/// Where a jpeg-layout file's images were decoded (LoaderOptions::image.decode): by the GPU's JPEG
/// engines or by the workers, and why the workers took the ones they did.
struct DecodeStats {
  std::string mode = "cpu";  ///< in effect: "cpu", "gpu" or "auto" (auto without engines: "cpu")
  std::string engines;       ///< the libnvjpeg in use ("path (version)"); empty without engines
  std::uint64_t engine_images = 0;  ///< decoded by the engines (and cropped by the GPU kernel)
  std::uint64_t cpu_images = 0;     ///< decoded by the workers
  /// Why the workers took their images, by reason: what the engines do not decode
  /// ("progressive", "CMYK or YCCK", "4:1:1 or other chroma subsampling", "not a JPEG", ...),
  /// "auto split" (decodable images decode=auto gave the workers) and "engine error" (parts
  /// nvJPEG refused). Only reasons that occurred, in a fixed order.
  std::vector<std::pair<std::string, std::uint64_t>> cpu_reasons;
  std::uint64_t failed_parts = 0;     ///< engine batches nvJPEG refused (decoded on the CPU)
  std::int64_t engine_device_ns = 0;  ///< device time of the engines' batches and their kernel

  /// What happened between `earlier` and this snapshot.
  [[nodiscard]] DecodeStats since(const DecodeStats& earlier) const;
};

/// A consistent-enough snapshot of a loader's counters (each counter is read atomically).
struct LoaderStats {
  std::array<StageStats, kStageCount> stages{};
  std::int64_t wall_ns = 0;   ///< since the counters were last reset
  unsigned workers = 0;       ///< threads working for the loader (tuned with workers=auto)
  unsigned cpu_share = 0;     ///< this rank's share of the cores (LoaderOptions::resources.workers)
  unsigned prefetch = 0;      ///< batches prepared ahead (tuned with prefetch=auto)
  std::uint64_t batches = 0;  ///< delivered to the consumer
  std::uint64_t samples = 0;
  std::uint64_t fresh_batches = 0;
  std::uint64_t echoed_batches = 0;
  std::uint64_t reaugmented_batches = 0;  ///< echoes delivered with a new flip
  double mean_ready_batches = 0;  ///< batches ready when the consumer asked (queue occupancy)
  std::uint64_t max_ready_batches = 0;
  std::uint64_t ready_batches = 0;  ///< batches ready at the consumer's latest request
  std::uint64_t chunk_reads = 0;    ///< chunks fetched from the file
  std::uint64_t bytes_read = 0;     ///< bytes of the chunks fetched, decoded
  std::uint64_t cache_hits = 0;
  std::uint64_t cache_misses = 0;
  std::uint64_t cache_peak_bytes = 0;
  std::uint64_t slot_bytes = 0;       ///< host memory held by the batch slot pool
  std::uint64_t skipped_samples = 0;  ///< undecodable samples replaced (on_error skip)
  // CUDA device only:
  bool pinned = false;                  ///< host slots are pinned (false: pinning failed or CPU)
  std::uint64_t pinned_bytes = 0;       ///< pinned host memory held
  std::uint64_t device_bytes = 0;       ///< device memory held by the device slots
  double pinned_h2d_bytes_per_s = 0;    ///< measured when the loader started
  double pageable_h2d_bytes_per_s = 0;  ///< measured when the loader started
  /// Set for a file in object storage.
  std::optional<NetworkStats> network;
  /// A jpeg-layout file: where its images were decoded.
  DecodeStats decode;
  /// Every change of workers=auto / prefetch=auto since the loader started, oldest first.
  std::vector<TuningChange> tuning;

  [[nodiscard]] const StageStats& operator[](Stage s) const {
    return stages[static_cast<std::size_t>(s)];
  }
  /// busy_ns / (wall_ns * workers) for pipeline stages; busy_ns / wall_ns for wait and step.
  [[nodiscard]] double busy_fraction(Stage s) const;
  /// The pipeline stage (read, decode, assemble, normalize, h2d, transform) with the largest busy
  /// fraction; nullopt before any work.
  [[nodiscard]] std::optional<Stage> bottleneck() const;
  /// What happened between `earlier` (a snapshot of the same loader) and this snapshot: the
  /// counters and the wall time are differences; gauges (queue depth, memory, pinning, H2D
  /// rates, cache peak) are this snapshot's.
  [[nodiscard]] LoaderStats since(const LoaderStats& earlier) const;
};

/// Lock-free accumulators behind LoaderStats.
struct StageCounters {
  std::array<std::atomic<std::int64_t>, kStageCount> busy_ns{};
  std::array<std::atomic<std::uint64_t>, kStageCount> items{};

  void add(Stage s, std::int64_t ns, std::uint64_t n = 1) noexcept {
    busy_ns[static_cast<std::size_t>(s)].fetch_add(ns, std::memory_order_relaxed);
    items[static_cast<std::size_t>(s)].fetch_add(n, std::memory_order_relaxed);
  }
  void reset() noexcept;
};

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::DecodeStats;
using pipeline::LoaderStats;
using pipeline::NetworkStats;
using pipeline::StageStats;
using pipeline::TuningChange;
}  // namespace gpufeed
