#include "delivery_counters.hpp"

#include "gpufeed/profiler/clock.hpp"

namespace gpufeed::pipeline::detail {

void DeliveryCounters::note_ready_depth(std::int64_t depth) noexcept {
  if (depth < 0) return;
  const auto d = static_cast<std::uint64_t>(depth);
  ready_sum_.fetch_add(d, std::memory_order_relaxed);
  ready_count_.fetch_add(1, std::memory_order_relaxed);
  ready_last_.store(d, std::memory_order_relaxed);
  std::uint64_t seen = ready_max_.load(std::memory_order_relaxed);
  while (d > seen && !ready_max_.compare_exchange_weak(seen, d)) {
  }
}

void DeliveryCounters::note_delivery(std::uint32_t samples, bool echoed) noexcept {
  batches_.fetch_add(1, std::memory_order_relaxed);
  samples_.fetch_add(samples, std::memory_order_relaxed);
  (echoed ? echoed_ : fresh_).fetch_add(1, std::memory_order_relaxed);
}

void DeliveryCounters::fill(LoaderStats& s) const {
  s.wall_ns = profiler::now_ns() - start_ns_.load();
  s.batches = batches_.load();
  s.samples = samples_.load();
  s.fresh_batches = fresh_.load();
  s.echoed_batches = echoed_.load();
  const std::uint64_t asks = ready_count_.load();
  s.mean_ready_batches =
      asks ? static_cast<double>(ready_sum_.load()) / static_cast<double>(asks) : 0.0;
  s.max_ready_batches = ready_max_.load();
  s.ready_batches = ready_last_.load(std::memory_order_relaxed);
}

void DeliveryCounters::reset() noexcept {
  for (std::atomic<std::uint64_t>* c : {&batches_, &samples_, &fresh_, &echoed_, &ready_sum_,
                                        &ready_count_, &ready_max_, &ready_last_}) {
    c->store(0);
  }
  start_ns_ = profiler::now_ns();
}

}  // namespace gpufeed::pipeline::detail
