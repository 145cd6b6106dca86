#pragma once
// Where a loader stands in an epoch, as plain data a trainer keeps in its checkpoint.
#include <cstdint>
#include <string>
#include <vector>

#include "gpufeed/pipeline/sampler.hpp"

namespace gpufeed::pipeline {

/// A loader's place in an epoch (Loader::state()), to continue after a restart, also with
/// another world size (Loader::restore()). Taken on any rank when every rank has consumed the
/// same number of batches, it describes the whole job: the epoch's global order is a function
/// of the seed and the epoch, and `segments` say what every rank consumed of it.
///
/// The rest of the fields identify what the state belongs to; restore() refuses a state of
/// another dataset, seed, order, batch size or sharding rule. Value type; to_json() and
/// from_json() round-trip it exactly.
struct LoaderState {
  static constexpr int kVersion = 1;

  std::uint64_t epoch = 0;
  /// The stretches of the epoch so far, one per world size the job ran with; the last one is
  /// the stretch in progress (its samples_per_rank: what this rank has consumed in it). Empty:
  /// nothing of `epoch` consumed yet.
  std::vector<EpochSegment> segments;
  /// Echoes delivered of the last fresh batch (fixed echo factors resume mid-batch).
  std::uint32_t echo_repeats = 0;

  // What the state belongs to:
  std::string dataset;      ///< the file's path when the state was taken (not checked)
  std::string fingerprint;  ///< the dataset's identity: sizes, shape, labels, stored bytes
  /// A digest of the next samples of the job (the first 256 no rank consumed, with their
  /// labels): restore() computes it again and refuses a state whose resume point would deliver
  /// other samples (a changed file or a changed order). Empty in a state written before it
  /// existed: not checked.
  std::string next_samples;
  std::uint64_t samples = 0;
  std::uint64_t seed = 0;
  Order order = Order::chunk;
  std::uint64_t chunk_window = 0;
  std::uint32_t batch_size = 0;
  bool drop_tail = false;
  bool drop_last = false;
  std::string echo;        ///< the echo setting, "1", "2", "auto:4"
  std::uint32_t rank = 0;  ///< who took it (not checked)

  /// One line of JSON.
  [[nodiscard]] std::string to_json() const;
  /// Parses what to_json() wrote; UsageError saying what is missing or malformed otherwise.
  static LoaderState from_json(const std::string& text);
  friend bool operator==(const LoaderState&, const LoaderState&) = default;
};

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::LoaderState;
}  // namespace gpufeed
