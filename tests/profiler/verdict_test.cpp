// Verdict thresholds and the recommendation model's predictions.
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/recommendation.hpp"
#include "gpufeed/profiler/summary.hpp"
#include "gpufeed/profiler/verdict.hpp"

namespace gpufeed::profiler {
namespace {

TEST(Verdict, ThresholdsAreInclusive) {
  EXPECT_EQ(input_bound_verdict(0.20), Verdict::highly_input_bound);
  EXPECT_EQ(input_bound_verdict(0.1999), Verdict::moderately_input_bound);
  EXPECT_EQ(input_bound_verdict(0.05), Verdict::moderately_input_bound);
  EXPECT_EQ(input_bound_verdict(0.0499), Verdict::not_input_bound);
  EXPECT_EQ(input_bound_verdict(0.0), Verdict::not_input_bound);
  EXPECT_EQ(input_bound_verdict(0.3, {0.5, 0.25}), Verdict::moderately_input_bound);
  EXPECT_STREQ(verdict_text(Verdict::highly_input_bound), "highly input-bound");
  EXPECT_EQ(parse_verdict("moderately input-bound"), Verdict::moderately_input_bound);
  EXPECT_FALSE(parse_verdict("slow"));
}

GapReport report_with(std::int64_t busy, std::int64_t input_wait, std::int64_t other) {
  GapReport r;
  r.window_begin_ns = 0;
  r.window_end_ns = busy + input_wait + other;
  r.busy_ns = busy;
  r.device_util = static_cast<double>(busy) / static_cast<double>(r.window_end_ns);
  r.idle_ns[GapCause::input_wait] = input_wait;
  r.idle_ns[GapCause::other] = other;
  r.idle_by_cause[0] = static_cast<double>(input_wait) / static_cast<double>(r.window_end_ns);
  r.input_bound_share = r.idle_by_cause[0];
  r.verdict = input_bound_verdict(r.input_bound_share);
  return r;
}

/// A loader of `workers` workers on `cores` cores, echo already on (so no echo advice).
PipelineFacts echoing_loader(unsigned workers, unsigned cores) {
  PipelineFacts facts;
  facts.workers = workers;
  facts.cpu_cores = cores;
  facts.echo = 2;
  return facts;
}

TEST(Recommendation, EchoModelPredictsUtilization) {
  const GapReport r = report_with(30, 60, 10);
  EXPECT_DOUBLE_EQ(predicted_util_with_echo(r, 1), 0.30);
  EXPECT_DOUBLE_EQ(predicted_util_with_echo(r, 2), 0.60);
  EXPECT_DOUBLE_EQ(predicted_util_with_echo(r, 3), 0.90);  // wait fully hidden
  EXPECT_DOUBLE_EQ(predicted_util_with_echo(r, 4), 0.90);  // "other" idle stays
  const auto recs = recommend(r, {});
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs.front().kind, "echo");
  EXPECT_EQ(recs.front().settings, std::vector<Setting>{Setting::of(Knob::echo, 3)});
  EXPECT_EQ(recs.front().action(), "echo=3");
  EXPECT_DOUBLE_EQ(recs.front().predicted_device_util, 0.90);
}

TEST(Recommendation, SpeaksTheLoadersTermsNeverAFlag) {
  GapReport r = report_with(30, 60, 10);
  r.bottleneck_stage = "read";
  r.idle_ns[GapCause::host_sync] = 10;
  r.idle_by_cause[static_cast<std::size_t>(GapCause::host_sync)] = 0.10;
  r.pageable_h2d_ns = 5;
  PipelineFacts facts;
  facts.workers = 2;
  facts.cpu_cores = 8;
  facts.order = Order::random;
  const auto recs = recommend(r, facts);
  // Modelled changes first, by predicted utilization; then the unmodelled ones in rule order.
  std::vector<std::string> kinds;
  for (const Recommendation& rec : recs) kinds.push_back(rec.kind);
  ASSERT_EQ(kinds, (std::vector<std::string>{"echo", "workers", "host_sync", "pinned_memory",
                                             "chunk_cache"}));
  // Echo: (busy + wait) / busy = 3 hides the whole input wait.
  EXPECT_EQ(recs[0].settings, std::vector<Setting>{Setting::of(Knob::echo, 3)});
  EXPECT_EQ(recs[0].action(), "echo=3");
  EXPECT_DOUBLE_EQ(recs[0].predicted_device_util, 0.90);
  // Workers: twice the 2 workers (8 cores leave room); the period 90 halves to 45, wait 60 -> 15.
  EXPECT_EQ(recs[1].settings, std::vector<Setting>{Setting::of(Knob::workers, 4)});
  EXPECT_EQ(recs[1].action(), "workers=4");
  EXPECT_DOUBLE_EQ(recs[1].predicted_device_util, 30.0 / 55.0);
  // Changes to the training code are words, not settings.
  EXPECT_TRUE(recs[2].settings.empty());
  EXPECT_EQ(recs[2].action(), "remove .item()/.cpu()/synchronize from the step loop");
  EXPECT_DOUBLE_EQ(recs[2].predicted_device_util, 30.0 / 90.0);
  EXPECT_TRUE(recs[3].settings.empty());
  EXPECT_EQ(recs[3].action(), "pin host batch memory (cudaHostAlloc / pin_memory=True)");
  EXPECT_LT(recs[3].predicted_device_util, 0);
  EXPECT_EQ(recs[4].settings, std::vector<Setting>{Setting::of(Order::chunk)});
  EXPECT_EQ(recs[4].action(), "order=chunk with a chunk cache of at least the shuffle window");
  EXPECT_LT(recs[4].predicted_device_util, 0);
  for (const Recommendation& rec : recs) {
    EXPECT_EQ(rec.action().find("--"), std::string::npos) << rec.action();
    // A change never predicts less than today's utilization.
    if (rec.predicted_device_util >= 0) {
      EXPECT_GE(rec.predicted_device_util, r.device_util);
    }
  }
  facts.order = Order::chunk;
  facts.cache_bytes = 256ull << 20;
  // Already in chunk order: the advice is a cache twice as large.
  const auto with_cache = recommend(r, facts);
  const auto cache =
      std::find_if(with_cache.begin(), with_cache.end(),
                   [](const Recommendation& rec) { return rec.kind == "chunk_cache"; });
  ASSERT_NE(cache, with_cache.end());
  EXPECT_EQ(cache->settings, std::vector<Setting>{Setting::of(Knob::cache_bytes, 512ull << 20)});
  EXPECT_EQ(cache->action(), "cache_bytes=536870912");
}

TEST(Recommendation, AReadBoundObjectStoreFileIsAdvisedByWhatItsNetworkFiguresShow) {
  GapReport r = report_with(30, 60, 10);
  r.bottleneck_stage = "read";
  PipelineFacts facts;
  auto object_store = [&] {
    const auto recs = recommend(r, facts);
    const auto it = std::find_if(recs.begin(), recs.end(), [](const Recommendation& rec) {
      return rec.kind == "object_store";
    });
    return it == recs.end() ? std::optional<Recommendation>() : *it;
  };
  EXPECT_FALSE(object_store()) << "a local file has no network advice";
  // Every allowed GET in flight: twice as many.
  facts.network = NetworkFacts{1000, 0, 0, 64, 64, 21.5, 0};
  auto rec = object_store();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->action(), "read_requests=128");
  EXPECT_NE(rec->reason.find("1000 GETs, first byte after 21.5"), std::string::npos) << rec->reason;
  // A server that limits the request rate: the loader already paces itself, so the advice
  // removes requests. A jpeg file in random order (a GET an image): chunk order's blocks.
  facts.network = NetworkFacts{1000,          40,    40,         64,  64, 21.5, 3'000'000'000,
                               2'000'000'000, 350.2, 18'432'000, true};
  facts.order = Order::random;
  rec = object_store();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->settings, std::vector<Setting>{Setting::of(Order::chunk)});
  for (const char* part :
       {"40 of 1000 requests were refused (SlowDown)",
        "paced itself to 350 requests a second (2.00 s waiting", "GETs averaged 18 KiB"}) {
    EXPECT_NE(rec->reason.find(part), std::string::npos) << rec->reason;
  }
  EXPECT_NE(rec->predicted_effect.find("requests / 227"), std::string::npos)
      << rec->predicted_effect;
  // Already in chunk order: more samples a chunk.
  facts.order = Order::chunk;
  rec = object_store();
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->settings.empty());
  EXPECT_NE(rec->action().find("more samples a chunk"), std::string::npos) << rec->action();
  facts.order.reset();
  // GETs to spare: fewer, larger ranges.
  facts.network = NetworkFacts{1000, 0, 0, 12, 64, 21.5, 0};
  rec = object_store();
  ASSERT_TRUE(rec);
  EXPECT_TRUE(rec->settings.empty());
  EXPECT_NE(rec->action().find("bigger chunks"), std::string::npos) << rec->action();
  // Not read-bound: nothing about the network.
  r.bottleneck_stage = "decode";
  EXPECT_FALSE(object_store());
}

TEST(Recommendation, NoInputAdviceWhenNotInputBound) {
  GapReport r = report_with(97, 2, 1);
  r.bottleneck_stage = "read";  // the busiest stage, though the device hardly waits for it
  ASSERT_FALSE(r.has_bottleneck());
  PipelineFacts facts;
  facts.order = Order::random;
  for (const Recommendation& rec : recommend(r, facts)) {
    EXPECT_NE(rec.kind, "echo");
    EXPECT_NE(rec.kind, "workers");
    EXPECT_NE(rec.kind, "chunk_cache");
  }
}

TEST(Recommendation, WorkersOnlyWhenCoresAreLeft) {
  GapReport r = report_with(50, 50, 0);
  r.bottleneck_stage = "decode";
  PipelineFacts facts = echoing_loader(4, 16);  // echo already on: no echo advice
  auto recs = recommend(r, facts);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].kind, "workers");
  EXPECT_EQ(recs[0].settings, std::vector<Setting>{Setting::of(Knob::workers, 8)});
  EXPECT_EQ(recs[0].action([](const Setting& s) { return "-w" + s.value_text(); }), "-w8");
  // Period busy + wait = 100 halves to 50 = busy: the wait disappears.
  EXPECT_DOUBLE_EQ(recs[0].predicted_device_util, 1.0);
  facts.workers = 16;
  EXPECT_TRUE(recommend(r, facts).empty());
}

TEST(Recommendation, LaunchGapsUnderALoaderOnEveryCoreGiveTheTrainingThreadACore) {
  GapReport r = report_with(70, 10, 0);  // moderately input-bound
  r.window_end_ns = 100;
  r.idle_ns[GapCause::launch] = 20;
  r.idle_by_cause[static_cast<std::size_t>(GapCause::launch)] = 0.20;
  r.device_util = 0.70;
  r.bottleneck_stage = "decode";
  PipelineFacts facts = echoing_loader(16, 16);  // no echo advice
  const auto find_launch = [](const std::vector<Recommendation>& recs) {
    const auto it = std::find_if(recs.begin(), recs.end(),
                                 [](const Recommendation& rec) { return rec.kind == "launch"; });
    EXPECT_NE(it, recs.end());
    return it == recs.end() ? Recommendation{} : *it;
  };
  const Recommendation busy = find_launch(recommend(r, facts));
  EXPECT_EQ(busy.settings, std::vector<Setting>{Setting::of(Knob::workers, 15)});
  EXPECT_NE(busy.reason.find("the loader's 16 workers take all 16 cores"), std::string::npos)
      << busy.reason;
  EXPECT_LT(busy.predicted_device_util, 0);  // not modelled: fewer workers also read less
  // Cores to spare, or an idle loader: the launch gaps are the step's own.
  facts.workers = 8;
  const Recommendation spare = find_launch(recommend(r, facts));
  EXPECT_TRUE(spare.settings.empty());
  EXPECT_EQ(spare.words, "larger batches, fused ops or CUDA graphs");
  EXPECT_DOUBLE_EQ(spare.predicted_device_util, 70.0 / 80.0);
  facts.workers = 16;
  r = report_with(70, 0, 10);
  r.idle_ns[GapCause::launch] = 20;
  r.idle_by_cause[static_cast<std::size_t>(GapCause::launch)] = 0.20;
  facts.stage_busy = {{"read", 0.4}};
  EXPECT_TRUE(find_launch(recommend(r, facts)).settings.empty());
}

TEST(Recommendation, NoMoreWorkersWhenTheStageIsNotSaturated) {
  GapReport r = report_with(50, 50, 0);
  r.bottleneck_stage = "read";
  PipelineFacts facts = echoing_loader(4, 16);
  facts.stage_busy = {{"read", 0.3}};  // workers mostly idle: the stage waits on something else
  for (const Recommendation& rec : recommend(r, facts)) EXPECT_NE(rec.kind, "workers");
  facts.stage_busy = {{"read", 0.95}};
  const auto recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].kind, "workers");
  EXPECT_NE(recs[0].reason.find("busy 95.0% per worker"), std::string::npos) << recs[0].reason;
}

TEST(Recommendation, PinnedMemoryAndTransferDtypeFromFacts) {
  GapReport r = report_with(90, 0, 10);
  r.pageable_h2d_ns = 4'000;
  PipelineFacts facts;
  facts.transfer_bytes_per_sample = 4 * 3072;
  facts.uint8_bytes_per_sample = 3072;
  const auto recs = recommend(r, facts);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0].kind, "pinned_memory");
  EXPECT_EQ(recs[1].kind, "transfer_dtype");
}

TEST(Recommendation, AnInputThatIsNotTheLoaderGetsNoLoaderSettings) {
  // A torch DataLoader or a generator: only its waits are seen.
  const GapReport r = report_with(30, 60, 10);
  PipelineFacts facts;
  facts.loader_settings = false;
  facts.workers = 2;
  facts.cpu_cores = 8;
  const auto recs = recommend(r, facts);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0].kind, "input");
  EXPECT_TRUE(recs[0].settings.empty());
  EXPECT_NE(recs[0].action().find("num_workers"), std::string::npos) << recs[0].action();
  EXPECT_DOUBLE_EQ(recs[0].predicted_device_util, 30.0 / 40.0);  // no wait left
  EXPECT_TRUE(recommend(report_with(90, 1, 9), facts).empty());  // keeps up: nothing to say
}

/// A DataLoader's pool (no gpufeed loader) that made 10 batches of `samples` in all, its
/// fetches costing `fetch_ns` (collate 10 of it), on `cores` cores.
PipelineFacts dataloader_pool(std::uint64_t samples, std::int64_t fetch_ns, unsigned cores) {
  PipelineFacts facts;
  facts.loader_settings = false;
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
  PipelineFacts facts = dataloader_pool(80, 60, 8);
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
PipelineFacts cpu_loop_facts(GapReport& r) {
  r = report_with(2630, 3570, 0);
  r.steps = 10;
  return dataloader_pool(160, 3570, 2);
}

TEST(Recommendation, AStepOnTheCpuSharesTheCoresWithTheWorkers) {
  // A CPU training step of 263 that keeps both of 2 cores busy, fed by the main process (no
  // workers) with batches of 16 that cost 357: a period of 620, 42% utilization.
  GapReport r;
  PipelineFacts facts = cpu_loop_facts(r);
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
  // The step keeps 2 cores busy: the worker and the step share them, both 1.5x slower (a step
  // of 395, a batch every 535): utilization rises more than the samples a second do.
  facts.input_pool->step_cores = 2;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].action(), "DataLoader(num_workers=1)");
  EXPECT_NEAR(recs[0].predicted_device_util, 263.0 / 357, 0.01);
  EXPECT_NEAR(recs[0].predicted_samples_per_s, 16e9 / 535.5, 16e9 / 535.5 * 0.01);
  EXPECT_NE(recs[0].predicted_effect.find("25806452 -> 2987"), std::string::npos)
      << recs[0].predicted_effect;
  // A batch that costs more than twice the step: the worker, 1.5x slower beside the step,
  // makes a batch no sooner than the loop does by itself. The advice says so instead of a
  // utilization that does not pay.
  facts.input_pool->fetch_ns = 6000;
  r = report_with(2630, 6000, 0);
  r.steps = 10;
  recs = recommend(r, facts);
  ASSERT_FALSE(recs.empty());
  EXPECT_EQ(recs[0].kind, "num_workers");
  EXPECT_TRUE(recs[0].input_settings.empty());
  EXPECT_EQ(recs[0].action(),
            "keep DataLoader(num_workers=0): more workers would not make the steps faster");
  EXPECT_NE(recs[0].reason.find("keeps 2.0 of 2 cores busy"), std::string::npos) << recs[0].reason;
}

TEST(Recommendation, PackingForAOneThreadCpuStepCountsTheCoresTheStepLeaves) {
  // A one-thread CPU step of 263 on 2 cores; gpufeed made batches of 16 at a rate that costs
  // 300 core-ns a batch on both cores. The step keeps its core and runs as fast: the loader has
  // what is left, 2 * period - 263 >= 300, a period of 281.5 (not 263: the cores are shared).
  GapReport r;
  PipelineFacts facts = cpu_loop_facts(r);
  facts.input_pool->step_cores = 1;
  facts.input_pool->packed_samples_per_s = 16e9 * 2 / 300;
  facts.input_pool->packed_items = 64;
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
  PipelineFacts facts = cpu_loop_facts(r);
  facts.input_pool->step_cores = 1;
  facts.input_pool->packed_samples_per_s = 16e9 * 2 / 400;
  facts.input_pool->packed_items = 64;
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

TEST(IdleElsewhere, AMostlyIdleDeviceIsExplainedUnlessInputIsTheCause) {
  GapReport r = report_with(10, 1, 89);
  r.idle_by_cause[static_cast<std::size_t>(GapCause::other)] = 0.89;
  ASSERT_EQ(r.verdict, Verdict::not_input_bound);
  const std::string text = idle_elsewhere(r);
  EXPECT_NE(text.find("the device idles 90% of the window, but not waiting for input: other 89%"),
            std::string::npos)
      << text;
  r.idle_ns[GapCause::host_sync] = 89;
  r.idle_by_cause[static_cast<std::size_t>(GapCause::host_sync)] = 0.89;
  r.idle_by_cause[static_cast<std::size_t>(GapCause::other)] = 0;
  EXPECT_NE(idle_elsewhere(r).find("host_sync 89%, host synchronizations"), std::string::npos)
      << idle_elsewhere(r);
  EXPECT_EQ(idle_elsewhere(report_with(30, 60, 10)), "");  // input-bound: the verdict says it
  EXPECT_EQ(idle_elsewhere(report_with(80, 1, 19)), "");   // busy enough
  GapReport quiet = report_with(10, 1, 89);
  quiet.idle_by_cause[static_cast<std::size_t>(GapCause::other)] = 0.89;
  const std::string summary = format_summary(quiet, field_spelling);
  EXPECT_NE(summary.find("idle elsewhere      the device idles 90%"), std::string::npos) << summary;
  EXPECT_EQ(summary.find("recommendations     no change"), std::string::npos) << summary;
}

}  // namespace
}  // namespace gpufeed::profiler
