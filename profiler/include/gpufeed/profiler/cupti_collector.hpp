#pragma once
// GPU activity from CUPTI's activity API, aligned to the host clock.
#include <cstddef>
#include <cstdint>
#include <string>

#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler {

struct CuptiStats {
  std::uint64_t records = 0;          ///< activity records received
  std::uint64_t dropped_records = 0;  ///< lost inside CUPTI (cuptiActivityGetNumDroppedRecords)
  std::uint64_t dropped_buffers = 0;  ///< buffers CUPTI asked for that could not be allocated
  std::int64_t offset_start_ns = 0;   ///< now_ns() - cuptiGetTimestamp() at start()
  std::int64_t offset_stop_ns = 0;    ///< the same at stop(); the difference is clock drift
};

/// Collects kernels (concurrent), memcpy, memset, synchronization and runtime-API records.
///
/// CUPTI's activity API is process-wide, so there is one collector. start() returns false and
/// the collector disables itself, logging one line to stderr once per process, when there is no
/// GPU or driver or any CUPTI call fails; nothing here throws into the host program. Records are
/// delivered on CUPTI's own thread; append_to() converts them to the host monotonic clock using
/// offsets measured at start() and stop() (linear in between) and moves them out.
class CuptiCollector {
 public:
  struct Options {
    std::size_t buffer_bytes = std::size_t{8} << 20;  ///< per CUPTI activity buffer
    bool runtime_api = true;  ///< runtime calls become "launch"/"sync" host ranges
  };

  static CuptiCollector& instance() noexcept;

  /// CUPTI is loaded at run time, the first time a collector starts: nothing needs libcupti
  /// to load. It is looked for in $GPUFEED_CUPTI (a file), the directories added here (the
  /// Python package adds PyTorch's nvidia wheels'), the system's search, then $CUDA_HOME,
  /// $CUDA_PATH and /usr/local/cuda. A collector that finds none says so once and stays off.
  static void add_library_directory(const std::string& directory);
  /// Where CUPTI was loaded from; empty before a start loaded it.
  [[nodiscard]] std::string library_path() const;

  /// Enables activity collection; false when unavailable (see unavailable_reason()).
  bool start() noexcept { return start(Options{}); }
  bool start(const Options& options) noexcept;
  /// Flushes outstanding records and disables collection. Harmless when not started.
  void stop() noexcept;
  [[nodiscard]] bool active() const noexcept;
  /// False once the collector has disabled itself; it then never starts again.
  [[nodiscard]] bool available() const noexcept;
  [[nodiscard]] std::string unavailable_reason() const;
  [[nodiscard]] CuptiStats stats() const noexcept;

  /// Moves the records collected so far into `timeline` (device activity; runtime calls as host
  /// ranges named "launch" or "sync" with the API name as detail) and sorts it.
  void append_to(Timeline& timeline);

  CuptiCollector(const CuptiCollector&) = delete;
  CuptiCollector& operator=(const CuptiCollector&) = delete;

 private:
  CuptiCollector() = default;
};

}  // namespace gpufeed::profiler
