#pragma once
// A one-line progress bar on stderr ("packing 1200/20000 6.0% 85.2 MB/s ETA 12s"), drawn only
// when stderr is a terminal, redrawn at most ten times a second.
#include <chrono>
#include <cstdint>
#include <string>

namespace gpufeed::tools {

class ProgressBar {
 public:
  /// `bytes_per_item` turns items per second into MB/s. `enabled` defaults to stderr_is_tty().
  ProgressBar(std::string label, std::uint64_t total, std::uint64_t bytes_per_item);
  ProgressBar(std::string label, std::uint64_t total, std::uint64_t bytes_per_item, bool enabled);
  ~ProgressBar();
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;

  /// `done` items of total are finished. Call from one thread at a time.
  void update(std::uint64_t done);
  /// Erases the bar (if drawn). Called by the destructor too.
  void finish();

  [[nodiscard]] bool enabled() const { return enabled_; }
  /// The text of the bar for `done` items after `seconds`: for tests and the final draw.
  [[nodiscard]] std::string render(std::uint64_t done, double seconds) const;

 private:
  std::string label_;
  std::uint64_t total_;
  std::uint64_t bytes_per_item_;
  bool enabled_;
  bool drawn_ = false;
  using Clock = std::chrono::steady_clock;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

/// "1.2 s", "3m05s", "1h02m".
std::string format_duration(double seconds);

}  // namespace gpufeed::tools
