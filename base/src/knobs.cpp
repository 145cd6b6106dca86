#include "gpufeed/base/knobs.hpp"

namespace gpufeed {

std::string order_choices() {
  std::string out;
  for (std::size_t i = 0; i < kOrderNames.size(); ++i) {
    if (i > 0) out += i + 1 == kOrderNames.size() ? " or " : ", ";
    out += kOrderNames[i];
  }
  return out;
}

std::string Setting::value_text() const {
  if (knob == Knob::order) {
    return value < kOrderNames.size() ? order_name(order()) : "?";
  }
  return std::to_string(value);
}

std::string field_spelling(const Setting& setting) {
  return std::string(knob_name(setting.knob)) + "=" + setting.value_text();
}

}  // namespace gpufeed
