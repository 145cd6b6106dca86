// Damaged or unexpected trace input: a clear message and a partial report, never a crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "gpufeed/profiler/error.hpp"
#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/kineto_trace.hpp"
#include "gzip_text.hpp"
#include "temp_dir.hpp"

namespace gpufeed::profiler {
namespace {

const std::string kTrace = R"json({"schemaVersion": 1, "traceEvents": [
  {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 100, "dur": 400},
  {"ph": "X", "cat": "cpu_op", "name": "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__", "pid": 1, "tid": 1, "ts": 100, "dur": 150},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": 260, "dur": 5, "args": {"correlation": 7}},
  {"ph": "X", "cat": "kernel", "name": "void gemm<{float}>()", "pid": 0, "tid": 7, "ts": 270, "dur": 100, "args": {"stream": 7, "device": 0, "correlation": 7}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaMemcpyAsync", "pid": 1, "tid": 1, "ts": 380, "dur": 5, "args": {"correlation": 8}},
  {"ph": "X", "cat": "gpu_memcpy", "name": "Memcpy DtoH (Device -> Pageable)", "pid": 0, "tid": 7, "ts": 390, "dur": 10, "args": {"stream": 7, "device": 0, "correlation": 8, "bytes": 4}},
  {"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "pid": 1, "tid": 1, "ts": 386, "dur": 20, "args": {"correlation": 9}}
]})json";

TEST(KinetoBadInput, WellFormedSmallTraceMapsEveryKind) {
  const KinetoTrace k = KinetoTrace::parse(kTrace);
  EXPECT_FALSE(k.truncated);
  EXPECT_EQ(k.counts.kernels, 1u);
  EXPECT_EQ(k.counts.memcpys, 1u);
  ASSERT_EQ(k.timeline.device.size(), 2u);
  EXPECT_EQ(k.timeline.device[0].begin_ns, 270'000);
  EXPECT_EQ(k.timeline.device[0].correlation, 7u);
  EXPECT_EQ(k.timeline.device[1].kind, ActivityKind::memcpy_d2h);
  EXPECT_TRUE(k.timeline.device[1].pageable);
  std::map<std::string, int> names;
  for (const HostRange& h : k.timeline.host) ++names[h.name];
  EXPECT_EQ(names["step"], 1);
  EXPECT_EQ(names["wait"], 1);
  EXPECT_EQ(names["launch"], 2);
  EXPECT_EQ(names["sync"], 1);
  EXPECT_TRUE(k.timeline.warnings.empty());
}

TEST(KinetoDataLoader, ACpuOnlyTracesStepsHoldTheirWaitForTheNextBatch) {
  // torch.profiler with ProfilerActivity.CPU only: ProfilerStep#N runs from one prof.step() to
  // the next, so it holds the DataLoader's __next__; the wait is not the step's work.
  std::string json = R"({"schemaVersion": 1, "traceEvents": [)";
  for (int step = 0; step < 12; ++step) {
    const std::string begin = std::to_string(1000 + step * 10000);
    json += std::string(step ? "," : "") +
            R"({"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#)" +
            std::to_string(step) + R"(", "pid": 1, "tid": 1, "ts": )" + begin +
            R"(, "dur": 9000}, {"ph": "X", "cat": "user_annotation", "name": )"
            R"("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "pid": 1, )"
            R"("tid": 1, "ts": )" +
            begin + R"(, "dur": 6000})";
  }
  json += "]}";
  const GapReport r = analyze(KinetoTrace::parse(json).timeline);
  EXPECT_EQ(r.device_timeline, "step ranges");
  EXPECT_NEAR(r.device_util, 0.3, 1e-9);
  EXPECT_NEAR(r.idle_share(GapCause::input_wait), 0.6, 1e-9);
  EXPECT_EQ(r.verdict, Verdict::highly_input_bound);
}

TEST(KinetoBadInput, TruncatedJsonGivesThePrefixAndAWarning) {
  const std::size_t cut = kTrace.find("cudaMemcpyAsync") + 10;
  const KinetoTrace k = KinetoTrace::parse(kTrace.substr(0, cut), "cut.json");
  EXPECT_TRUE(k.truncated);
  EXPECT_EQ(k.counts.kernels, 1u);  // the events before the cut survive
  EXPECT_EQ(k.counts.memcpys, 0u);
  ASSERT_FALSE(k.timeline.warnings.empty());
  EXPECT_NE(k.timeline.warnings[0].find("cut.json is truncated"), std::string::npos)
      << k.timeline.warnings[0];
  const GapReport r = analyze(k.timeline);  // a partial report, not a crash
  EXPECT_GT(r.busy_ns, 0);
}

TEST(KinetoBadInput, EveryTruncationPointIsHandled) {
  for (std::size_t cut = 0; cut < kTrace.size(); cut += 7) {
    try {
      const KinetoTrace k = KinetoTrace::parse(kTrace.substr(0, cut), "cut.json");
      static_cast<void>(analyze(k.timeline));
    } catch (const TraceError& e) {
      EXPECT_NE(std::string(e.what()).find("cut.json"), std::string::npos) << e.what();
    }
  }
}

TEST(KinetoBadInput, NotJsonOrNotATraceThrowsAClearError) {
  EXPECT_THROW(KinetoTrace::parse("this is not json", "x.json"), TraceError);
  EXPECT_THROW(KinetoTrace::parse("", "x.json"), TraceError);
  try {
    KinetoTrace::parse(R"({"schemaVersion": 1})", "x.json");
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("no \"traceEvents\""), std::string::npos) << e.what();
  }
  // A bare event array is a valid Chrome trace.
  const KinetoTrace bare = KinetoTrace::parse(
      R"([{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":2,"args":{"stream":3}}])");
  EXPECT_EQ(bare.counts.kernels, 1u);
}

TEST(KinetoBadInput, NoDeviceEventsWarnsAndFallsBackToSteps) {
  const KinetoTrace k = KinetoTrace::parse(R"({"traceEvents": [
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "tid": 1, "ts": 0, "dur": 100},
    {"ph": "X", "cat": "cpu_op", "name": "enumerate(DataLoader)#x", "tid": 1, "ts": 100, "dur": 50},
    {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#2", "tid": 1, "ts": 150, "dur": 100}]})");
  ASSERT_EQ(k.timeline.warnings.size(), 1u);
  EXPECT_NE(k.timeline.warnings[0].find("no device events"), std::string::npos);
  AnalysisOptions o;
  o.warmup_steps = 0;
  const GapReport r = analyze(k.timeline, o);
  EXPECT_EQ(r.device_timeline, "step ranges");
  EXPECT_EQ(r.idle_ns[GapCause::input_wait], 50'000);
}

TEST(KinetoBadInput, UnknownKindsAndMalformedEventsAreCountedAndSkipped) {
  const KinetoTrace k = KinetoTrace::parse(R"({"traceEvents": [
    {"ph": "X", "cat": "fancy_new_kind", "name": "a", "ts": 1, "dur": 1},
    {"ph": "X", "cat": "fancy_new_kind", "name": "b", "ts": 2, "dur": 1},
    {"ph": "C", "name": "memory", "ts": 3, "args": {"bytes": 1}},
    {"ph": "X", "cat": "kernel", "name": "no_duration", "ts": 4},
    {"ph": "X", "cat": "kernel", "name": "bad_ts", "ts": "soon", "dur": 1},
    {"ph": "X", "cat": "kernel", "ts": 5, "dur": 1},
    42, null, [],
    {"ph": "X", "cat": "kernel", "name": "good", "ts": 6, "dur": 1, "args": {"stream": "7"}}]})");
  EXPECT_EQ(k.counts.unknown_kinds.at("fancy_new_kind"), 2u);
  EXPECT_EQ(k.counts.unknown_kinds.at("phase C"), 1u);
  EXPECT_EQ(k.counts.malformed, 6u);
  ASSERT_EQ(k.timeline.device.size(), 1u);
  EXPECT_EQ(k.timeline.device[0].stream, 7u);
  bool unknown_warned = false;
  for (const std::string& w : k.timeline.warnings) {
    unknown_warned |= w.find("unknown kind 'fancy_new_kind'") != std::string::npos;
  }
  EXPECT_TRUE(unknown_warned);
}

TEST(KinetoBadInput, TimesBeyondAnyClockAreMalformedNotWrappedAround) {
  // Found by fuzzing: 168272589823937338 us overflowed int64 nanoseconds (undefined behaviour;
  // in practice a wrapped, negative time).
  const KinetoTrace k = KinetoTrace::parse(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "huge_ts", "ts": 168272589823937338, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "huge_unsigned", "ts": 18446744073709551615, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "huge_dur", "ts": 1, "dur": 1e300},
    {"ph": "X", "cat": "kernel", "name": "very_negative", "ts": -9000000000000000000, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "good", "ts": 6, "dur": 1,
     "args": {"stream": 1e300, "correlation": 18446744073709551615}}]})");
  EXPECT_EQ(k.counts.malformed, 4u);
  ASSERT_EQ(k.timeline.device.size(), 1u);
  EXPECT_EQ(k.timeline.device[0].begin_ns, 6000);
  EXPECT_EQ(k.timeline.device[0].end_ns, 7000);
}

TEST(KinetoBadInput, ANumberNoDoubleHoldsIsDamageNotAnEscapingJsonError) {
  // Found by fuzzing: nlohmann::json throws out_of_range, not parse_error, for 1e999.
  const KinetoTrace k = KinetoTrace::parse(R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "good", "ts": 6, "dur": 1},
    {"ph": "X", "cat": "kernel", "name": "overflow", "ts": 1e999, "dur": 1}]})",
                                           "big.json");
  EXPECT_TRUE(k.truncated);  // read as damage: the events before it are kept
  EXPECT_EQ(k.counts.kernels, 1u);
}

TEST(KinetoBadInput, FilesMissingCorruptOrMultiMemberGzip) {
  gpufeed::testing::TempDir dir;
  EXPECT_THROW(KinetoTrace::read(dir.file("missing.json")), TraceError);
  // A gzip stream cut in half cannot be inflated: a clear error naming the file.
  testing::append_gz_member(dir.file("whole.json.gz"), kTrace);
  std::ifstream in(dir.file("whole.json.gz"), std::ios::binary);
  const std::string gz((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir.file("cut.json.gz"), std::ios::binary) << gz.substr(0, gz.size() / 2);
  try {
    KinetoTrace::read(dir.file("cut.json.gz"));
    FAIL() << "expected TraceError";
  } catch (const TraceError& e) {
    EXPECT_NE(std::string(e.what()).find("cut.json.gz: corrupt or truncated gzip"),
              std::string::npos)
        << e.what();
  }
  // Two gzip members (e.g. from `cat a.gz b.gz`) inflate to their concatenation.
  const std::size_t half = kTrace.size() / 2;
  testing::append_gz_member(dir.file("two.json.gz"), kTrace.substr(0, half));
  testing::append_gz_member(dir.file("two.json.gz"), kTrace.substr(half));
  EXPECT_EQ(KinetoTrace::read(dir.file("two.json.gz")).counts.kernels, 1u);
  std::ofstream(dir.file("plain.json")) << kTrace;
  EXPECT_EQ(KinetoTrace::read(dir.file("plain.json")).counts.memcpys, 1u);
}

}  // namespace
}  // namespace gpufeed::profiler

namespace gpufeed::profiler {
namespace {

TEST(KinetoTrace, RankAndCollectivesOfADistributedTrace) {
  const KinetoTrace k = KinetoTrace::parse(R"json({
    "distributedInfo": {"backend": "gloo", "rank": 1, "world_size": 2},
    "traceEvents": [
      {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#3", "pid": 1, "tid": 1, "ts": 0, "dur": 900},
      {"ph": "X", "cat": "cpu_op", "name": "gloo:all_reduce", "pid": 1, "tid": 1, "ts": 500, "dur": 300},
      {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)", "pid": 0, "tid": 7, "ts": 510, "dur": 280, "args": {"stream": 7, "device": 0}}
    ]})json");
  EXPECT_EQ(k.timeline.rank, 1);
  EXPECT_EQ(k.timeline.world_size, 2);
  ASSERT_EQ(k.timeline.host.size(), 2u);
  EXPECT_EQ(k.timeline.host[1].name, range_names::collective);
  EXPECT_EQ(k.timeline.host[1].detail, "gloo:all_reduce");
  ASSERT_EQ(k.timeline.device.size(), 1u);
  EXPECT_TRUE(k.timeline.device[0].is_collective());
}

TEST(KinetoTrace, ACpuOnlyTraceOfADataLoaderLoopHasStepsBetweenItsWaits) {
  // torch.profiler without Kineto: no categories, operators on "CPU functions", no
  // ProfilerStep. Batches take 3 (the DataLoader's next), the work between them 1.
  const std::string trace = R"({"traceEvents": [
    {"name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "ph": "X",
     "ts": 0, "dur": 3, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::mm", "ph": "X", "ts": 3, "dur": 1, "tid": 1, "pid": "CPU functions"},
    {"name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "ph": "X",
     "ts": 4, "dur": 3, "tid": 1, "pid": "CPU functions", "args": {}},
    {"name": "aten::mm", "ph": "X", "ts": 7, "dur": 1, "tid": 1, "pid": "CPU functions"},
    {"name": "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", "ph": "X",
     "ts": 8, "dur": 3, "tid": 1, "pid": "CPU functions", "args": {}}]})";
  const KinetoTrace k = KinetoTrace::parse(trace, "cpu.json");
  EXPECT_EQ(k.counts.cpu_ops, 5u);
  EXPECT_TRUE(k.counts.unknown_kinds.empty());
  EXPECT_EQ(k.counts.implicit_steps, 2u);
  std::size_t waits = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> steps;
  for (const HostRange& r : k.timeline.host) {
    if (r.name == "wait") ++waits;
    if (r.name == "step") steps.emplace_back(r.begin_ns, r.end_ns);
  }
  EXPECT_EQ(waits, 3u);
  EXPECT_EQ(steps,
            (std::vector<std::pair<std::int64_t, std::int64_t>>{{3000, 4000}, {7000, 8000}}));
  // A trace that marks its steps keeps them as they are.
  const std::string marked = R"({"traceEvents": [
    {"name": "ProfilerStep#1", "ph": "X", "ts": 0, "dur": 10, "tid": 1, "cat": "user_annotation"},
    {"name": "DataLoader.__next__", "ph": "X", "ts": 0, "dur": 3, "tid": 1, "cat": "cpu_op"},
    {"name": "DataLoader.__next__", "ph": "X", "ts": 5, "dur": 3, "tid": 1, "cat": "cpu_op"}]})";
  EXPECT_EQ(KinetoTrace::parse(marked, "marked.json").counts.implicit_steps, 0u);
}

}  // namespace
}  // namespace gpufeed::profiler
