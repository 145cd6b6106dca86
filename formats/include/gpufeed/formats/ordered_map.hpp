#pragma once
// An ordered parallel map over the items 0..count-1: a oneTBB parallel_pipeline whose input is
// serial and in order, whose work runs on `threads` threads at once, and whose consumer is
// serial and sees the results in item order (one writer). At most 4 * threads items are in
// flight, so memory stays bounded whatever `count` is. An exception from `work` or `consume`
// stops the pipeline and comes out of ordered_parallel_map(), with nothing left behind.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <optional>
#include <thread>
#include <type_traits>
#include <utility>

#include <oneapi/tbb/parallel_pipeline.h>
#include <oneapi/tbb/task_arena.h>

namespace gpufeed::formats {

/// `threads` as asked, or every core for 0.
inline unsigned resolve_threads(unsigned threads) {
  return threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency());
}

/// Calls `work(i)` for every i in [0, count) on up to `threads` threads (0: all cores) and
/// `consume(i, result)` for each in order of i, one call at a time.
///
/// An exception is not thrown through the pipeline: oneTBB cancels a pipeline that throws
/// without destroying the items between its filters. The first error stops the input instead,
/// the items in flight drain through the filters without being worked on or consumed, and the
/// error is rethrown once the pipeline has ended.
template <class Work, class Consume>
void ordered_parallel_map(std::uint64_t count, unsigned threads, Work&& work, Consume&& consume) {
  using Result = std::invoke_result_t<Work&, std::uint64_t>;
  struct Item {
    std::uint64_t index = 0;
    std::optional<Result> result;
    std::exception_ptr error;
  };
  const unsigned workers = resolve_threads(threads);
  std::uint64_t next = 0;
  std::atomic<bool> failed{false};
  std::exception_ptr first_error;  // written by the serial consumer only
  oneapi::tbb::task_arena arena(static_cast<int>(workers), 1);
  arena.execute([&] {
    oneapi::tbb::parallel_pipeline(
        4 * workers, oneapi::tbb::make_filter<void, std::uint64_t>(
                         oneapi::tbb::filter_mode::serial_in_order,
                         [&](oneapi::tbb::flow_control& fc) -> std::uint64_t {
                           if (next == count || failed.load(std::memory_order_relaxed)) {
                             fc.stop();
                             return 0;
                           }
                           return next++;
                         }) &
                         oneapi::tbb::make_filter<std::uint64_t, Item>(
                             oneapi::tbb::filter_mode::parallel,
                             [&](std::uint64_t i) {
                               Item item;
                               item.index = i;
                               if (failed.load(std::memory_order_relaxed)) return item;
                               try {
                                 item.result.emplace(work(i));
                               } catch (...) {
                                 item.error = std::current_exception();
                               }
                               return item;
                             }) &
                         oneapi::tbb::make_filter<Item, void>(
                             oneapi::tbb::filter_mode::serial_in_order, [&](Item item) {
                               if (first_error) return;
                               try {
                                 if (item.error) std::rethrow_exception(item.error);
                                 consume(item.index, std::move(*item.result));
                               } catch (...) {
                                 first_error = std::current_exception();
                                 failed.store(true, std::memory_order_relaxed);
                               }
                             }));
  });
  if (first_error) std::rethrow_exception(first_error);
}

}  // namespace gpufeed::formats
