#pragma once
// pipebench's progress while a run goes: a live line on a terminal, plain lines otherwise.
#include <cstdint>
#include <cstdio>
#include <string>

namespace gpufeed::tools::pipebench {

/// What the run has done so far, as of `now_ns`.
struct ProgressPoint {
  std::int64_t now_ns = 0;
  std::uint64_t epoch = 0;
  std::uint64_t steps = 0;        ///< batches consumed so far
  std::uint64_t samples = 0;      ///< samples consumed so far
  std::int64_t step_busy_ns = 0;  ///< the training stage's time so far (0 without one)
  std::int64_t wait_ns = 0;       ///< time the consumer was blocked on the loader so far
  std::uint64_t ready = 0;        ///< batches ready at the consumer's latest request
  unsigned prefetch = 0;          ///< the queue's depth now (prefetch=auto changes it)
};

/// The fixed facts of a run the progress line shows alongside.
struct ProgressShape {
  std::uint64_t total_steps = 0;  ///< 0 when not known ahead (adaptive echo)
  bool training = false;          ///< utilization is the training stage's busy share
};

/// "step 40/96  epoch 1  1517 samples/s  util 99%  queue 3/4": rates and utilization over the
/// interval from `before` to `now`; without a training stage "input wait 2%" instead of util.
std::string format_progress(const ProgressPoint& before, const ProgressPoint& now,
                            const ProgressShape& shape);

enum class ProgressMode { off, line, plain };

/// --progress auto|line|plain|off; auto is `line` when `stderr_is_tty`, else `plain`.
/// Throws UsageError for anything else.
ProgressMode parse_progress_mode(const std::string& text, bool stderr_is_tty);

/// Prints progress at most every `interval_s`: `line` rewrites one line on stderr (cleared by
/// finish()), `plain` prints a line to stdout per interval and at the end of every epoch.
class Progress {
 public:
  Progress(ProgressMode mode, double interval_s, const ProgressShape& shape);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  /// True when update() would print now: the caller gathers a ProgressPoint only then.
  [[nodiscard]] bool due(std::int64_t now_ns) const;
  void update(const ProgressPoint& now);
  void epoch_end(const ProgressPoint& now);
  /// Ends the live line (the terminal is left clean for the report).
  void finish();

 private:
  void print(const ProgressPoint& now);

  ProgressMode mode_;
  std::int64_t interval_ns_;
  ProgressShape shape_;
  ProgressPoint last_;
  bool line_open_ = false;
};

}  // namespace gpufeed::tools::pipebench
