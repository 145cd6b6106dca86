#pragma once
// One colour per meaning, shared by every SVG in the HTML report.
#include <string_view>

#include "gpufeed/profiler/device_activity.hpp"
#include "gpufeed/profiler/gap_report.hpp"

namespace gpufeed::profiler::detail {

inline const char* cause_color(GapCause c) noexcept {
  switch (c) {
    case GapCause::input_wait:
      return "#e4572e";
    case GapCause::host_sync:
      return "#8e44ad";
    case GapCause::launch:
      return "#f3a712";
    case GapCause::other:
      return "#9e9e9e";
  }
  return "#9e9e9e";
}

inline const char* activity_color(ActivityKind k) noexcept {
  switch (k) {
    case ActivityKind::kernel:
      return "#2e86ab";
    case ActivityKind::memcpy_h2d:
      return "#3bb273";
    case ActivityKind::memcpy_d2h:
      return "#c0392b";
    case ActivityKind::memcpy_d2d:
      return "#16a085";
    case ActivityKind::memcpy_other:
      return "#7f8c8d";
    case ActivityKind::memset:
      return "#34495e";
    case ActivityKind::sync:
      return "#8e44ad";
    case ActivityKind::stream_wait:
      return "#bdc3c7";
  }
  return "#7f8c8d";
}

inline constexpr const char* kUnknownRangeColor = "#b0b0b0";

inline const char* range_color(std::string_view name) noexcept {
  struct Entry {
    std::string_view name;
    const char* color;
  };
  constexpr Entry kColors[] = {
      {"step", "#76b7d6"},      {"wait", "#e4572e"},     {"sync", "#8e44ad"},
      {"launch", "#f3a712"},    {"cpu_op", "#a3c4dc"},   {"read", "#8cb369"},
      {"decode", "#5b8e7d"},    {"assemble", "#bc4b51"}, {"h2d", "#3bb273"},
      {"normalize", "#4a6fa5"}, {"echo", "#9b5de5"},
  };
  for (const Entry& e : kColors) {
    if (e.name == name) return e.color;
  }
  return kUnknownRangeColor;
}

}  // namespace gpufeed::profiler::detail
