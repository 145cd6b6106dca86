#include "common/flags.hpp"

namespace gpufeed::tools {

std::string field_flag(std::string_view field) {
  if (const FieldFlag* f = find_flag(field); f != nullptr) return std::string(f->flag);
  std::string flag = "--";
  for (const char c : field) flag += c == '_' ? '-' : c;
  return flag;
}

std::string flag_value_text(const Setting& setting) {
  const unsigned shift = flag_shift(knob_name(setting.knob));
  if (setting.knob == Knob::order || shift == 0) return setting.value_text();
  return std::to_string(setting.value >> shift);
}

}  // namespace gpufeed::tools
