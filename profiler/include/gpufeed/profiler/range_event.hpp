#pragma once
// One closed host range as the recorder stores it.
#include <cstdint>
#include <limits>

namespace gpufeed::profiler {

/// Index of a registered range name (see Recorder::register_name); stable for the process.
using NameId = std::uint32_t;

/// The value of RangeEvent::arg when the range carries no argument.
inline constexpr std::int64_t kNoArg = std::numeric_limits<std::int64_t>::min();

/// A closed range on one host thread, in monotonic nanoseconds (profiler::now_ns).
struct RangeEvent {
  NameId name = 0;
  std::uint32_t thread = 0;  ///< OS thread id (gettid) of the thread that recorded it
  std::int64_t begin_ns = 0;
  std::int64_t end_ns = 0;
  std::int64_t arg = kNoArg;  ///< optional payload, e.g. a batch index

  [[nodiscard]] std::int64_t duration_ns() const noexcept { return end_ns - begin_ns; }
  [[nodiscard]] bool has_arg() const noexcept { return arg != kNoArg; }
};

}  // namespace gpufeed::profiler
