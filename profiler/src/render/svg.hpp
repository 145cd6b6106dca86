#pragma once
// Minimal SVG/HTML text helpers: escaping and a rectangle batcher that merges what would
// overlap on screen, so a million ranges become a few thousand rectangles.
#include <algorithm>
#include <cstdio>
#include <map>
#include <string>
#include <string_view>

#include "gpufeed/base/text.hpp"

namespace gpufeed::profiler::detail {

using gpufeed::xml_escape;

inline std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

/// Collects rectangles of one row; same-coloured ones closer than half a pixel are merged.
class RectRow {
 public:
  RectRow(std::string& out, double y, double height) : out_(out), y_(y), h_(height) {}
  ~RectRow() { flush(); }
  RectRow(const RectRow&) = delete;
  RectRow& operator=(const RectRow&) = delete;

  void add(double x0, double x1, const char* color) {
    if (x1 - x0 < 0.5) x1 = x0 + 0.5;
    auto [it, fresh] = open_.try_emplace(color, Span{x0, x1});
    if (fresh) return;
    if (x0 <= it->second.x1 + 0.5) {
      it->second.x1 = std::max(it->second.x1, x1);
      return;
    }
    emit(color, it->second);
    it->second = {x0, x1};
  }
  void flush() {
    for (const auto& [color, span] : open_) emit(color, span);
    open_.clear();
  }

 private:
  struct Span {
    double x0, x1;
  };
  void emit(std::string_view color, const Span& s) {
    out_ += "<rect x=\"" + fmt(s.x0) + "\" y=\"" + fmt(y_) + "\" width=\"" + fmt(s.x1 - s.x0) +
            "\" height=\"" + fmt(h_) + "\" fill=\"" + std::string(color) + "\"/>";
  }
  std::string& out_;
  double y_;
  double h_;
  std::map<std::string_view, Span> open_;
};

}  // namespace gpufeed::profiler::detail
