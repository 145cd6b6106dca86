// A DataLoader pool's rules: workers for what a batch costs, packing the dataset, persistent
// workers and pinned batches, against a step that may share the cores.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "../profiler/synthetic_timeline.hpp"
#include "gpufeed/diagnosis/recommend.hpp"

namespace gpufeed::diagnosis {
namespace {

using profiler::GapReport;
using profiler::PipelineFacts;
using profiler::Recommendation;
using profiler::testing::report_with;

/// What recommend() reads of a run fed by a DataLoader: the pipeline's facts and the pool's.
struct PoolFacts {
  PipelineFacts pipeline;
  std::optional<InputPoolFacts> input_pool;
};

std::vector<Recommendation> recommend(const GapReport& report, const PoolFacts& facts) {
  return diagnosis::recommend(report, facts.pipeline, facts.input_pool);
}

/// A DataLoader's pool (no gpufeed loader) that made 10 batches of `samples` in all, its
/// fetches costing `fetch_ns` (collate 10 of it), on `cores` cores.
PoolFacts dataloader_pool(std::uint64_t samples, std::int64_t fetch_ns, unsigned cores) {
  PoolFacts facts;
  facts.pipeline.loader_settings = false;
  InputPoolFacts pool;
  pool.batches = 10;
  pool.samples = samples;
  pool.fetch_ns = fetch_ns;
  pool.collate_ns = 10;
  pool.cores = cores;
  facts.input_pool = pool;
  return facts;
}

TEST(Recommendation, ADataLoaderPoolGetsWorkersForWhatABatchCostsIt) {
  GapReport r = report_with(30, 60, 10);  // 10 steps: 3 busy, 4 without the wait, 10 with it
  r.steps = 10;
  // A batch costs one worker 6: two keep up with a period of 4.
  PoolFacts facts = dataloader_pool(80, 60, 8);
  auto recs = recommend(r, facts);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].kind, "num_workers");
  EXPECT_EQ(recs[0].action(), "DataLoader(num_workers=2)");
  ASSERT_EQ(recs[0].input_settings.size(), 1u);
  EXPECT_EQ(recs[0].input_settings[0].keyword, "num_workers");
  EXPECT_EQ(recs[0].input_settings[0].value, 2);
  EXPECT_DOUBLE_EQ(recs[0].predicted_device_util, 0.75);  // the step's 3 of the period's 4
  // Two cores leave one worker beside the loop: a batch every 6, and a cheaper dataset for
  // the rest.
  facts.input_pool->cores = 2;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].action(), "DataLoader(num_workers=1)");
  EXPECT_DOUBLE_EQ(recs[0].predicted_device_util, 0.5);
  EXPECT_NE(recs[0].predicted_effect.find("pack it once"), std::string::npos);
  // The dataset's items are the cost and the cores cannot keep up: pack it once. Without
  // gpufeed's rate on a sample, the effect is not modelled.
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[1].kind, "pack");
  EXPECT_EQ(recs[1].action(),
            "gpufeed.pack(dataset, \"train.h5\") once, then gpufeed.Loader(\"train.h5\", "
            "batch_size=8)");
  EXPECT_LT(recs[1].predicted_device_util, 0);
  EXPECT_NE(recs[1].reason.find("2 workers would keep up"), std::string::npos) << recs[1].reason;
  // A dataset with a transform: the advice keeps it, and says what runs where.
  facts.input_pool->pack_loader_keywords = ", transform=dataset.transform";
  facts.input_pool->pack_transform_note = "its transform: fused RandomResizedCrop(224)";
  EXPECT_EQ(recommend(r, facts)[1].action(),
            "gpufeed.pack(dataset, \"train.h5\") once, then gpufeed.Loader(\"train.h5\", "
            "batch_size=8, transform=dataset.transform)");
  EXPECT_NE(recommend(r, facts)[1].reason.find("; its transform: fused RandomResizedCrop(224)"),
            std::string::npos);
  facts.input_pool->pack_loader_keywords.clear();
  facts.input_pool->pack_transform_note.clear();
  facts.input_pool->pack_note = "its items are float32";
  EXPECT_NE(recommend(r, facts)[1].predicted_effect.find("not measured: its items are float32"),
            std::string::npos);
  // With gpufeed's measured rate (a batch of 8 in 2, within the period of 4): the step's 3 of
  // 4, ahead of one worker's 3 of 6.
  facts.input_pool->packed_samples_per_s = 4e9;
  facts.input_pool->packed_items = 64;
  facts.input_pool->packed_store = "jpeg";
  recs = recommend(r, facts);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kind, "pack");
  EXPECT_DOUBLE_EQ(recs[0].predicted_device_util, 0.75);
  EXPECT_NE(recs[0].action().find("store=\"jpeg\""), std::string::npos) << recs[0].action();
  EXPECT_NE(recs[0].reason.find("a packed sample of it (64 items) at 4000000000 samples/s"),
            std::string::npos)
      << recs[0].reason;
  // A rate no better than the workers', or collate as the cost: no pack advice.
  facts.input_pool->packed_samples_per_s = 1e9;  // a batch in 8: worse than the worker's 6
  EXPECT_EQ(recommend(r, facts).size(), 1u);
  facts.input_pool->packed_samples_per_s = 4e9;
  facts.input_pool->collate_ns = 40;
  EXPECT_EQ(recommend(r, facts).size(), 1u);
  facts.input_pool->collate_ns = 10;
  facts.input_pool->packed_samples_per_s = 0;
  // Workers started every epoch, batches for a CUDA device from pageable memory.
  facts.input_pool->cores = 8;
  facts.input_pool->workers = 2;
  facts.input_pool->starts = 3;
  facts.input_pool->startup_ns = 9;
  facts.input_pool->cuda = true;
  std::vector<std::string> kinds;
  for (const Recommendation& rec : recommend(r, facts)) kinds.push_back(rec.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"persistent_workers", "pin_memory"}));
}

/// A CPU training loop on 2 cores of 10 steps of 263, fed by the main process (no workers)
/// with batches of 16 that cost 357 each.
PoolFacts cpu_loop_facts(GapReport& r) {
  r = report_with(2630, 3570, 0);
  r.steps = 10;
  return dataloader_pool(160, 3570, 2);
}

/// The loop of cpu_loop_facts() with a one-thread step, and gpufeed packing batches of 16 at a
/// rate that costs `core_ns_per_batch` a batch on both of the 2 cores.
PoolFacts packed_cpu_loop_facts(GapReport& r, double core_ns_per_batch) {
  PoolFacts facts = cpu_loop_facts(r);
  facts.input_pool->step_cores = 1;
  facts.input_pool->packed_samples_per_s = 16e9 * 2 / core_ns_per_batch;
  facts.input_pool->packed_items = 64;
  return facts;
}

TEST(Recommendation, AStepOnTheCpuSharesTheCoresWithTheWorkers) {
  // A CPU training step of 263 that keeps both of 2 cores busy, fed by the main process (no
  // workers) with batches of 16 that cost 357: a period of 620, 42% utilization.
  GapReport r;
  PoolFacts facts = cpu_loop_facts(r);
  // Without the step's cores: one worker makes a batch every 357, the step's 263 is the rest.
  auto recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].action(), "DataLoader(num_workers=1)");
  EXPECT_NEAR(recs[0].predicted_device_util, 263.0 / 357, 1e-3);
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 16e9 / 357, 1e3);
  // A step on one thread keeps its core and the worker has the other: the same prediction.
  facts.input_pool->step_cores = 1;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_NEAR(recs[0].predicted_device_util, 263.0 / 357, 1e-3);
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 16e9 / 357, 1e3);
  // The step keeps 1.5 of 2 cores busy: the worker takes the half core the step leaves, and
  // the rest of its 357 from one of the step's threads, which the other waits for: the step
  // grows by that time, 263 + 357 - 0.5 * step, to 413.3 (a batch every 413.3, not 357).
  facts.input_pool->step_cores = 1.5;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].action(), "DataLoader(num_workers=1)");
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 16e9 / (620 / 1.5), 16e9 / 413.3 * 1e-3);
  EXPECT_NEAR(recs[0].predicted_device_util, 1.0, 1e-3);
  // The step keeps both cores busy: every moment of the worker's stretches it (263 + 357, a
  // period of 620 as today): a worker only moves the loading into the step. The advice says so
  // instead of a utilization that does not pay.
  facts.input_pool->step_cores = 2;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].kind, "num_workers");
  EXPECT_TRUE(recs[0].input_settings.empty());
  EXPECT_EQ(recs[0].action(),
            "keep DataLoader(num_workers=0): more workers would not make the steps faster");
  EXPECT_NE(recs[0].reason.find("keeps 2.0 of 2 cores busy; 1 worker beside it would stretch it"),
            std::string::npos)
      << recs[0].reason;
  // A batch that costs more than twice the step: the same, whatever the cores.
  facts.input_pool->fetch_ns = 6000;
  r = report_with(2630, 6000, 0);
  r.steps = 10;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].action(),
            "keep DataLoader(num_workers=0): more workers would not make the steps faster");
  EXPECT_NE(recs[0].reason.find("keeps 2.0 of 2 cores busy"), std::string::npos) << recs[0].reason;
}

TEST(Recommendation, PackingForAStepOfTwoThreadsCountsTheLoadersTimeInTheStep) {
  // The loop of cpu_loop_facts() with a step that keeps both cores busy (torch's two intra-op
  // threads), and gpufeed packing batches of 16 at 72 core-ns a batch: the loader's threads
  // take a core from one of the step's threads for all of it, the step grows to 263 + 72.
  GapReport r;
  PoolFacts facts = packed_cpu_loop_facts(r, 72);
  facts.input_pool->step_cores = 2;
  facts.input_pool->packed_core_ns_per_sample = 72.0 / 16;
  auto recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  ASSERT_EQ(recs[0].kind, "pack");
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 16e9 / 335, 16e9 / 335 * 1e-3);
  // Where the run's wall is known, the prediction is the run's samples a second, with its time
  // outside the steps (start-up, evaluation) as it was: 10 batches of 16 in 620 each and 1800
  // besides, 160 samples in 8000 today; 10 * 335 + 1800 with the loader.
  facts.input_pool->run_wall_ns = 8000;
  facts.input_pool->run_samples = 160;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 160e9 / 5150, 160e9 / 5150 * 1e-3);
  EXPECT_NE(recs[0].predicted_effect.find("20000000 -> 31067961 samples/s"), std::string::npos)
      << recs[0].predicted_effect;
}

TEST(Recommendation, TheCoresOtherProcessesKeepBusyAreNotTheLoadersToTake) {
  // A step of 1.5 of 2 cores leaves half a core, where the loader's 72 core-ns a batch fit: a
  // period of 263. With other processes keeping half a core busy on average, that half is
  // theirs: the loader's time lengthens the step, 263 + 72.
  GapReport r;
  PoolFacts facts = packed_cpu_loop_facts(r, 72);
  facts.input_pool->step_cores = 1.5;
  facts.input_pool->packed_core_ns_per_sample = 72.0 / 16;
  ASSERT_EQ(recommend(r, facts)[0].kind, "pack");
  EXPECT_NEAR(recommend(r, facts)[0].predicted_samples_per_s, 16e9 / 263, 16e9 / 263 * 1e-3);
  facts.input_pool->other_cores = 0.5;
  ASSERT_EQ(recommend(r, facts)[0].kind, "pack");
  EXPECT_NEAR(recommend(r, facts)[0].predicted_samples_per_s, 16e9 / 335, 16e9 / 335 * 1e-3);
  // Others busier still: they took from the step what it lacked of its two cores, no more.
  facts.input_pool->other_cores = 5;
  EXPECT_NEAR(recommend(r, facts)[0].predicted_samples_per_s, 16e9 / 335, 16e9 / 335 * 1e-3);
  // A one-thread step leaves its other core idle by its nature: others that fill it leave it
  // to the loader (the period of 281.5 of PackingForAOneThreadCpuStep...).
  facts = packed_cpu_loop_facts(r, 300);
  facts.input_pool->other_cores = 0.9;
  EXPECT_NEAR(recommend(r, facts)[0].predicted_samples_per_s, 16e9 / 281.5, 1e3);
}

TEST(Recommendation, AdviceIsRankedBySamplesASecondWhereAStepOnTheCpuIsSlowedByTheInput) {
  // A step of 1.5 of 2 cores: a worker would fill the step's time (a utilization of 100%) and
  // stretch it to 413; packing, 72 core-ns a batch, fits in the half core the step leaves (100%
  // too, at a period of 263). The one with more samples a second comes first.
  GapReport r;
  PoolFacts facts = packed_cpu_loop_facts(r, 72);
  facts.input_pool->step_cores = 1.5;
  facts.input_pool->packed_core_ns_per_sample = 72.0 / 16;
  const auto recs = recommend(r, facts);
  ASSERT_GE(recs.size(), 2u);
  EXPECT_EQ(recs[0].kind, "pack");
  EXPECT_EQ(recs[1].kind, "num_workers");
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 16e9 / 263, 16e9 / 263 * 1e-3);
  EXPECT_NEAR(recs[1].predicted_samples_per_s, 16e9 / (620 / 1.5), 16e9 / 413.3 * 1e-3);
  EXPECT_GE(recs[1].predicted_device_util, recs[0].predicted_device_util);
}

TEST(Recommendation, PackingForAOneThreadCpuStepCountsTheCoresTheStepLeaves) {
  // A one-thread CPU step of 263 on 2 cores; gpufeed made batches of 16 at a rate that costs
  // 300 core-ns a batch on both cores. The step keeps its core and runs as fast: the loader has
  // what is left, 2 * period - 263 >= 300, a period of 281.5 (not 263: the cores are shared).
  GapReport r;
  const PoolFacts facts = packed_cpu_loop_facts(r, 300);
  const auto recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].kind, "pack");
  EXPECT_NEAR(recs[0].predicted_device_util, 263.0 / 281.5, 1e-3);
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 16e9 / 281.5, 1e3);
}

TEST(Recommendation, PackingPredictsTheStepWithoutItsWaitAndTheBatchOpsOnTheLoopsThread) {
  // The same loop: a step of 263 after each wait of 357, and 200 when the probe ran it right
  // after the step before. gpufeed's measured core time is 300 a batch (its rate alone would
  // say 400 on 2 cores), 100 of it the transform ops on each delivered batch, on the loop's
  // thread. The loop then takes a step every step + 100; the wait before a step is those ops'
  // 100, so the step is 200 + (263 - 200) * 100 / 357 (linear in the wait between back to back
  // and today's): 217.6, a period of 317.6.
  GapReport r;
  PoolFacts facts = packed_cpu_loop_facts(r, 400);
  facts.input_pool->packed_core_ns_per_sample = 300.0 / 16;
  facts.input_pool->packed_consumer_ns_per_sample = 100.0 / 16;
  facts.input_pool->warm_step_ns = 200;
  auto recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  ASSERT_EQ(recs[0].kind, "pack");
  const double step = 200 + 63.0 * 100 / 357;
  EXPECT_NEAR(recs[0].predicted_device_util, step / (step + 100), 1e-3);
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 16e9 / (step + 100), 1e3);
  // Without the ops on its thread the loop waits for the loader's cores instead:
  // period = (300 + step) / 2 and wait = period - step, a fixed point at step 208.1.
  facts.input_pool->packed_consumer_ns_per_sample = 0;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  const double alone = (200 + 63.0 * 150 / 357) / (1 + 63.0 * 0.5 / 357);
  EXPECT_NEAR(recs[0].predicted_device_util, alone / ((300 + alone) / 2), 1e-3);
  // A probe's step no faster than today's (noise): today's step, as without a probe.
  facts.input_pool->warm_step_ns = 300;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_NEAR(recs[0].predicted_device_util, 263.0 / 281.5, 1e-3);
}

}  // namespace
}  // namespace gpufeed::diagnosis
