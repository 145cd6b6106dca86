#pragma once
// pipebench sweep: a grid over loader settings, the table of what each achieved, the best
// setting, and whether the plain run's recommendation held up.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpufeed/base/auto_count.hpp"
#include "gpufeed/base/knobs.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::tools::pipebench {

/// A worker or prefetch count in JSON: the string "auto", else the number.
nlohmann::json count_json(const AutoCount& count);

/// The swept flags as given: comma-separated lists ("1,2,4"); empty: not swept.
struct SweepAxes {
  std::string workers;
  std::string prefetch;
  std::string echo;
  std::string order;
  std::string cache_mb;
  std::string decode;
  std::string csv;  ///< where the table goes as CSV
};

/// One setting of the grid: the loader's settings a sweep varies, typed as LoaderOptions has
/// them, from the flags through the diagnosis' recommendation to the row that checks it.
struct SweepPoint {
  AutoCount workers = 0;
  AutoCount prefetch = 4;
  EchoOptions echo;
  Order order = Order::chunk;
  std::uint64_t cache_bytes = std::uint64_t{512} << 20;
  /// Not a sweep axis: a recommendation may move it (a file in object storage).
  AutoCount read_requests = AutoCount::automatic();
  Decode decode = Decode::cpu;

  /// The point `options` is at.
  [[nodiscard]] static SweepPoint of(const LoaderOptions& options);
  /// `options` moved to this point.
  void apply_to(LoaderOptions& options) const;

  friend bool operator==(const SweepPoint&, const SweepPoint&) = default;
};

/// "workers 2, prefetch 4, echo 1, order chunk, cache 512 MiB"
std::string describe(const SweepPoint& point);

/// The values to try per flag, in the order given; the first point is every first value.
struct SweepGrid {
  std::vector<AutoCount> workers;
  std::vector<AutoCount> prefetch;
  std::vector<EchoOptions> echo;
  std::vector<Order> order;
  std::vector<std::uint64_t> cache_bytes;
  std::vector<Decode> decode;

  /// Every combination, the last flag varying fastest.
  [[nodiscard]] std::vector<SweepPoint> points() const;
};

/// Parses the axes; a flag not given keeps `base`'s value. With no axis given at all, sweeps
/// workers over 1, cores/2 and cores and echo over 1 and 2. Throws UsageError naming the flag
/// for an empty, malformed, out-of-range (kLoaderFields' range) or repeated value, or a grid
/// over kMaxSweepPoints.
inline constexpr std::size_t kMaxSweepPoints = 256;
SweepGrid parse_grid(const SweepAxes& axes, const SweepPoint& base, unsigned cores);

/// What one setting achieved.
struct SweepRow {
  SweepPoint point;
  double samples_per_s = 0;
  std::optional<double> device_util;  ///< with a training stage and a steady-state window
  double input_wait_share = 0;        ///< consumer blocked on the loader / wall time
  std::uint64_t peak_rss_bytes = 0;   ///< during this setting
  std::string verdict;                ///< the diagnosis' verdict; empty without one
  std::string bottleneck_stage;
  /// The diagnosis' first recommendation as flags ("--echo 2"), the one setting it changes
  /// (none when it changes something else, or more than one setting), and its predicted
  /// utilization (< 0: none).
  std::string recommendation;
  std::optional<Setting> setting;
  double predicted_util = -1;
  std::string error;  ///< the one-line failure when this setting could not run
};

/// `point` with one setting changed (every knob is a flag the sweep can vary).
SweepPoint with_setting(SweepPoint point, const Setting& setting);

/// The row with the most samples/s; among rows within 3% of it, the one with the least peak
/// memory. nullopt when every row failed.
std::optional<std::size_t> best_row(const std::vector<SweepRow>& rows);

/// Whether the sweep bore out the first setting's recommendation.
struct Confirmation {
  std::string status;  ///< confirmed, not_confirmed, not_in_grid, no_recommendation
  std::string text;    ///< one sentence for the terminal and JSON
};
/// Looks for the first row's recommended setting in the grid: the point equal to the first one
/// except for that setting. Confirmed when it ran at least 5%
/// more samples/s than the first setting.
Confirmation confirm_recommendation(const std::vector<SweepRow>& rows);

/// The table on stdout.
void print_sweep_table(const std::vector<SweepRow>& rows);
/// CSV with a header row; numbers unformatted, empty fields for unknowns.
std::string sweep_csv(const std::vector<SweepRow>& rows);
/// {"settings": [...], "best": index|null, "recommendation": {...}}
nlohmann::json sweep_json(const std::vector<SweepRow>& rows, const std::optional<std::size_t>& best,
                          const Confirmation& confirmation);

}  // namespace gpufeed::tools::pipebench
