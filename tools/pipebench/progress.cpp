#include "pipebench/progress.hpp"

#include <algorithm>
#include <cmath>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/profiler/clock.hpp"

namespace gpufeed::tools::pipebench {

namespace {

double share(std::int64_t part_ns, std::int64_t whole_ns) {
  if (whole_ns <= 0) return 0.0;
  return std::clamp(static_cast<double>(part_ns) / static_cast<double>(whole_ns), 0.0, 1.0);
}

}  // namespace

std::string format_progress(const ProgressPoint& before, const ProgressPoint& now,
                            const ProgressShape& shape) {
  const std::int64_t span_ns = now.now_ns - before.now_ns;
  std::string text = "step " + std::to_string(now.steps);
  if (shape.total_steps != 0) text += "/" + std::to_string(shape.total_steps);
  text += "  epoch " + std::to_string(now.epoch);
  const double rate = span_ns > 0 ? static_cast<double>(now.samples - before.samples) * 1e9 /
                                        static_cast<double>(span_ns)
                                  : 0.0;
  char buffer[96];
  std::snprintf(buffer, sizeof buffer, "  %.0f samples/s", rate);
  text += buffer;
  if (shape.training) {
    std::snprintf(buffer, sizeof buffer, "  util %.0f%%",
                  100.0 * share(now.step_busy_ns - before.step_busy_ns, span_ns));
  } else {
    std::snprintf(buffer, sizeof buffer, "  input wait %.0f%%",
                  100.0 * share(now.wait_ns - before.wait_ns, span_ns));
  }
  text += buffer;
  text += "  queue " + std::to_string(now.ready) + "/" + std::to_string(now.prefetch);
  return text;
}

ProgressMode parse_progress_mode(const std::string& text, bool stderr_is_tty) {
  if (text == "auto") return stderr_is_tty ? ProgressMode::line : ProgressMode::plain;
  if (text == "line") return ProgressMode::line;
  if (text == "plain") return ProgressMode::plain;
  if (text == "off") return ProgressMode::off;
  throw UsageError("--progress " + text + ": use auto, line, plain or off");
}

Progress::Progress(ProgressMode mode, double interval_s, const ProgressShape& shape)
    : mode_(mode),
      interval_ns_(static_cast<std::int64_t>(std::max(0.0, interval_s) * 1e9)),
      shape_(shape) {
  last_.now_ns = profiler::now_ns();
}

Progress::~Progress() {
  finish();
}

bool Progress::due(std::int64_t now_ns) const {
  return mode_ != ProgressMode::off && now_ns - last_.now_ns >= interval_ns_;
}

void Progress::update(const ProgressPoint& now) {
  if (due(now.now_ns)) print(now);
}

void Progress::epoch_end(const ProgressPoint& now) {
  // A plain log gets one line per epoch even when epochs are shorter than the interval.
  if (mode_ == ProgressMode::plain || due(now.now_ns)) print(now);
}

void Progress::finish() {
  if (!line_open_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  line_open_ = false;
}

void Progress::print(const ProgressPoint& now) {
  if (mode_ == ProgressMode::off || now.now_ns <= last_.now_ns) return;
  const std::string text = format_progress(last_, now, shape_);
  if (mode_ == ProgressMode::line) {
    std::fprintf(stderr, "\r\033[K%s", text.c_str());
    std::fflush(stderr);
    line_open_ = true;
  } else {
    std::printf("progress    %s\n", text.c_str());
    std::fflush(stdout);
  }
  last_ = now;
}

}  // namespace gpufeed::tools::pipebench
