#include "gpufeed/base/knobs.hpp"

#include "gpufeed/base/fields.hpp"

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

std::string Setting::value_text(FlagUnits /*tag*/) const {
  const FieldName* field = find_field(knob_name(knob));
  if (knob == Knob::order || field == nullptr || field->flag_shift == 0) return value_text();
  return std::to_string(value >> field->flag_shift);
}

std::string field_spelling(const Setting& setting) {
  return std::string(knob_name(setting.knob)) + "=" + setting.value_text();
}

}  // namespace gpufeed
