#pragma once
// The words a front end uses for what the diagnosis advises on: settings with their values,
// the loader's fields, and the front end's own switches. pipebench writes flags
// (`--workers 8`, `--deterministic`), Python keywords and calls (`workers=8`,
// `torch.use_deterministic_algorithms(True)`), C++ the LoaderOptions fields. The diagnosis
// never spells one itself.
#include <array>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

#include "gpufeed/base/knobs.hpp"

namespace gpufeed::diagnosis {

/// Things a front end switches that are not LoaderOptions fields.
enum class Term : unsigned char {
  training_stage,   ///< how a run gets device steps to measure ("--model cnn", "prof.step()")
  profiling_off,    ///< how the recorder was turned off (pipebench's --no-profile)
  read_less_often,  ///< reading the loss every N steps (pipebench's --sync-every)
  deterministic,    ///< deterministic algorithms only
  autotuner,        ///< cuDNN's benchmark mode (non-deterministic algorithm choice)
};
inline constexpr std::size_t kTermCount = 5;

struct Language {
  /// A knob at a value: "--workers 8", "workers=8".
  SettingSpelling setting;
  /// A LoaderOptions field (without braces) as the front end names it: "--seed", "seed".
  std::function<std::string(std::string_view field)> field;
  /// Between a field and its value: " " (flags), "=" (keywords).
  std::string assign = "=";
  /// How the front end does each Term, in enumerator order; "" where it has no such thing.
  std::array<const char*, kTermCount> terms{};

  [[nodiscard]] std::string term(Term t) const {
    const char* how = terms[static_cast<std::size_t>(t)];
    return how != nullptr ? how : "";
  }
  /// "--seed 0", "seed=0".
  [[nodiscard]] std::string with_value(std::string_view name, const std::string& value) const {
    return field(name) + assign + value;
  }
};

/// The library's own words, for C++ callers: LoaderOptions fields ("workers=8", "seed=0") and
/// plain descriptions of the rest.
const Language& field_language();

}  // namespace gpufeed::diagnosis
