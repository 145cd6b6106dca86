// Nanoseconds per scoped range. The recorder must be cheap enough to stay on in production:
// two clock reads and a handful of stores into the thread's ring, no locks, no allocation.
#include <benchmark/benchmark.h>

#include <nvtx3/nvtx3.hpp>

#include "gpufeed/profiler/range.hpp"
#include "gpufeed/profiler/recorder.hpp"

namespace {

using gpufeed::profiler::Recorder;

const gpufeed::profiler::RangeSite& site() {
  static const gpufeed::profiler::RangeSite s{"decode"};
  return s;
}

// Opens and closes one `Range` made from `args` an iteration.
template <typename Range, typename... Args>
void time_ranges(benchmark::State& state, const Args&... args) {
  for (auto _ : state) {
    const Range range{args...};
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_RecorderRange(benchmark::State& state) {
  Recorder::global().set_enabled(true);
  time_ranges<gpufeed::profiler::RecorderRange>(state, site().id());
}
BENCHMARK(BM_RecorderRange)->ThreadRange(1, 2);

void BM_NvtxAndRecorderRange(benchmark::State& state) {
  Recorder::global().set_enabled(true);
  time_ranges<gpufeed::profiler::ScopedRange>(state, site());
}
BENCHMARK(BM_NvtxAndRecorderRange)->ThreadRange(1, 2);

void BM_MacroRangeRecorderDisabled(benchmark::State& state) {
  Recorder::global().set_enabled(false);
  for (auto _ : state) {
    GPUFEED_RANGE("decode");
    benchmark::ClobberMemory();
  }
  Recorder::global().set_enabled(true);
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_MacroRangeRecorderDisabled);

void BM_NvtxOnlyRange(benchmark::State& state) {
  time_ranges<nvtx3::scoped_range_in<gpufeed::profiler::Domain>>(state, site().nvtx_name());
}
BENCHMARK(BM_NvtxOnlyRange);

void BM_ClockRead(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(gpufeed::profiler::now_ns());
}
BENCHMARK(BM_ClockRead);

}  // namespace
