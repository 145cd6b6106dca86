#pragma once
// The one table of the loader's settings: every LoaderOptions field by name, with the range of
// each numeric one (the loader, Python and pipebench check against it). A field is named
// without its group (`batch_size` for LoaderOptions::sampling.batch_size, `output_layout` for
// output.layout, `reaugment_echoes` for echo.reaugment), as Python's keywords name it.
// Messages name fields as `{field}` placeholders; each front end spells them its own way
// (pipebench's flags: tools/common/flags.hpp; the Python Loader's keywords:
// python/src/options.cpp), and the tests check the table against LoaderOptions' defaults and
// each front end's names.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpufeed/base/auto_count.hpp"

namespace gpufeed {

/// The values a numeric field takes: low to high, and `auto` where takes_auto (AutoCount).
struct FieldRange {
  std::uint64_t low = 0;
  std::uint64_t high = 0;  ///< 0: the field has no range of its own
  bool takes_auto = false;
};

struct FieldName {
  /// The LoaderOptions field without its group (`size`: image.height and width together).
  std::string_view field;
  FieldRange range;
};

inline constexpr std::uint64_t kMaxBytesSetting = std::uint64_t{1} << 40;  ///< 1 TiB

inline constexpr std::array<FieldName, 43> kLoaderFields{{
    {"path", {}},
    {"images", {}},
    {"labels", {}},
    {"layout", {}},
    {"batch_size", {1, 1u << 24, false}},
    {"workers", {0, 1024, true}},
    {"prefetch", {1, 256, true}},
    {"cpu_budget", {0, 1024, false}},
    {"memory_bytes", {0, kMaxBytesSetting, false}},
    {"order", {}},
    {"seed", {0, (std::uint64_t{1} << 63) - 1, false}},
    {"chunk_window", {1, 1u << 20, false}},
    {"cache_bytes", {0, kMaxBytesSetting, false}},
    {"read_requests", {1, 1024, true}},
    {"cache_dir", {}},
    {"cache_dir_bytes", {0, std::uint64_t{1} << 50, false}},
    {"shard", {}},
    {"drop_tail", {}},
    {"drop_last", {}},
    {"mean", {}},
    {"stddev", {}},
    {"use_index", {}},
    {"device", {}},
    {"dtype", {}},
    {"output_layout", {}},
    {"echo", {}},
    {"reaugment_echoes", {}},
    {"height", {}},
    {"width", {}},
    {"size", {}},
    {"resize_filter", {}},
    {"augment", {}},
    {"decode", {}},
    // LoaderOptions::image.geometry's fields: torchvision's geometric transforms, fused.
    {"resize", {}},
    {"resize_max", {0, 16384, false}},
    {"crop", {}},
    {"crop_scale", {}},
    {"crop_ratio", {}},
    {"crop_padding", {}},
    {"pad_if_needed", {}},
    {"hflip", {}},
    {"vflip", {}},
    {"on_error", {}},
}};

/// The entry of a LoaderOptions field (or `size`); null for any other name.
[[nodiscard]] constexpr const FieldName* find_field(std::string_view field) noexcept {
  for (const FieldName& f : kLoaderFields) {
    if (f.field == field) return &f;
  }
  return nullptr;
}

/// The range of a numeric field; a FieldRange with high 0 for any other name.
[[nodiscard]] constexpr FieldRange field_range(std::string_view field) noexcept {
  const FieldName* f = find_field(field);
  return f != nullptr ? f->range : FieldRange{};
}
/// Whether `count` is a value of `field`: in its range, or auto where the field takes auto.
[[nodiscard]] bool field_takes(std::string_view field, const AutoCount& count);
/// "0 to 1024, or auto": the values `field` takes, for messages.
[[nodiscard]] std::string range_text(std::string_view field);
/// Throws OptionError "{field}=VALUE: use LOW to HIGH" when `value` is outside the field's
/// range (`value_text`: the value as the caller gave it; empty: the number).
void check_field_range(std::string_view field, std::uint64_t value,
                       std::string_view value_text = {});

}  // namespace gpufeed
