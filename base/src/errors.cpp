#include "gpufeed/base/errors.hpp"

#include <algorithm>

#include "gpufeed/base/fields.hpp"

namespace gpufeed {

namespace {

bool is_field_name(std::string_view s) {
  return find_field(s) != nullptr;  // so braces in a user's value ("{auto}") stay as they are
}

std::string as_fields(std::string_view text) {
  return render_option_names(text, [](std::string_view f) { return std::string(f); });
}

}  // namespace

OptionError::OptionError(std::string field, std::string message)
    : UsageError(as_fields(message)), field_(std::move(field)), template_(std::move(message)) {}

std::string OptionError::render(const Naming& name) const {
  return render_option_names(template_, name);
}

std::string render_option_names(std::string_view text, const OptionError::Naming& name) {
  std::string out;
  out.reserve(text.size());
  std::size_t i = 0;
  while (i < text.size()) {
    const std::size_t open = text.find('{', i);
    const std::size_t close = open == std::string_view::npos ? open : text.find('}', open);
    if (close == std::string_view::npos) break;
    const std::string_view inside = text.substr(open + 1, close - open - 1);
    out.append(text.substr(i, open - i));
    if (is_field_name(inside)) {
      out += name(inside);
    } else {
      out.append(text.substr(open, close - open + 1));
    }
    i = close + 1;
  }
  out.append(text.substr(std::min(i, text.size())));
  return out;
}

}  // namespace gpufeed
