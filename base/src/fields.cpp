#include "gpufeed/base/fields.hpp"

namespace gpufeed {

std::string field_keyword(std::string_view field) {
  const FieldName* f = find_field(field);
  return std::string(f != nullptr ? f->keyword : field);
}

std::string field_flag(std::string_view field) {
  if (const FieldName* f = find_field(field); f != nullptr && !f->flag.empty()) {
    return std::string(f->flag);
  }
  std::string flag = "--";
  for (const char c : field) flag += c == '_' ? '-' : c;
  return flag;
}

}  // namespace gpufeed
