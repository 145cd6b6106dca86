// The Loader's rules: each recommendation speaks the Loader's settings, predicts its effect,
// and appears only when the measurements call for it.
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "../profiler/synthetic_timeline.hpp"
#include "gpufeed/diagnosis/recommend.hpp"

namespace gpufeed::diagnosis {
namespace {

using profiler::GapCause;
using profiler::GapReport;
using profiler::NetworkFacts;
using profiler::PipelineFacts;
using profiler::predicted_util_with_echo;
using profiler::Recommendation;
using profiler::Verdict;
using profiler::testing::report_with;

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

}  // namespace
}  // namespace gpufeed::diagnosis
