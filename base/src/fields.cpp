#include "gpufeed/base/fields.hpp"

#include "gpufeed/base/errors.hpp"

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

bool field_takes(std::string_view field, const AutoCount& count) {
  const FieldRange r = field_range(field);
  if (count.is_auto()) return r.takes_auto;
  const unsigned n = count.value_or(0);
  return r.high == 0 || (n >= r.low && n <= r.high);
}

std::string range_text(std::string_view field) {
  const FieldRange r = field_range(field);
  return std::to_string(r.low) + " to " + std::to_string(r.high) +
         (r.takes_auto ? ", or auto" : "");
}

void check_field_range(std::string_view field, std::uint64_t value, std::string_view value_text) {
  const FieldRange r = field_range(field);
  if (r.high == 0 || (value >= r.low && value <= r.high)) return;
  const std::string given = value_text.empty() ? std::to_string(value) : std::string(value_text);
  throw OptionError(std::string(field),
                    "{" + std::string(field) + "}=" + given + ": use " + range_text(field));
}

}  // namespace gpufeed
