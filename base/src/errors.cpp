#include "gpufeed/base/errors.hpp"

#include <algorithm>
#include <array>

namespace gpufeed {

namespace {

/// LoaderOptions' fields, and `size` for height x width: the only names a placeholder holds, so
/// braces in a user's value ("--echo {auto}") are never taken for one.
constexpr std::array<std::string_view, 31> kFields{"path",          "images",
                                                   "labels",        "layout",
                                                   "batch_size",    "workers",
                                                   "prefetch",      "order",
                                                   "seed",          "chunk_window",
                                                   "cache_bytes",   "shard",
                                                   "drop_tail",     "drop_last_batch",
                                                   "mean",          "std",
                                                   "use_index",     "device",
                                                   "dtype",         "output_layout",
                                                   "echo",          "reaugment_echoes",
                                                   "inject_stall",  "height",
                                                   "width",         "size",
                                                   "resize_filter", "augment",
                                                   "on_error",      "cpu_budget",
                                                   "memory_budget"};

bool is_field_name(std::string_view s) {
  return std::find(kFields.begin(), kFields.end(), s) != kFields.end();
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
