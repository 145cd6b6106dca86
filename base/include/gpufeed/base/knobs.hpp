#pragma once
// The loader's tunable settings as data: what the profiler recommends, what pipebench sweeps,
// what the online tuner changes and what Python reads back. A knob is named by its LoaderOptions
// field; each front end spells it its own way (pipebench `--workers 8`, Python `workers=8`).
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "gpufeed/base/names.hpp"

namespace gpufeed {

/// The order samples are visited in.
enum class Order : std::uint8_t {
  sequential,  ///< 0, 1, 2, ...
  random,      ///< a full permutation per epoch
  chunk,       ///< shuffled chunk order, samples shuffled within a window of chunks
};
inline constexpr std::array<const char*, 3> kOrderNames{"sequential", "random", "chunk"};

[[nodiscard]] constexpr const char* order_name(Order order) noexcept {
  return name_of(kOrderNames, order);
}
/// Parses an order name; nullopt for an unknown one.
[[nodiscard]] constexpr std::optional<Order> find_order(std::string_view name) noexcept {
  return find_named<Order>(kOrderNames, name);
}
/// "sequential, random or chunk", for messages.
[[nodiscard]] std::string order_choices();

/// A setting the loader can change: the LoaderOptions field of the same name.
enum class Knob : std::uint8_t { workers, prefetch, echo, cache_bytes, order, read_requests };
inline constexpr std::array<const char*, 6> kKnobNames{"workers",     "prefetch", "echo",
                                                       "cache_bytes", "order",    "read_requests"};

[[nodiscard]] constexpr const char* knob_name(Knob knob) noexcept {
  return name_of(kKnobNames, knob);
}
/// Parses a knob (field) name; nullopt for an unknown one.
[[nodiscard]] constexpr std::optional<Knob> find_knob(std::string_view name) noexcept {
  return find_named<Knob>(kKnobNames, name);
}

/// One knob at one value: a count (workers, prefetch), a factor (echo), bytes (cache_bytes) or,
/// for Knob::order, an Order.
struct Setting {
  Knob knob = Knob::workers;
  std::uint64_t value = 0;

  [[nodiscard]] static constexpr Setting of(Knob knob, std::uint64_t value) noexcept {
    return {knob, value};
  }
  [[nodiscard]] static constexpr Setting of(Order order) noexcept {
    return {Knob::order, static_cast<std::uint64_t>(order)};
  }
  [[nodiscard]] constexpr Order order() const noexcept { return static_cast<Order>(value); }
  /// The value as the field takes it: "8", "chunk", "536870912".
  [[nodiscard]] std::string value_text() const;

  friend bool operator==(const Setting&, const Setting&) = default;
};

/// How a front end spells a setting (pipebench: "--workers 8"; Python: "workers=8").
using SettingSpelling = std::function<std::string(const Setting&)>;
/// The library's own spelling, by field name: "workers=8".
[[nodiscard]] std::string field_spelling(const Setting& setting);

}  // namespace gpufeed
