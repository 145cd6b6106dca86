#include "gpufeed/base/fields.hpp"

#include "gpufeed/base/errors.hpp"

namespace gpufeed {

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
