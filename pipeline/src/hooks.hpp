#pragma once
// Points where tests pause the pipeline to make an interleaving happen on purpose.
#include <atomic>

namespace gpufeed::pipeline::detail {

/// Null in production: each costs one relaxed load. Set them only while no loader runs.
struct TestHooks {
  /// In EpochRun::feed(), after a slot left the pool and before it is counted in flight.
  std::atomic<void (*)()> slot_taken{nullptr};
  /// In EpochRun::next(), while an echo is being re-augmented.
  std::atomic<void (*)()> reaugmenting{nullptr};
  /// In EpochRun::deliver(), before a batch joins the ready queue (no lock held).
  std::atomic<void (*)()> delivering{nullptr};
  /// In EpochRun::deliver(), after a batch joined the ready queue (no lock held).
  std::atomic<void (*)()> delivered{nullptr};
  /// In StageWork::assemble() (the read stage, or decode for encoded images) and normalize(),
  /// before the stage works on a batch: a hook that throws fails the stage.
  std::atomic<void (*)()> assembling{nullptr};
  std::atomic<void (*)()> normalizing{nullptr};
};
extern TestHooks test_hooks;

/// Calls `hook` when a test set it.
inline void run_hook(const std::atomic<void (*)()>& hook) {
  if (auto* f = hook.load(std::memory_order_relaxed)) f();
}

}  // namespace gpufeed::pipeline::detail
