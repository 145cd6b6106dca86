#pragma once
// The loader's active workers, changed while it runs: the arena's threads beyond `active` wait
// in a task of their own, so the arena and the flow graph never need rebuilding.
#include <condition_variable>
#include <mutex>

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_scheduler_observer.h>

namespace gpufeed::pipeline::detail {

/// Parks arena threads: a thread that takes a park task blocks in it while at least `active`
/// other threads are in the arena, so about `active` threads take the loader's work. It counts
/// the threads in the arena (an observer), because oneTBB may give an arena fewer threads than
/// its concurrency, or take some away for another arena: a park task never leaves fewer than
/// `active` threads working, and a parked thread leaves as soon as too few are. A park task that
/// has not started yet takes effect when a thread is free, so lowering the count never
/// interrupts work in progress.
///
/// Every wait inside the arena (a parallel loop in a task, a graph's wait_for_all) must be
/// isolated (this_task_arena::isolate): a waiting thread that took a park task would block with
/// its outer work on its stack. Thread-safe. Destroy it before the arena: the destructor
/// releases every parked thread and waits until no park task is left.
class WorkerGate : private oneapi::tbb::task_scheduler_observer {
 public:
  WorkerGate(oneapi::tbb::task_arena& arena, unsigned threads, unsigned active);
  WorkerGate(const WorkerGate&) = delete;
  WorkerGate& operator=(const WorkerGate&) = delete;
  ~WorkerGate() override;

  /// Clamped to [1, threads].
  void set_active(unsigned active);
  [[nodiscard]] unsigned active() const;
  [[nodiscard]] unsigned threads() const noexcept { return threads_; }

 private:
  void on_scheduler_entry(bool worker) override;
  void on_scheduler_exit(bool worker) override;
  void park();
  /// Queues a park task for each thread in the arena beyond `active` (mutex_ held).
  void top_up();

  oneapi::tbb::task_arena& arena_;
  const unsigned threads_;
  mutable std::mutex mutex_;
  std::condition_variable cv_;
  unsigned active_ = 1;
  unsigned present_ = 0;  // threads in the arena
  unsigned parked_ = 0;   // of them, blocked in park()
  unsigned queued_ = 0;   // park tasks enqueued and not started
  bool closing_ = false;
};

}  // namespace gpufeed::pipeline::detail
