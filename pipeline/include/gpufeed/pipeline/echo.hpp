#pragma once
// Batch echoing (Choi et al. 2019): deliver a device batch more than once when input is slow.
#include <cstdint>
#include <string>

namespace gpufeed::pipeline {

/// LoaderOptions::echo: 1 (off), N (every batch N times) or auto[:CAP], and whether echoes
/// of an augmented batch are flipped anew.
struct EchoOptions {
  std::uint32_t factor = 1;  ///< fixed: each fresh batch is delivered `factor` times
  bool adaptive = false;     ///< auto: echo only when no fresh batch is ready
  std::uint32_t cap = 4;     ///< auto: at most this many echoes of one fresh batch
  /// With echo and augment flip or crop-flip: each echo shows a new flip of the batch
  /// (echo_flip(), relative to the fresh delivery), applied to the slot's pixels on the CPU
  /// device and by the normalize kernel on a CUDA device. An echo the consumer asks for while
  /// it still holds the previous delivery of that batch goes to a slot kept for echoes (one
  /// more batch of output memory), so a held delivery is never overwritten; with that slot
  /// held too, the echo repeats the batch unchanged.
  bool reaugment = true;

  /// Parses "1", "3", "auto", "auto:2" (reaugment keeps its default); throws UsageError
  /// otherwise.
  static EchoOptions parse(const std::string& text);
  /// This schedule (factor, adaptive, cap) with `reaugment` as given.
  [[nodiscard]] EchoOptions with_reaugment(bool on) const {
    EchoOptions o = *this;
    o.reaugment = on;
    return o;
  }
  [[nodiscard]] bool enabled() const { return adaptive || factor > 1; }
  [[nodiscard]] std::string to_string() const;

  friend bool operator==(const EchoOptions&, const EchoOptions&) = default;
};

/// The echo decision, separate from any threading so it can be tested on its own. The consumer
/// asks next_action() each time it wants a batch, telling whether a fresh batch is ready and
/// whether the epoch has fresh batches left; it then reports what it delivered.
///
/// Fixed factor e: every fresh batch is followed by e - 1 echoes of it, whether or not input
/// keeps up. Adaptive: an echo of the current batch is delivered only when no fresh batch is
/// ready, at most `cap` times per fresh batch, so echoing costs nothing when input keeps up.
/// Not thread-safe (the consumer's).
class EchoStage {
 public:
  enum class Action { fresh, echo, wait, end };

  explicit EchoStage(EchoOptions options) : options_(options) {}

  /// `fresh_ready`: a fresh batch can be taken without blocking. `fresh_left`: the epoch still
  /// has fresh batches to deliver (ready or not).
  [[nodiscard]] Action next_action(bool fresh_ready, bool fresh_left) const;
  void delivered_fresh();
  void delivered_echo();
  /// Forget the current batch (a new epoch).
  void reset();

  /// Whether the current batch may still be echoed (the caller keeps it alive until then).
  [[nodiscard]] bool holds_current() const;
  /// Echoes delivered of the current fresh batch so far (the repeat number of the last one).
  [[nodiscard]] std::uint32_t echoes_of_current() const { return echoes_of_current_; }
  [[nodiscard]] std::uint64_t fresh_batches() const { return fresh_; }
  [[nodiscard]] std::uint64_t echoed_batches() const { return echoed_; }
  [[nodiscard]] const EchoOptions& options() const { return options_; }

 private:
  EchoOptions options_;
  bool has_current_ = false;
  std::uint32_t echoes_of_current_ = 0;
  std::uint64_t fresh_ = 0;
  std::uint64_t echoed_ = 0;
};

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::EchoOptions;
}  // namespace gpufeed
