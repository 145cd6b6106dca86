#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "gpufeed/pipeline/errors.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range.hpp"
#include "loader_core.hpp"

namespace gpufeed::detail {

namespace flow = oneapi::tbb::flow;
using Clock = std::chrono::steady_clock;

TestHooks test_hooks;

namespace {

/// How long every slot may stay held elsewhere, with nothing in flight, before next() calls it
/// a deadlock; and how often it looks again meanwhile.
constexpr auto kStarvedGrace = std::chrono::seconds(1);
constexpr auto kStarvedPoll = std::chrono::milliseconds(20);

}  // namespace

EpochRun::EpochRun(LoaderCore& core, std::uint64_t epoch, const EpochPlan& plan)
    : core_(core),
      epoch_(epoch),
      order_(core.sampler.epoch_order(epoch, plan.closed, plan.start)),
      num_batches_(core.batches_for(order_.size())),
      index_base_(plan.start / core.options.batch_size),
      replay_(plan.replay),
      echoes_done_(plan.echoes_done),
      echo_(core.echo),
      assemble_(graph_, flow::unlimited,
                [this](const Ticket& t) {
                  // An encoded layout's samples are read and decoded in this one stage.
                  return run_stage(stage_name(core_.image_samples ? Stage::decode : Stage::read), t,
                                   &LoaderCore::assemble);
                }),
      normalize_(graph_, flow::unlimited,
                 [this](const Ticket& t) {
                   return run_stage(stage_name(Stage::normalize), t, &LoaderCore::normalize);
                 }),
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
    // Back-pressure (every slot, or the prefetch depth's worth, in use): the next release, or
    // a deeper prefetch, feeds again.
    Slot* slot = core_.pool.try_acquire(core_.slot_limit());
    if (slot == nullptr) return;
    run_hook(test_hooks.slot_taken);
    core_.prepare(*slot, epoch_, next_to_feed_, index_base_ + next_to_feed_, order_);
    slot->refs.store(1, std::memory_order_relaxed);  // the graph's, handed to the consumer
    in_flight_.fetch_add(1);
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
  run_hook(test_hooks.delivering);
  {
    std::lock_guard lock(mutex_);
    in_flight_.fetch_sub(1);
    if (cancelled_.load(std::memory_order_acquire)) {
      core_.pool.release(ticket.slot);
    } else {
      ready_.push_back(ticket.slot);
    }
    ready_cv_.notify_one();
  }
  run_hook(test_hooks.delivered);
}

bool EpochRun::starved() {
  // feed() takes a slot from the pool and counts it in flight under feed_mutex_: without it, a
  // slot released on another thread could be seen in neither place. Lock order: mutex_, then
  // feed_mutex_ (a release inside next() feeds with mutex_ held too).
  std::lock_guard lock(feed_mutex_);
  const std::uint32_t free = core_.pool.available();
  return ready_.empty() && in_flight_.load() == 0 &&
         (free == 0 || core_.pool.size() - free >= core_.slot_limit());
}

Clock::time_point EpochRun::check_not_starved(Clock::time_point now) {
  if (!starved()) {
    starved_since_.reset();
    return Clock::time_point::max();
  }
  // A slot held by another thread (a tensor freed by an autograd or Python thread) may be on
  // its way back; only a state that lasts is a consumer that will never release.
  if (!starved_since_) starved_since_ = now;
  if (now - *starved_since_ >= kStarvedGrace) {
    throw OptionError("prefetch", "all " + std::to_string(core_.slot_limit()) +
                                      " batch slots are held by the consumer; release batches "
                                      "before asking for more, or raise {prefetch}");
  }
  return now + kStarvedPoll;
}

void EpochRun::drop_echo_hold() {
  if (current_ != nullptr) core_.release_ref(std::exchange(current_, nullptr));
}

Delivery EpochRun::next(Deadline deadline) {
  GPUFEED_RANGE(stage_name(
      Stage::wait));  // the consumer blocked on the loader: what input_wait gaps are made of
  std::unique_lock lock(mutex_);
  // A call that resumes a timed-out one is the same request: its queue depth is counted once.
  if (!std::exchange(resumed_, false)) core_.note_ready_depth(ready_.size());
  const std::int64_t t0 = profiler::now_ns();
  for (;;) {
    if (error_) std::rethrow_exception(error_);
    const auto action = echo_.next_action(!ready_.empty(), delivered_ < num_batches_);
    if (action == EchoStage::Action::wait) {
      const Clock::time_point now = Clock::now();
      if (deadline && now >= *deadline) {
        core_.counters.add(Stage::wait, profiler::now_ns() - t0, 0);
        resumed_ = true;
        return {nullptr, false, true};
      }
      const Clock::time_point until =
          std::min(check_not_starved(now), deadline.value_or(Clock::time_point::max()));
      if (until == Clock::time_point::max()) {
        ready_cv_.wait(lock);
      } else {
        ready_cv_.wait_until(lock, until);
      }
      continue;
    }
    starved_since_.reset();
    core_.counters.add(Stage::wait, profiler::now_ns() - t0);
    if (action == EchoStage::Action::end) {
      drop_echo_hold();
      echo_.reset();
      return {};
    }
    if (action == EchoStage::Action::echo) {
      echo_.delivered_echo();
      Slot* slot = current_;
      if (core_.reaugments_echoes()) {
        // Only the echo stage's hold left: no delivery of this batch is in the consumer's
        // hands, so it can show the new repeat itself; else the echo slot does, if it is free.
        // With both held, the echo repeats the batch unchanged.
        Slot* target = slot->refs.load() == 1 ? slot : core_.echo_pool.try_acquire();
        if (target != nullptr) {
          reaugment_unlocked(lock, *target);
          slot = target;
        }
      }
      slot->refs.fetch_add(1);
      if (!echo_.holds_current()) drop_echo_hold();
      return {slot, true};
    }
    Slot* slot = ready_.front();
    ready_.pop_front();
    ++delivered_;
    drop_echo_hold();
    echo_.delivered_fresh();
    if (replay_) {
      // Delivered before a restart, with echoes_done_ of its echoes: only the rest follow.
      for (std::uint32_t r = 0; r < echoes_done_; ++r) echo_.delivered_echo();
      replay_ = false;
      if (echo_.holds_current()) {
        current_ = slot;  // the graph's reference becomes the echo stage's hold
      } else {
        core_.release_ref(slot);
      }
      continue;
    }
    if (echo_.holds_current()) {
      slot->refs.fetch_add(1);
      current_ = slot;
    }
    return {slot, false};
  }
}

void EpochRun::reaugment_unlocked(std::unique_lock<std::mutex>& lock, Slot& target) {
  // Normalizing a whole batch (or waiting for the device) must not hold up the workers'
  // deliveries; only this thread and cancel_and_wait() touch current_, and cancel waits.
  reaugmenting_ = true;
  lock.unlock();
  std::exception_ptr error;
  try {
    run_hook(test_hooks.reaugmenting);
    core_.reaugment(*current_, target, echo_.echoes_of_current());
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  reaugmenting_ = false;
  ready_cv_.notify_all();
  if (error) {
    if (target.echo_target) core_.echo_pool.release(&target);
    std::rethrow_exception(error);
  }
}

void EpochRun::cancel_and_wait() {
  {
    std::lock_guard lock(feed_mutex_);
    cancelled_.store(true, std::memory_order_release);
  }
  graph_.wait_for_all();
  std::unique_lock lock(mutex_);
  ready_cv_.wait(lock, [this] { return !reaugmenting_; });
  for (Slot* slot : ready_) core_.pool.release(slot);
  ready_.clear();
  drop_echo_hold();
}

}  // namespace gpufeed::detail
