// A DataLoader pool: what a trace shows of one, its bottleneck in its own terms, and the
// advice on a report fresh from the profiler.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "../profiler/synthetic_timeline.hpp"
#include "gpufeed/diagnosis/input_pool.hpp"
#include "gpufeed/diagnosis/recommend.hpp"
#include "gpufeed/profiler/kineto_trace.hpp"

namespace gpufeed::diagnosis {
namespace {

using profiler::GapCause;
using profiler::GapReport;
using profiler::KinetoTrace;
using profiler::PipelineFacts;
using profiler::Recommendation;
using profiler::testing::report_with;

TEST(KinetoDataLoader, ASingleProcessLoadersFetchesAreItsInputPool) {
  // num_workers=0: the batch is made inside __next__ (the dataset's items, then collate's
  // aten::stack); a worker-process DataLoader's fetches are not in the trace at all.
  const std::string single = R"json([
    {"ph": "X", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": "CPU functions", "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "name": "aten::stack", "pid": "CPU functions", "tid": 1, "ts": 80, "dur": 15},
    {"ph": "X", "name": "aten::stack", "pid": "CPU functions", "tid": 2, "ts": 80, "dur": 15},
    {"ph": "X", "name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": "CPU functions", "tid": 1, "ts": 300, "dur": 120},
    {"ph": "X", "name": "aten::stack", "pid": "CPU functions", "tid": 1, "ts": 400, "dur": 5},
    {"ph": "X", "name": "aten::addmm", "pid": "CPU functions", "tid": 1, "ts": 150, "dur": 100}
  ])json";
  const auto pool = single_process_dataloader(KinetoTrace::parse(single).timeline);
  ASSERT_TRUE(pool.has_value());
  EXPECT_EQ(pool->workers, 0u);
  EXPECT_EQ(pool->batches, 2u);
  EXPECT_EQ(pool->fetch_ns, 220'000);
  EXPECT_EQ(pool->collate_ns, 20'000);  // the other thread's stack is not this loader's
  EXPECT_EQ(pool->samples, 0u);         // not in a trace
  const std::string workers = R"json([
    {"ph": "X", "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "pid": "CPU functions", "tid": 1, "ts": 0, "dur": 100}
  ])json";
  EXPECT_FALSE(single_process_dataloader(KinetoTrace::parse(workers).timeline).has_value());
}

/// A pool of 10 batches of 80 samples whose fetches cost `fetch_ns`, `collate_ns` of it collate.
InputPoolFacts pool_of(std::int64_t fetch_ns, std::int64_t collate_ns) {
  InputPoolFacts pool;
  pool.batches = 10;
  pool.samples = 80;
  pool.fetch_ns = fetch_ns;
  pool.collate_ns = collate_ns;
  return pool;
}

TEST(PoolBottleneck, TheCostlierPartOfAFetchInTheDataLoadersTerms) {
  GapReport r = report_with(30, 60, 10);
  name_pool_bottleneck(r, pool_of(10'000'000, 2'000'000));
  EXPECT_EQ(r.bottleneck_stage, "dataset");
  EXPECT_EQ(r.bottleneck_basis, "the dataset's __getitem__, 0.10 ms a sample");
  r = report_with(30, 60, 10);
  name_pool_bottleneck(r, pool_of(10'000'000, 8'000'000));
  EXPECT_EQ(r.bottleneck_stage, "collate");
  EXPECT_EQ(r.bottleneck_basis, "the DataLoader's collate_fn, 0.80 ms a batch");
  r = report_with(30, 60, 10);
  InputPoolFacts traced = pool_of(10'000'000, 2'000'000);
  traced.samples = 0;  // a trace: the samples in a batch are not in it
  name_pool_bottleneck(r, traced);
  EXPECT_EQ(r.bottleneck_basis, "the dataset's __getitem__, 0.80 ms a batch");
}

TEST(PoolBottleneck, AStageTheProfileNamedStaysAndAnEmptyPoolSaysNothing) {
  GapReport r = report_with(30, 60, 10);
  r.bottleneck_stage = "read";
  r.bottleneck_basis = "input_wait";
  name_pool_bottleneck(r, pool_of(10'000'000, 2'000'000));
  EXPECT_EQ(r.bottleneck_stage, "read");
  EXPECT_EQ(r.bottleneck_basis, "input_wait");
  r = report_with(30, 60, 10);
  name_pool_bottleneck(r, InputPoolFacts{});
  EXPECT_EQ(r.bottleneck_stage, "");
  EXPECT_EQ(r.bottleneck_basis, "");
}

TEST(Advise, TheProfilerMeasuresAndTheDiagnosisAdvises) {
  profiler::testing::LoopSpec spec;
  spec.sync_every = 3;
  GapReport r = profiler::analyze(profiler::testing::training_loop(spec));
  EXPECT_TRUE(r.recommendations.empty());  // the profiler does not advise
  ASSERT_GT(r.idle_ns[GapCause::host_sync], 0);
  advise(r, {});
  ASSERT_FALSE(r.recommendations.empty());
  bool has_sync_advice = false;
  for (const Recommendation& rec : r.recommendations) has_sync_advice |= rec.kind == "host_sync";
  EXPECT_TRUE(has_sync_advice);
}

TEST(Advise, ADataLoaderPoolNamesTheBottleneckBeforeItsRules) {
  GapReport r = report_with(30, 60, 10);
  r.steps = 10;
  PipelineFacts facts;
  facts.loader_settings = false;
  InputPoolFacts pool = pool_of(60, 10);
  pool.cores = 8;
  advise(r, facts, pool);
  EXPECT_EQ(r.bottleneck_stage, "dataset");
  ASSERT_FALSE(r.recommendations.empty());
  EXPECT_EQ(r.recommendations[0].kind, "num_workers");
  GapReport empty;  // no window: nothing measured, no bottleneck to name
  advise(empty, facts, pool);
  EXPECT_EQ(empty.bottleneck_stage, "");
}

}  // namespace
}  // namespace gpufeed::diagnosis
