#include "gpufeed/base/auto_count.hpp"

#include <charconv>

namespace gpufeed {

std::string AutoCount::str() const {
  return count_ ? std::to_string(*count_) : "auto";
}

std::optional<AutoCount> AutoCount::parse(std::string_view text) noexcept {
  if (text == "auto") return automatic();
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || text.empty()) return std::nullopt;
  return AutoCount(value);
}

}  // namespace gpufeed
