#pragma once
// The consumer's place in the epoch, as a LoaderState to keep and as the plan that continues a
// restored one.
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "dataset_source.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/loader_state.hpp"
#include "gpufeed/pipeline/sampler.hpp"

namespace gpufeed::pipeline::detail {

/// Where an epoch starts: after the `closed` segments, from the `start`-th sample of this
/// rank's share. With `replay`, the batch at `start` was delivered before a restart, with
/// `echoes_done` of its echoes: it is not delivered fresh again, only its remaining echoes.
struct EpochPlan {
  std::vector<EpochSegment> closed;
  std::uint64_t start = 0;
  std::uint64_t consumed = 0;  ///< samples of the share consumed before the restart
  bool replay = false;
  std::uint32_t echoes_done = 0;
};

/// The consumer's place: the epoch in progress, its closed segments, the samples of this rank's
/// share consumed in the current segment and the echoes of the last fresh batch; and a state
/// restore()d for the start of its epoch. The consumer moves it; state() and batches() are
/// thread-safe.
class ConsumerPlace {
 public:
  /// `options`, `source` and `sampler` must outlive the place.
  ConsumerPlace(const LoaderOptions& options, const DatasetSource& source, const Sampler& sampler);

  /// Epoch `epoch` starts: the plan that continues a state restored for it, or the whole epoch.
  /// A restored state of another epoch is discarded.
  EpochPlan start_epoch(std::uint64_t epoch);
  /// The epoch in progress makes `batches` fresh batches.
  void set_batches(std::uint64_t batches);
  /// The consumer was handed a batch of `samples` samples, fresh or an echo.
  void advance(std::uint32_t samples, bool echoed);
  /// Fresh batches of the epoch in progress (fewer than a whole epoch's when resumed).
  [[nodiscard]] std::uint64_t batches() const;

  /// The place as a LoaderState (Loader::state()). Thread-safe.
  [[nodiscard]] LoaderState state() const;
  /// Checks `state` against this loader and keeps it for the start of its epoch.
  void restore(const LoaderState& state);

 private:
  [[nodiscard]] EpochPlan plan_from(const LoaderState& state) const;
  [[nodiscard]] const std::string& fingerprint() const;
  /// LoaderState::next_samples of a state at `segments` of `epoch`.
  [[nodiscard]] std::string next_samples(std::uint64_t epoch,
                                         std::span<const EpochSegment> segments) const;

  struct Place {
    std::uint64_t epoch = 0;
    std::vector<EpochSegment> closed;
    std::uint64_t consumed = 0;
    std::uint32_t echo_repeats = 0;
    std::uint64_t batches = 0;  // fresh batches of the epoch in progress
  };

  const LoaderOptions& options_;
  const DatasetSource& source_;
  const Sampler& sampler_;
  mutable std::mutex mutex_;
  Place place_;
  std::optional<LoaderState> pending_;  // restore()d, applied when its epoch starts
  mutable std::once_flag fingerprint_once_;
  mutable std::string fingerprint_;
};

}  // namespace gpufeed::pipeline::detail
