#pragma once
// The one table of the loader's settings: every LoaderOptions field with the name each front
// end gives it. Messages name fields as `{field}` placeholders and each front end renders them
// from here (pipebench its flags, Python its keywords); the tests check the table against
// LoaderOptions' defaults, the Python Loader's keywords and pipebench's flags. The table holds
// each numeric field's range too: the loader, Python and pipebench check against it.
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
  std::string_view field;    ///< the LoaderOptions member (`size`: height and width together)
  std::string_view keyword;  ///< the Python Loader's keyword
  std::string_view flag;     ///< pipebench's flag; empty where pipebench sets it itself
  /// pipebench's flag takes the value in units of 2^flag_shift of the field's own (20: MiB for
  /// a field in bytes). The field and its Python keyword share one unit.
  unsigned flag_shift = 0;
  FieldRange range;
};

inline constexpr std::uint64_t kMaxBytesSetting = std::uint64_t{1} << 40;  ///< 1 TiB

inline constexpr std::array<FieldName, 43> kLoaderFields{{
    {"path", "path", "--data", 0, {}},
    {"images", "images", "--images", 0, {}},
    {"labels", "labels", "--labels", 0, {}},
    {"layout", "layout", "--layout", 0, {}},
    {"batch_size", "batch_size", "--batch", 0, {1, 1u << 24, false}},
    {"workers", "workers", "--workers", 0, {0, 1024, true}},
    {"prefetch", "prefetch", "--prefetch", 0, {1, 256, true}},
    {"cpu_budget", "cpu_budget", "--cpu-budget", 0, {0, 1024, false}},
    {"memory_bytes", "memory_bytes", "--memory-mb", 20, {0, kMaxBytesSetting, false}},
    {"order", "order", "--order", 0, {}},
    {"seed", "seed", "--seed", 0, {0, (std::uint64_t{1} << 63) - 1, false}},
    {"chunk_window", "chunk_window", "", 0, {1, 1u << 20, false}},
    {"cache_bytes", "cache_bytes", "--cache-mb", 20, {0, kMaxBytesSetting, false}},
    {"read_requests", "read_requests", "--read-requests", 0, {1, 1024, true}},
    {"cache_dir", "cache_dir", "--cache-dir", 0, {}},
    {"cache_dir_bytes",
     "cache_dir_bytes",
     "--cache-dir-mb",
     20,
     {0, std::uint64_t{1} << 50, false}},
    {"shard", "shard", "", 0, {}},
    {"drop_tail", "drop_tail", "", 0, {}},
    {"drop_last", "drop_last", "", 0, {}},
    {"mean", "mean", "", 0, {}},
    {"stddev", "stddev", "", 0, {}},
    {"use_index", "use_index", "--no-index", 0, {}},
    {"device", "device", "--device", 0, {}},
    {"dtype", "dtype", "--dtype", 0, {}},
    {"output_layout", "output_layout", "", 0, {}},
    {"echo", "echo", "--echo", 0, {}},
    {"reaugment_echoes", "reaugment_echoes", "", 0, {}},
    {"height", "size", "--size", 0, {}},
    {"width", "size", "--size", 0, {}},
    {"size", "size", "--size", 0, {}},
    {"resize_filter", "resize_filter", "--resize-filter", 0, {}},
    {"augment", "augment", "--augment", 0, {}},
    {"decode", "decode", "--decode", 0, {}},
    // LoaderOptions::geometry's fields: torchvision's geometric transforms, fused.
    {"resize", "resize", "--resize", 0, {}},
    {"resize_max", "resize_max", "--resize-max", 0, {0, 16384, false}},
    {"crop", "crop", "--crop", 0, {}},
    {"crop_scale", "crop_scale", "--crop-scale", 0, {}},
    {"crop_ratio", "crop_ratio", "--crop-ratio", 0, {}},
    {"crop_padding", "crop_padding", "--crop-padding", 0, {}},
    {"pad_if_needed", "pad_if_needed", "--pad-if-needed", 0, {}},
    {"hflip", "hflip", "--hflip", 0, {}},
    {"vflip", "vflip", "--vflip", 0, {}},
    {"on_error", "on_error", "--on-error", 0, {}},
}};

/// The entry of a LoaderOptions field (or `size`); null for any other name.
[[nodiscard]] constexpr const FieldName* find_field(std::string_view field) noexcept {
  for (const FieldName& f : kLoaderFields) {
    if (f.field == field) return &f;
  }
  return nullptr;
}

/// The Python keyword of `field`; the name itself for one that is not a LoaderOptions field.
[[nodiscard]] std::string field_keyword(std::string_view field);
/// pipebench's flag for `field`; "--" + the name with dashes where it has none of its own.
[[nodiscard]] std::string field_flag(std::string_view field);

/// The range of a numeric field; a FieldRange with high 0 for any other name.
[[nodiscard]] constexpr FieldRange field_range(std::string_view field) noexcept {
  const FieldName* f = find_field(field);
  return f != nullptr ? f->range : FieldRange{};
}
/// The range of `field` in the unit of its pipebench flag (MiB for --cache-mb).
[[nodiscard]] constexpr FieldRange flag_unit_range(std::string_view field) noexcept {
  const FieldName* f = find_field(field);
  if (f == nullptr) return FieldRange{};
  return {f->range.low >> f->flag_shift, f->range.high >> f->flag_shift, f->range.takes_auto};
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
