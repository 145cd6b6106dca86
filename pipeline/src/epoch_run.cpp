#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "epoch_run.hpp"

#include "gpufeed/base/errors.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/range.hpp"
#include "hooks.hpp"

namespace gpufeed::pipeline::detail {

namespace flow = oneapi::tbb::flow;
using Clock = std::chrono::steady_clock;

TestHooks test_hooks;

namespace {

/// How long every slot may stay held elsewhere, with nothing in flight, before next() calls it
/// a deadlock; and how often it looks again meanwhile.
constexpr auto kStarvedGrace = std::chrono::seconds(1);
constexpr auto kStarvedPoll = std::chrono::milliseconds(20);

}  // namespace

EpochRun::EpochRun(StageWork& work, Slots& slots, EpochSpec spec)
    : work_(work),
      slots_(slots),
      epoch_(spec.epoch),
      order_(std::move(spec.order)),
      num_batches_(spec.batches),
      index_base_(spec.index_base),
      replay_(spec.replay),
      echoes_done_(spec.echoes_done),
      echo_(spec.echo),
      assemble_(graph_, flow::unlimited,
                [this](const Ticket& t) {
                  // An encoded layout's samples are read and decoded in this one stage.
                  return run_stage(work_.first_stage(), t, &StageWork::assemble);
                }),
      normalize_(graph_, flow::unlimited,
                 [this](const Ticket& t) {
                   return run_stage(Stage::normalize, t, &StageWork::normalize);
                 }),
      sequencer_(graph_, [](const Ticket& t) { return t.seq; }),
      deliver_(graph_, flow::serial, [this](const Ticket& t) {
        deliver(t);
        return flow::continue_msg();
      }) {
  flow::make_edge(assemble_, normalize_);
  flow::make_edge(normalize_, sequencer_);
  flow::make_edge(sequencer_, deliver_);
  work_.plan_reads(order_);
}

void EpochRun::feed() {
  std::lock_guard lock(feed_mutex_);
  while (next_to_feed_ < num_batches_ && !cancelled_.load(std::memory_order_acquire)) {
    // Back-pressure (every slot, or the prefetch depth's worth, in use): the next release, or
    // a deeper prefetch, feeds again.
    Slot* slot = slots_.acquire();
    if (slot == nullptr) return;
    run_hook(test_hooks.slot_taken);
    work_.prepare(*slot, epoch_, next_to_feed_, index_base_ + next_to_feed_, order_);
    slot->refs.store(1, std::memory_order_relaxed);  // the graph's, handed to the consumer
    in_flight_.fetch_add(1);
    assemble_.try_put(Ticket{next_to_feed_, slot});
    ++next_to_feed_;
  }
}

Ticket EpochRun::run_stage(Stage stage, const Ticket& ticket, void (StageWork::*work)(Slot&)) {
  if (cancelled_.load(std::memory_order_acquire)) return ticket;
  try {
    (work_.*work)(*ticket.slot);
  } catch (...) {
    fail(stage, ticket, std::current_exception());
  }
  return ticket;
}

void EpochRun::fail(Stage stage, const Ticket& ticket, std::exception_ptr error) {
  std::string what;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    what = e.what();
  } catch (...) {
    what = "unknown error";
  }
  auto wrapped = std::make_exception_ptr(
      PipelineError(what + " (" + stage_name(stage) + " stage, batch " +
                    std::to_string(ticket.seq) + " of epoch " + std::to_string(epoch_) + ")"));
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
      slots_.batches.release(ticket.slot);
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
  return ready_.empty() && in_flight_.load() == 0 && slots_.all_in_use();
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
    throw OptionError("prefetch", "all " + std::to_string(slots_.limit.load()) +
                                      " batch slots are held by the consumer; release batches "
                                      "before asking for more, or raise {prefetch}");
  }
  return now + kStarvedPoll;
}

void EpochRun::release(Slot* slot) {
  if (slots_.unref(slot)) feed();
}

void EpochRun::drop_echo_hold() {
  if (current_ != nullptr) release(std::exchange(current_, nullptr));
}

Delivery EpochRun::next(Deadline deadline) {
  // The consumer blocked on the loader: what input_wait gaps are made of.
  GPUFEED_RANGE(stage_name(Stage::wait));
  std::unique_lock lock(mutex_);
  // A call that resumes a timed-out one is the same request: its queue depth is counted once.
  const std::int64_t depth =
      std::exchange(resumed_, false) ? -1 : static_cast<std::int64_t>(ready_.size());
  const std::int64_t t0 = profiler::now_ns();
  std::int64_t waited = 0;  // until the echo stage could act (a re-augment is not waiting)
  const auto done = [&](Slot* slot, bool echoed) {
    return Delivery{slot, echoed, false, waited, depth};
  };
  for (;;) {
    if (error_) std::rethrow_exception(error_);
    const auto action = echo_.next_action(!ready_.empty(), delivered_ < num_batches_);
    if (action == EchoStage::Action::wait) {
      const Clock::time_point now = Clock::now();
      if (deadline && now >= *deadline) {
        resumed_ = true;
        return {nullptr, false, true, profiler::now_ns() - t0, depth};
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
    waited = profiler::now_ns() - t0;
    if (action == EchoStage::Action::end) {
      drop_echo_hold();
      echo_.reset();
      return done(nullptr, false);
    }
    if (action == EchoStage::Action::echo) {
      echo_.delivered_echo();
      Slot* slot = current_;
      if (work_.reaugments_echoes()) {
        // Only the echo stage's hold left: no delivery of this batch is in the consumer's
        // hands, so it can show the new repeat itself; else the echo slot does, if it is free.
        // With both held, the echo repeats the batch unchanged.
        Slot* target = slot->refs.load() == 1 ? slot : slots_.echoes.try_acquire();
        if (target != nullptr) {
          reaugment_unlocked(lock, *target);
          slot = target;
        }
      }
      slot->refs.fetch_add(1);
      if (!echo_.holds_current()) drop_echo_hold();
      return done(slot, true);
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
        release(slot);
      }
      continue;
    }
    if (echo_.holds_current()) {
      slot->refs.fetch_add(1);
      current_ = slot;
    }
    return done(slot, false);
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
    work_.reaugment(*current_, target, echo_.echoes_of_current());
  } catch (...) {
    error = std::current_exception();
  }
  lock.lock();
  reaugmenting_ = false;
  ready_cv_.notify_all();
  if (error) {
    if (target.echo_target) slots_.echoes.release(&target);
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
  for (Slot* slot : ready_) slots_.batches.release(slot);
  ready_.clear();
  drop_echo_hold();
}

}  // namespace gpufeed::pipeline::detail
