#pragma once
// The one input every analysis and writer takes: named host ranges and device activity.
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/base/stages.hpp"
#include "gpufeed/profiler/device_activity.hpp"
#include "gpufeed/profiler/range_event.hpp"
#include "gpufeed/profiler/recorder.hpp"

namespace gpufeed::profiler {

/// Range names the analysis understands (DESIGN.md, "Stage names"): the consumer side ...
namespace range_names {
inline constexpr const char* wait = stage_name(Stage::wait);  ///< consumer blocked on the loader
inline constexpr const char* step = stage_name(Stage::step);  ///< one training step's compute
inline constexpr const char* sync = "sync";      ///< stream/device/event sync, D2H like .item()
inline constexpr const char* launch = "launch";  ///< host issuing device work (runtime calls)
inline constexpr const char* cpu_op = "cpu_op";  ///< framework operator on the host (Kineto)
/// A collective of a distributed job (all-reduce ...): the time from its start until every
/// rank's part arrived, so it includes waiting for the slowest rank.
inline constexpr const char* collective = "collective";
/// ... and the loader's stages (gpufeed/base/stages.hpp), one of which is named as the
/// bottleneck.
inline constexpr const auto& stages = kLoaderStages;
/// A torch DataLoader's fetches as gpufeed.profile times them, in the main process or in each
/// worker process: the dataset's items of a batch, then its collate_fn.
inline constexpr const char* dataset = "dataset";
inline constexpr const char* collate = "collate";
inline constexpr std::array<const char*, 2> dataloader_stages{dataset, collate};
}  // namespace range_names

/// A host range with its name resolved. `detail` says more where the name is a category
/// (the runtime call behind "launch"/"sync", the operator behind "cpu_op").
struct HostRange {
  std::string name;
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::uint64_t thread = 0;
  std::int64_t arg = kNoArg;
  std::uint64_t correlation = 0;  ///< runtime calls: matches DeviceActivity::correlation
  std::string detail;
};

/// Host and device activity of one run, all on the host monotonic clock (ns). Value type.
struct Timeline {
  std::vector<HostRange> host;         ///< sorted by begin_ns after normalize()
  std::vector<DeviceActivity> device;  ///< sorted by begin_ns after normalize()
  std::vector<std::string> warnings;   ///< problems met while building it (partial input ...)
  std::uint64_t dropped_host_events = 0;
  std::uint64_t dropped_device_records = 0;
  /// The process's place in a distributed job; -1 and 0 when unknown or not distributed.
  std::int32_t rank = -1;
  std::int32_t world_size = 0;

  /// Sorts both sides by begin time and drops ranges that end before they begin.
  void normalize();
  [[nodiscard]] bool has_device_work() const noexcept;
};

/// Host ranges of a recorder snapshot (names resolved, thread = OS thread id).
Timeline timeline_from(const RecorderSnapshot& snapshot);

}  // namespace gpufeed::profiler
