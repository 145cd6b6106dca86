#pragma once
// The tools' spelling of the loader's settings: the pipebench flag of each LoaderOptions field
// and the unit it counts in (--cache-mb: MiB for a field in bytes). gpufeed/base/fields.hpp
// holds the fields themselves (names, ranges); a tool's messages render their `{field}`
// placeholders with field_flag(), and the tools tests check the table against pipebench --help.
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "gpufeed/base/fields.hpp"
#include "gpufeed/base/knobs.hpp"

namespace gpufeed::tools {

struct FieldFlag {
  std::string_view field;  ///< the field's name in kLoaderFields (`size`: height and width)
  std::string_view flag;   ///< pipebench's flag
  /// The flag takes the value in units of 2^shift of the field's own (20: MiB for bytes).
  unsigned shift = 0;
};

/// Every field pipebench has a flag for; it sets the others itself (chunk_window, shard, ...).
inline constexpr std::array<FieldFlag, 35> kFieldFlags{{
    {"path", "--data"},
    {"images", "--images"},
    {"labels", "--labels"},
    {"layout", "--layout"},
    {"batch_size", "--batch"},
    {"workers", "--workers"},
    {"prefetch", "--prefetch"},
    {"cpu_budget", "--cpu-budget"},
    {"memory_bytes", "--memory-mb", 20},
    {"order", "--order"},
    {"seed", "--seed"},
    {"cache_bytes", "--cache-mb", 20},
    {"read_requests", "--read-requests"},
    {"cache_dir", "--cache-dir"},
    {"cache_dir_bytes", "--cache-dir-mb", 20},
    {"use_index", "--no-index"},
    {"device", "--device"},
    {"dtype", "--dtype"},
    {"echo", "--echo"},
    {"height", "--size"},
    {"width", "--size"},
    {"size", "--size"},
    {"resize_filter", "--resize-filter"},
    {"augment", "--augment"},
    {"decode", "--decode"},
    {"resize", "--resize"},
    {"resize_max", "--resize-max"},
    {"crop", "--crop"},
    {"crop_scale", "--crop-scale"},
    {"crop_ratio", "--crop-ratio"},
    {"crop_padding", "--crop-padding"},
    {"pad_if_needed", "--pad-if-needed"},
    {"hflip", "--hflip"},
    {"vflip", "--vflip"},
    {"on_error", "--on-error"},
}};

/// The entry of a field pipebench has a flag for; null for any other name.
[[nodiscard]] constexpr const FieldFlag* find_flag(std::string_view field) noexcept {
  for (const FieldFlag& f : kFieldFlags) {
    if (f.field == field) return &f;
  }
  return nullptr;
}

/// pipebench's flag for `field`; "--" + the name with dashes where it has none of its own.
[[nodiscard]] std::string field_flag(std::string_view field);

/// The flag's unit: the field's own shifted left by this (0 for a field without a flag).
[[nodiscard]] constexpr unsigned flag_shift(std::string_view field) noexcept {
  const FieldFlag* f = find_flag(field);
  return f != nullptr ? f->shift : 0;
}

/// The range of `field` in the unit of its flag (MiB for --cache-mb).
[[nodiscard]] constexpr FieldRange flag_unit_range(std::string_view field) noexcept {
  const FieldRange r = field_range(field);
  const unsigned shift = flag_shift(field);
  return {r.low >> shift, r.high >> shift, r.takes_auto};
}

/// The value in the unit of the knob's flag: "512" for cache_bytes 512 MiB (--cache-mb).
[[nodiscard]] std::string flag_value_text(const Setting& setting);

}  // namespace gpufeed::tools
