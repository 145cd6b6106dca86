#pragma once
// One colour per meaning, shared by every SVG in the HTML report.
#include <array>
#include <string_view>

#include "gpufeed/base/names.hpp"

#include "gpufeed/profiler/device_activity.hpp"
#include "gpufeed/profiler/gap_report.hpp"

namespace gpufeed::profiler::detail {

/// By GapCause, in enumerator order.
inline constexpr std::array<const char*, kGapCauseCount> kCauseColors{"#e4572e", "#8e44ad",
                                                                      "#f3a712", "#9e9e9e"};
/// By ActivityKind, in enumerator order.
inline constexpr std::array<const char*, 8> kActivityColors{
    "#2e86ab", "#3bb273", "#c0392b", "#16a085", "#7f8c8d", "#34495e", "#8e44ad", "#bdc3c7"};

inline const char* cause_color(GapCause c) noexcept {
  return name_of(kCauseColors, c, "#9e9e9e");
}

inline const char* activity_color(ActivityKind k) noexcept {
  return name_of(kActivityColors, k, "#7f8c8d");
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
      {"normalize", "#4a6fa5"}, {"echo", "#9b5de5"},     {"transform", "#c9a227"},
      {"dataset", "#5b8e7d"},   {"collate", "#bc4b51"},
  };
  for (const Entry& e : kColors) {
    if (e.name == name) return e.color;
  }
  return kUnknownRangeColor;
}

}  // namespace gpufeed::profiler::detail
