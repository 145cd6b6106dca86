#pragma once
// The one table of the loader's settings: every LoaderOptions field with the name each front
// end gives it. Messages name fields as `{field}` placeholders and each front end renders them
// from here (pipebench its flags, Python its keywords); the tests check the table against
// LoaderOptions' defaults, the Python Loader's keywords and pipebench's flags.
#include <array>
#include <string>
#include <string_view>

namespace gpufeed {

struct FieldName {
  std::string_view field;    ///< the LoaderOptions member (`size`: height and width together)
  std::string_view keyword;  ///< the Python Loader's keyword
  std::string_view flag;     ///< pipebench's flag; empty where pipebench sets it itself
  /// The front ends take the value in units of 2^unit_shift of the field's own (20: MiB for a
  /// field in bytes).
  unsigned unit_shift = 0;
};

inline constexpr std::array<FieldName, 31> kLoaderFields{{
    {"path", "path", "--data"},
    {"images", "images", "--images"},
    {"labels", "labels", "--labels"},
    {"layout", "layout", "--layout"},
    {"batch_size", "batch_size", "--batch"},
    {"workers", "workers", "--workers"},
    {"prefetch", "prefetch", "--prefetch"},
    {"cpu_budget", "cpu_budget", "--cpu-budget"},
    {"memory_budget", "memory_mb", "--memory-mb", 20},
    {"order", "order", "--order"},
    {"seed", "seed", "--seed"},
    {"chunk_window", "chunk_window", ""},
    {"cache_bytes", "cache_mb", "--cache-mb", 20},
    {"shard", "shard", ""},
    {"drop_tail", "drop_tail", ""},
    {"drop_last", "drop_last", ""},
    {"mean", "mean", ""},
    {"std", "std", ""},
    {"use_index", "use_index", "--no-index"},
    {"device", "device", "--device"},
    {"dtype", "dtype", "--dtype"},
    {"output_layout", "output_layout", ""},
    {"echo", "echo", "--echo"},
    {"reaugment_echoes", "reaugment_echoes", ""},
    {"inject_stall", "inject_stall", "--inject-stall"},
    {"height", "size", "--size"},
    {"width", "size", "--size"},
    {"size", "size", "--size"},
    {"resize_filter", "resize_filter", ""},
    {"augment", "augment", "--augment"},
    {"on_error", "on_error", "--on-error"},
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

}  // namespace gpufeed
