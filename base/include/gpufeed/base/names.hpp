#pragma once
// Enumerations named by a table: one array of names in enumerator order, read both ways.
#include <array>
#include <cstddef>
#include <optional>
#include <string_view>

namespace gpufeed {

/// The enumerator whose name (in `names`, in enumerator order) is `name`; nullopt for none.
template <typename Enum, std::size_t N>
[[nodiscard]] constexpr std::optional<Enum> find_named(const std::array<const char*, N>& names,
                                                       std::string_view name) noexcept {
  for (std::size_t i = 0; i < N; ++i) {
    if (std::string_view(names[i]) == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

/// The name (in `names`, in enumerator order) of `value`; `fallback` for a value past the table.
template <typename Enum, std::size_t N>
[[nodiscard]] constexpr const char* name_of(const std::array<const char*, N>& names, Enum value,
                                            const char* fallback = "?") noexcept {
  const auto i = static_cast<std::size_t>(value);
  return i < N ? names[i] : fallback;
}

}  // namespace gpufeed
