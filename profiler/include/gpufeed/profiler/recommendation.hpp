#pragma once
// What to change, why, and what the change should do: each one checkable by a sweep. Plain
// data the reports show; gpufeed::diagnosis's rules (recommend()) make them.
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/base/knobs.hpp"

namespace gpufeed::profiler {

/// A setting of an input that is not gpufeed's Loader, by its own keyword (a torch
/// DataLoader's num_workers, persistent_workers, pin_memory).
struct InputSetting {
  std::string keyword;
  std::int64_t value = 0;
  bool boolean = false;  ///< the value is True/False
};

/// A recommendation speaks the loader's terms: the settings to change ({knob, value}) and, for
/// what is not a setting (a change to the training code), words. Front ends spell the settings
/// their own way (action()).
struct Recommendation {
  std::string kind;               ///< echo, workers, prefetch, pinned_memory, chunk_cache,
                                  ///< object_store, transfer_dtype, host_sync, launch; for a torch
                                  ///< DataLoader: num_workers, pack, persistent_workers,
                                  ///< pin_memory, input
  std::vector<Setting> settings;  ///< loader settings to change; empty: a change in words only
  std::string words;              ///< the rest of the change ("remove .item() from the loop")
  std::string reason;             ///< the measurement that triggered it
  std::string predicted_effect;   ///< in words, with numbers
  double predicted_device_util = -1;  ///< model prediction; negative when not modelled
  /// Samples the loop would take a second (steps a second times samples a step): negative
  /// when not modelled. With a step whose cost does not change, utilization and samples/s
  /// rise together; where more workers slow a CPU step, they do not.
  double predicted_samples_per_s = -1;
  std::vector<InputSetting> input_settings{};  ///< an input's own settings (then words spell them)

  /// The settings as `spelling` writes them, then the words: "echo=2", "--echo 2",
  /// "order=chunk with a chunk cache of at least the window".
  [[nodiscard]] std::string action(const SettingSpelling& spelling = field_spelling) const;
};

}  // namespace gpufeed::profiler
