#include "worker_gate.hpp"

#include <algorithm>

namespace gpufeed::pipeline::detail {

WorkerGate::WorkerGate(oneapi::tbb::task_arena& arena, unsigned threads, unsigned active)
    : oneapi::tbb::task_scheduler_observer(arena),
      arena_(arena),
      threads_(std::max(1u, threads)),
      active_(std::clamp(active, 1u, threads_)) {
  observe(true);
}

WorkerGate::~WorkerGate() {
  {
    std::unique_lock lock(mutex_);
    closing_ = true;
    cv_.notify_all();
    // A park task that has not started yet sees closing_ and returns at once.
    cv_.wait(lock, [this] { return parked_ == 0 && queued_ == 0; });
  }
  observe(false);
}

void WorkerGate::set_active(unsigned active) {
  std::lock_guard lock(mutex_);
  active_ = std::clamp(active, 1u, threads_);
  top_up();
  cv_.notify_all();  // parked threads beyond the count leave
}

unsigned WorkerGate::active() const {
  std::lock_guard lock(mutex_);
  return active_;
}

void WorkerGate::on_scheduler_entry(bool) {
  std::lock_guard lock(mutex_);
  ++present_;
  top_up();
}

void WorkerGate::on_scheduler_exit(bool) {
  std::lock_guard lock(mutex_);
  if (present_ > 0) --present_;  // a thread that was in the arena before the gate observed it
  cv_.notify_all();              // one thread fewer: a parked one may have to work again
}

void WorkerGate::top_up() {
  if (closing_) return;
  const unsigned working = present_ > parked_ ? present_ - parked_ : 0;
  while (working > active_ + queued_) {
    ++queued_;
    arena_.enqueue([this] { park(); });
  }
}

void WorkerGate::park() {
  std::unique_lock lock(mutex_);
  --queued_;
  // This thread is one of present_ - parked_ working threads; it parks only when the others
  // are enough.
  if (closing_ || present_ - parked_ <= active_) {
    cv_.notify_all();
    return;
  }
  ++parked_;
  cv_.wait(lock, [this] { return closing_ || present_ - parked_ < active_; });
  --parked_;
  cv_.notify_all();
}

}  // namespace gpufeed::pipeline::detail
