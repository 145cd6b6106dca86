#pragma once
// The loader's active workers, changed while it runs: all but `active` of the arena's threads
// wait in a task of their own, so the arena and the flow graph never need rebuilding.
#include <condition_variable>
#include <mutex>

#include <oneapi/tbb/task_arena.h>

namespace gpufeed::detail {

/// Parks arena threads: each parked thread blocks in an enqueued task, so at most `active` of
/// the arena's threads take the loader's work. A park task that has not started yet takes
/// effect when a thread is free, so lowering the count never interrupts work in progress.
/// Thread-safe. Destroy it before the arena: the destructor releases every parked thread and
/// waits until no park task is left.
class WorkerGate {
 public:
  WorkerGate(oneapi::tbb::task_arena& arena, unsigned threads, unsigned active);
  WorkerGate(const WorkerGate&) = delete;
  WorkerGate& operator=(const WorkerGate&) = delete;
  ~WorkerGate();

  /// Clamped to [1, threads].
  void set_active(unsigned active);
  [[nodiscard]] unsigned active() const;
  [[nodiscard]] unsigned threads() const noexcept { return threads_; }

 private:
  void park();

  oneapi::tbb::task_arena& arena_;
  const unsigned threads_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  unsigned want_parked_ = 0;  // threads - active
  unsigned tasks_ = 0;        // park tasks enqueued and not finished
  bool closing_ = false;
};

}  // namespace gpufeed::detail
