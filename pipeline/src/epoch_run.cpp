#include <string>

#include "gpufeed/pipeline/errors.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "loader_core.hpp"

namespace gpufeed::detail {

namespace flow = oneapi::tbb::flow;

EpochRun::EpochRun(LoaderCore& core, std::uint64_t epoch)
    : core_(core),
      epoch_(epoch),
      order_(core.sampler.epoch_order(epoch)),
      num_batches_(core.batches_per_epoch),
      assemble_(graph_, flow::unlimited,
                [this](const Ticket& t) { return run_stage("read", t, &LoaderCore::assemble); }),
      normalize_(
          graph_, flow::unlimited,
          [this](const Ticket& t) { return run_stage("normalize", t, &LoaderCore::normalize); }),
      sequencer_(graph_, [](const Ticket& t) { return t.seq; }),
      deliver_(graph_, flow::serial, [this](const Ticket& t) {
        deliver(t);
        return flow::continue_msg();
      }) {
  flow::make_edge(assemble_, normalize_);
  flow::make_edge(normalize_, sequencer_);
  flow::make_edge(sequencer_, deliver_);
}

void EpochRun::feed() {
  std::lock_guard lock(feed_mutex_);
  while (next_to_feed_ < num_batches_ && !cancelled_.load(std::memory_order_acquire)) {
    Slot* slot = core_.pool.try_acquire();
    if (slot == nullptr) return;  // back-pressure: the next release feeds again
    core_.prepare(*slot, epoch_, next_to_feed_, order_);
    assemble_.try_put(Ticket{next_to_feed_, slot});
    ++next_to_feed_;
  }
}

Ticket EpochRun::run_stage(const char* stage, const Ticket& ticket,
                           void (LoaderCore::*work)(Slot&)) {
  if (cancelled_.load(std::memory_order_acquire)) return ticket;
  try {
    (core_.*work)(*ticket.slot);
  } catch (...) {
    fail(stage, ticket, std::current_exception());
  }
  return ticket;
}

void EpochRun::fail(const char* stage, const Ticket& ticket, std::exception_ptr error) {
  std::string what;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "unknown error";
  }
  auto wrapped = std::make_exception_ptr(PipelineError(what + " (" + stage + " stage, batch " +
                                                       std::to_string(ticket.seq) + " of epoch " +
                                                       std::to_string(epoch_) + ")"));
  std::lock_guard lock(mutex_);
  if (!error_) error_ = wrapped;
  cancelled_.store(true, std::memory_order_release);
  ready_cv_.notify_all();
}

void EpochRun::deliver(const Ticket& ticket) {
  if (cancelled_.load(std::memory_order_acquire)) {
    core_.pool.release(ticket.slot);
    return;
  }
  std::lock_guard lock(mutex_);
  ready_.push_back(ticket.slot);
  ready_cv_.notify_one();
}

Slot* EpochRun::next() {
  std::unique_lock lock(mutex_);
  const auto depth = static_cast<std::uint64_t>(ready_.size());
  core_.ready_sum_.fetch_add(depth, std::memory_order_relaxed);
  core_.ready_count_.fetch_add(1, std::memory_order_relaxed);
  std::uint64_t seen = core_.ready_max_.load(std::memory_order_relaxed);
  while (depth > seen && !core_.ready_max_.compare_exchange_weak(seen, depth)) {
  }
  if (!error_ && ready_.empty() && delivered_ < num_batches_ &&
      core_.consumer_held_.load() >= core_.pool.size()) {
    throw UsageError("all " + std::to_string(core_.pool.size()) +
                     " batch slots are held by the consumer; release batches before asking for "
                     "more, or raise --prefetch");
  }
  const std::int64_t t0 = profiler::now_ns();
  ready_cv_.wait(lock, [&] { return error_ || !ready_.empty() || delivered_ == num_batches_; });
  core_.counters.add(Stage::wait, profiler::now_ns() - t0);
  if (error_) std::rethrow_exception(error_);
  if (ready_.empty()) return nullptr;
  Slot* slot = ready_.front();
  ready_.pop_front();
  ++delivered_;
  return slot;
}

void EpochRun::cancel_and_wait() {
  {
    std::lock_guard lock(feed_mutex_);
    cancelled_.store(true, std::memory_order_release);
  }
  graph_.wait_for_all();
  std::lock_guard lock(mutex_);
  for (Slot* slot : ready_) core_.pool.release(slot);
  ready_.clear();
}

}  // namespace gpufeed::detail
