#pragma once
// The always-on in-process range recorder.
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpufeed/profiler/range_event.hpp"

namespace gpufeed::profiler {

namespace detail {
class RecorderState;
}  // namespace detail

/// Everything the recorder held at one moment: events of all threads sorted by begin time.
struct RecorderSnapshot {
  std::vector<RangeEvent> events;
  std::vector<std::string> names;  ///< names[id] is the string registered as NameId id
  std::uint64_t dropped = 0;       ///< events overwritten (ring full) since the last clear()
  std::size_t threads = 0;         ///< thread rings that exist

  [[nodiscard]] std::string_view name_of(const RangeEvent& e) const {
    return e.name < names.size() ? std::string_view(names[e.name]) : std::string_view("?");
  }
};

/// Process-wide recorder of closed host ranges.
///
/// Each thread writes into its own fixed-capacity ring buffer (registered on the thread's first
/// range, reused by later threads after it exits), so memory is bounded by
/// threads x capacity x 40 bytes; when a ring is full the oldest events are overwritten and
/// counted as dropped. Recording is lock-free and allocation-free after registration: two clock
/// reads and a few relaxed stores. snapshot() and clear() may run concurrently with recording;
/// set_capacity() applies to rings created (or reused) afterwards. Nothing here throws into a
/// recording thread: if a ring cannot be allocated, that thread's ranges are not recorded.
class Recorder {
 public:
  static constexpr std::size_t kDefaultCapacity = std::size_t{1} << 16;

  /// The recorder every range writes to; never destroyed (threads may record during exit).
  static Recorder& global() noexcept;

  /// Returns the id of `name`, registering it on first use (takes a lock: call once per site).
  NameId register_name(std::string_view name);
  /// Run-time switch; ranges opened while disabled record nothing. Enabled by default.
  void set_enabled(bool enabled) noexcept;
  [[nodiscard]] bool enabled() const noexcept;
  /// Events per thread ring, rounded up to a power of two (at least 16).
  void set_capacity(std::size_t events_per_thread);
  [[nodiscard]] std::size_t capacity() const noexcept;

  /// Copies every thread's events, merged and sorted by begin time.
  [[nodiscard]] RecorderSnapshot snapshot() const;
  /// Forgets recorded events and the dropped count (rings and names stay).
  void clear() noexcept;

  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;

 private:
  Recorder();
  ~Recorder();
  detail::RecorderState* state_;
};

/// Records a closed range on the calling thread (what ScopedRange does on scope exit). Also
/// useful to record a range timed elsewhere. No-op while the recorder is disabled.
void record_range(NameId name, std::int64_t begin_ns, std::int64_t end_ns,
                  std::int64_t arg = kNoArg) noexcept;

namespace detail {
extern std::atomic<bool> recording;  ///< Recorder::global().enabled(), readable inline
/// True while the global recorder is enabled (one relaxed load).
[[nodiscard]] inline bool recorder_enabled() noexcept {
  return recording.load(std::memory_order_relaxed);
}
}  // namespace detail

}  // namespace gpufeed::profiler
