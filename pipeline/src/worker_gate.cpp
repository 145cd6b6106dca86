#include "worker_gate.hpp"

#include <algorithm>

namespace gpufeed::detail {

WorkerGate::WorkerGate(oneapi::tbb::task_arena& arena, unsigned threads, unsigned active)
    : arena_(arena), threads_(std::max(1u, threads)) {
  set_active(active);
}

WorkerGate::~WorkerGate() {
  std::unique_lock lock(mutex_);
  closing_ = true;
  cv_.notify_all();
  // A park task that has not started yet sees closing_ and returns at once.
  cv_.wait(lock, [this] { return tasks_ == 0; });
}

void WorkerGate::set_active(unsigned active) {
  std::lock_guard lock(mutex_);
  want_parked_ = threads_ - std::clamp(active, 1u, threads_);
  while (tasks_ < want_parked_) {
    ++tasks_;
    arena_.enqueue([this] { park(); });
  }
  cv_.notify_all();  // parked threads beyond want_parked_ leave
}

unsigned WorkerGate::active() const {
  std::lock_guard lock(mutex_);
  return threads_ - want_parked_;
}

void WorkerGate::park() {
  std::unique_lock lock(mutex_);
  cv_.wait(lock, [this] { return closing_ || tasks_ > want_parked_; });
  --tasks_;
  cv_.notify_all();
}

}  // namespace gpufeed::detail
