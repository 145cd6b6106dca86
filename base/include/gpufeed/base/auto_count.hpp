#pragma once
// A count a setting takes as given, or `auto`: the loader tunes it while it runs.
#include <optional>
#include <string>
#include <string_view>

namespace gpufeed {

/// The workers and prefetch settings: a fixed count, or auto (AutoCount::automatic()).
/// Converts from a count, so `options.workers = 4` and `options.workers == 4` read as they
/// would for a number.
class AutoCount {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): a count is an AutoCount
  constexpr AutoCount(unsigned count) noexcept : count_(count) {}
  /// Tuned while the loader runs.
  [[nodiscard]] static constexpr AutoCount automatic() noexcept { return AutoCount(); }

  [[nodiscard]] constexpr bool is_auto() const noexcept { return !count_.has_value(); }
  /// The fixed count; `fallback` when automatic.
  [[nodiscard]] constexpr unsigned value_or(unsigned fallback) const noexcept {
    return count_.value_or(fallback);
  }
  /// "auto" or the count: "8".
  [[nodiscard]] std::string str() const;
  /// "auto", or a whole number; nullopt for anything else (range checks are the field's:
  /// check_field_range() in fields.hpp).
  [[nodiscard]] static std::optional<AutoCount> parse(std::string_view text) noexcept;

  friend constexpr bool operator==(const AutoCount&, const AutoCount&) = default;

 private:
  constexpr AutoCount() noexcept = default;
  std::optional<unsigned> count_;
};

}  // namespace gpufeed
