#pragma once
// One epoch: the flow graph that fills batch slots and the in-order queue the consumer pops.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <optional>
#include <vector>

#include <oneapi/tbb/flow_graph.h>

#include "gpufeed/pipeline/echo.hpp"
#include "slot_pool.hpp"
#include "stage_work.hpp"

namespace gpufeed::pipeline::detail {

/// A batch travelling through the graph: its position in the epoch and the slot it fills.
struct Ticket {
  std::uint64_t seq = 0;
  Slot* slot = nullptr;
};

/// What the consumer gets from EpochRun::next(): a slot (null at the end of the epoch, or when
/// the wait timed out), whether it is an echo of a batch delivered before, and what the wait
/// for it was.
struct Delivery {
  Slot* slot = nullptr;
  bool echoed = false;
  bool timed_out = false;         ///< no batch before the deadline; the epoch goes on
  std::int64_t wait_ns = 0;       ///< the consumer blocked this long
  std::int64_t ready_depth = -1;  ///< batches ready when it asked (-1: a timed-out ask resumed)
};

using Deadline = std::optional<std::chrono::steady_clock::time_point>;

/// What one epoch delivers: this rank's samples in order from where the epoch starts.
struct EpochSpec {
  std::uint64_t epoch = 0;
  std::vector<std::uint64_t> order;
  std::uint64_t batches = 0;     ///< fresh batches `order` makes (its last may be short)
  std::uint64_t index_base = 0;  ///< the epoch's batch index of order's first batch
  /// The first batch was delivered before a restart, with `echoes_done` of its echoes: it is
  /// not delivered fresh again, only its remaining echoes.
  bool replay = false;
  std::uint32_t echoes_done = 0;
  EchoOptions echo;
};

/// One epoch: a flow graph (assemble -> normalize -> sequencer -> deliver) built in the
/// loader's arena, fed one ticket per free slot, and the in-order queue the consumer pops. It
/// sees only the stage work and the slots.
///
/// Cancelling sets a flag the node bodies check; tickets still flow to `deliver`, which returns
/// their slots, so nothing is lost and wait() returns after at most one batch of work per
/// worker. Thread-safe: feed() from any thread, next() from the consumer. Construct it inside
/// the arena the graph's tasks are to run in.
class EpochRun {
 public:
  EpochRun(StageWork& work, Slots& slots, EpochSpec spec);
  EpochRun(const EpochRun&) = delete;
  EpochRun& operator=(const EpochRun&) = delete;

  /// Starts a batch in every free slot the limit allows (up to the end of the epoch).
  void feed();
  /// The next batch in order (fresh or echoed), with one reference taken for the caller; a
  /// null slot at the end of the epoch, or a timed-out delivery when `deadline` passes first.
  /// Rethrows a worker's failure as PipelineError; UsageError when every slot has been held
  /// elsewhere, with nothing in flight, for longer than a grace period (slots released on other
  /// threads, such as tensors freed by an autograd thread, come back within it).
  Delivery next(Deadline deadline = std::nullopt);
  /// Stops the work and waits for the workers to leave the graph and for a re-augment that
  /// next() is doing on another thread.
  void cancel_and_wait();
  /// Fresh batches this run delivers (a batch replayed for its echoes does not count).
  [[nodiscard]] std::uint64_t fresh_batches() const { return num_batches_ - (replay_ ? 1 : 0); }

 private:
  using Node = oneapi::tbb::flow::function_node<Ticket, Ticket>;
  void fail(Stage stage, const Ticket& ticket, std::exception_ptr error);
  Ticket run_stage(Stage stage, const Ticket& ticket, void (StageWork::*work)(Slot&));
  void deliver(const Ticket& ticket);
  /// Drops a reference this run holds; a slot that comes free feeds the graph.
  void release(Slot* slot);
  /// Every slot is held outside the graph (by the consumer or for echoing). Takes feed_mutex_,
  /// so that a slot between the pool and the graph is never missed; call with mutex_ held.
  [[nodiscard]] bool starved();
  /// Throws once starved() has held for the whole grace period; else when to look again.
  std::chrono::steady_clock::time_point check_not_starved(
      std::chrono::steady_clock::time_point now);
  void drop_echo_hold();
  /// Re-augments current_ into `target` with mutex_ (held by `lock`) released meanwhile.
  void reaugment_unlocked(std::unique_lock<std::mutex>& lock, Slot& target);

  StageWork& work_;
  Slots& slots_;
  const std::uint64_t epoch_;
  const std::vector<std::uint64_t> order_;
  const std::uint64_t num_batches_;
  const std::uint64_t index_base_;
  bool replay_;  // EpochSpec::replay, until the first batch
  const std::uint32_t echoes_done_;

  std::mutex feed_mutex_;
  std::uint64_t next_to_feed_ = 0;

  std::atomic<bool> cancelled_{false};
  std::mutex mutex_;
  std::condition_variable ready_cv_;
  std::deque<Slot*> ready_;
  std::uint64_t delivered_ = 0;              // fresh batches handed to the consumer
  std::atomic<std::uint32_t> in_flight_{0};  // fed into the graph, not yet ready
  std::exception_ptr error_;
  std::optional<std::chrono::steady_clock::time_point> starved_since_;
  bool resumed_ = false;  // the last next() timed out: this call continues the same request
  EchoStage echo_;
  Slot* current_ = nullptr;    // the last fresh batch, while the echo stage may repeat it
  bool reaugmenting_ = false;  // next() works on current_ without mutex_; cancel waits for it

  oneapi::tbb::flow::graph graph_;
  Node assemble_;
  Node normalize_;
  oneapi::tbb::flow::sequencer_node<Ticket> sequencer_;
  oneapi::tbb::flow::function_node<Ticket, oneapi::tbb::flow::continue_msg> deliver_;
};

}  // namespace gpufeed::pipeline::detail
