#include "common/progress.hpp"

#include <chrono>
#include <cstdio>
#include <utility>

#include "common/cli.hpp"

namespace gpufeed::tools {

namespace {

constexpr std::chrono::milliseconds kRedraw{100};

std::string printf_string(const char* format, double a, double b = 0.0) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, a, b);
  return buffer;
}

}  // namespace

std::string format_duration(double seconds) {
  if (seconds < 0) seconds = 0;
  if (seconds < 60) return printf_string("%.1f s", seconds);
  const auto whole = static_cast<long long>(seconds + 0.5);
  char buffer[64];
  if (whole < 3600) {
    std::snprintf(buffer, sizeof buffer, "%lldm%02llds", whole / 60, whole % 60);
  } else {
    std::snprintf(buffer, sizeof buffer, "%lldh%02lldm", whole / 3600, (whole % 3600) / 60);
  }
  return buffer;
}

ProgressBar::ProgressBar(std::string label, std::uint64_t total, std::uint64_t bytes_per_item)
    : ProgressBar(std::move(label), total, bytes_per_item, stderr_is_tty()) {}

ProgressBar::ProgressBar(std::string label, std::uint64_t total, std::uint64_t bytes_per_item,
                         bool enabled)
    : label_(std::move(label)),
      total_(total),
      bytes_per_item_(bytes_per_item),
      enabled_(enabled),
      start_(Clock::now()) {}

ProgressBar::~ProgressBar() {
  finish();
}

std::string ProgressBar::render(std::uint64_t done, double seconds) const {
  const double total = total_ == 0 ? 1.0 : static_cast<double>(total_);
  const double fraction = static_cast<double>(done) / total;
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0.0;
  std::string text = label_ + " " + std::to_string(done) + "/" + std::to_string(total_) + " " +
                     printf_string("%.1f%%", 100.0 * fraction);
  text += " " + printf_string("%.1f MB/s", rate * static_cast<double>(bytes_per_item_) / 1e6);
  if (rate > 0 && done < total_) {
    text += " ETA " + format_duration(static_cast<double>(total_ - done) / rate);
  }
  return text;
}

void ProgressBar::update(std::uint64_t done) {
  if (!enabled_) return;
  const Clock::time_point now = Clock::now();
  if (drawn_ && now - last_draw_ < kRedraw && done < total_) return;
  last_draw_ = now;
  const double seconds = std::chrono::duration<double>(now - start_).count();
  const std::string line = "\r" + render(done, seconds) + "\033[K";
  std::fputs(line.c_str(), stderr);
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressBar::finish() {
  if (!drawn_) return;
  std::fputs("\r\033[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace gpufeed::tools
