// pipebench's pure parts: the progress line, the practice checks and the sweep grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/cli.hpp"
#include "common/flags.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/diagnosis/diagnosis.hpp"
#include "gpufeed/diagnosis/practices.hpp"
#include "gpufeed/profiler/chrome_trace.hpp"
#include "gpufeed/profiler/trace_input.hpp"
#include "pipebench/language.hpp"
#include "pipebench/progress.hpp"
#include "pipebench/sweep.hpp"

namespace gpufeed::tools::pipebench {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- progress -------------------------------------------------------------------------------

TEST(PerRankPath, TheRankGoesWhereItIsAskedForOrBeforeTheExtension) {
  EXPECT_EQ(diagnosis::per_rank_path("run.json", -1, 0), "run.json");
  EXPECT_EQ(diagnosis::per_rank_path("run.json", 0, 1), "run.json");
  EXPECT_EQ(diagnosis::per_rank_path("out/run.json", 3, 4), "out/run.rank3.json");
  EXPECT_EQ(diagnosis::per_rank_path("out.d/run", 1, 2), "out.d/run.rank1");
  EXPECT_EQ(diagnosis::per_rank_path("r{rank}/t{rank}.json", 2, 4), "r2/t2.json");
  EXPECT_EQ(diagnosis::per_rank_path("t{rank}.json", -1, 0), "t0.json");
}

TEST(GpufeedTrace, TheRankRoundTrips) {
  profiler::Timeline t;
  t.rank = 3;
  t.world_size = 8;
  t.host.push_back({"step", 1000, 2000, 1, 0, 0, {}});
  std::ostringstream text;
  profiler::ChromeTrace::write(text, t, nullptr);
  const profiler::TraceInput whole = profiler::parse_gpufeed_trace(text.str(), "t.json");
  EXPECT_EQ(whole.timeline.rank, 3);
  EXPECT_EQ(whole.timeline.world_size, 8);
  std::string cut = text.str();
  cut.resize(cut.size() - 5);  // a damaged file keeps its header line
  const profiler::TraceInput damaged = profiler::parse_gpufeed_trace(cut, "t.json");
  EXPECT_TRUE(damaged.truncated);
  EXPECT_EQ(damaged.timeline.rank, 3);
  EXPECT_EQ(damaged.timeline.world_size, 8);
}

TEST(ProgressLine, ShowsStepRateUtilizationAndQueue) {
  const ProgressPoint before{1'000'000'000, 0, 10, 2560, 900'000'000, 0, 0, 2};
  const ProgressPoint now{3'000'000'000, 1, 30, 7680, 2'800'000'000, 0, 3, 4};
  const std::string line = format_progress(before, now, ProgressShape{96, true});
  EXPECT_EQ(line, "step 30/96  epoch 1  2560 samples/s  util 95%  queue 3/4");
}

TEST(ProgressLine, WithoutTrainingShowsTheInputWaitShare) {
  const ProgressPoint before{0, 0, 0, 0, 0, 0, 0, 2};
  const ProgressPoint now{2'000'000'000, 0, 8, 1000, 0, 500'000'000, 1, 2};
  const std::string line = format_progress(before, now, ProgressShape{0, false});
  EXPECT_EQ(line, "step 8  epoch 0  500 samples/s  input wait 25%  queue 1/2");
}

TEST(ProgressMode, AutoFollowsTheTerminalAndBadValuesAreUsageErrors) {
  EXPECT_EQ(parse_progress_mode("auto", true), ProgressMode::line);
  EXPECT_EQ(parse_progress_mode("auto", false), ProgressMode::plain);
  EXPECT_EQ(parse_progress_mode("off", true), ProgressMode::off);
  EXPECT_EQ(parse_progress_mode("plain", true), ProgressMode::plain);
  EXPECT_THROW(parse_progress_mode("loud", true), UsageError);
}

TEST(ProgressMode, OffIsNeverDue) {
  Progress progress(ProgressMode::off, 0.0, ProgressShape{});
  EXPECT_FALSE(progress.due(std::int64_t{1} << 62));
  Progress plain(ProgressMode::plain, 0.0, ProgressShape{});
  EXPECT_TRUE(plain.due(std::int64_t{1} << 62));
}

// --- practice checks ------------------------------------------------------------------------

diagnosis::PracticeInputs cuda_run() {
  diagnosis::PracticeInputs in;
  in.cuda = true;
  in.profiled = true;
  in.device_records = true;
  in.training = true;
  in.cores = 16;
  in.workers = 8;
  in.torch_threads = 8;
  in.loader_busy_threads = 3.0;
  in.steps = 100;
  in.fresh_batches = 100;
  in.fresh_samples = 25600;
  in.uint8_bytes_per_sample = 12288;
  in.pinned = true;
  in.pinned_bytes = 20'000'000;
  in.pinned_h2d_bytes_per_s = 50e9;
  in.pageable_h2d_bytes_per_s = 10e9;
  in.h2d_copies = 200;
  in.h2d_bytes = 25600 * 12288 + 25600 * 8;
  in.seed = 7;
  in.order = Order::chunk;
  in.augment = Augment::none;
  return in;
}

const diagnosis::PracticeCheck& check(const std::vector<diagnosis::PracticeCheck>& checks,
                                      const std::string& name) {
  const auto it = std::find_if(checks.begin(), checks.end(),
                               [&](const diagnosis::PracticeCheck& c) { return c.name == name; });
  if (it == checks.end()) throw std::runtime_error("no check " + name);
  return *it;
}

/// The check warns, and its finding holds `text`.
::testing::AssertionResult warns(const diagnosis::PracticeCheck& c, const std::string& text) {
  if (c.status == "warn" && contains(c.finding, text)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c.name << " is " << c.status << ": " << c.finding;
}

/// The check `name` of the practices of `in`, worded with pipebench's flags.
diagnosis::PracticeCheck flagged_check(const diagnosis::PracticeInputs& in,
                                       const std::string& name) {
  return check(diagnosis::check_practices(in, flag_language()), name);
}

TEST(Practices, AWellBehavedCudaRunPassesEveryCheck) {
  const auto checks = diagnosis::check_practices(cuda_run(), flag_language());
  ASSERT_EQ(checks.size(), 8u);
  for (const char* name : {"pinned_memory", "host_sync", "device_tensors", "transfer_dtype",
                           "workers", "training_loop"}) {
    EXPECT_EQ(check(checks, name).status, "ok") << name << ": " << check(checks, name).finding;
    EXPECT_TRUE(check(checks, name).advice.empty()) << name;
  }
  EXPECT_TRUE(contains(check(checks, "pinned_memory").finding,
                       "50.0 GB/s vs 10.0 GB/s pageable (pinned/pageable 5.00x)"))
      << check(checks, "pinned_memory").finding;
  EXPECT_EQ(check(checks, "determinism").status, "info");
  EXPECT_TRUE(contains(check(checks, "determinism").finding, "--seed 7"));
}

TEST(Practices, PageableSlotsAndPageableCopiesAreWarnings) {
  diagnosis::PracticeInputs in = cuda_run();
  in.pinned = false;
  EXPECT_EQ(flagged_check(in, "pinned_memory").status, "warn");
  EXPECT_TRUE(contains(flagged_check(in, "pinned_memory").advice, "ulimit -l"));
  in = cuda_run();
  in.pageable_h2d_copies = 100;
  in.pageable_h2d_bytes = 4'000'000;
  const diagnosis::PracticeCheck c = flagged_check(in, "pinned_memory");
  EXPECT_TRUE(warns(c, "100 other copies (4.0 MB)"));
}

TEST(Practices, SyncsInsideTheStepAreCountedPerStep) {
  diagnosis::PracticeInputs in = cuda_run();
  in.step_syncs = 100;
  in.step_sync_ns = 250'000'000;
  in.host_sync_idle_share = 0.12;
  const diagnosis::PracticeCheck c = flagged_check(in, "host_sync");
  EXPECT_TRUE(warns(c, "100 host syncs inside the steps (1.00 per step, 250.0 ms"));
  EXPECT_TRUE(contains(c.advice, "--sync-every"));
  in.host_sync_idle_share = 0.001;  // cheap syncs: worth knowing, not a warning
  EXPECT_EQ(flagged_check(in, "host_sync").status, "info");
}

TEST(Practices, CopiesBeyondTheLoadersBatchesAreFlagged) {
  diagnosis::PracticeInputs in = cuda_run();
  in.h2d_copies = 200 + 300;  // three extra copies per step
  const diagnosis::PracticeCheck c = flagged_check(in, "device_tensors");
  EXPECT_TRUE(warns(c, "300 host-to-device copies that are not batches (3.00 per step)"));
  in.device_records = false;
  EXPECT_EQ(flagged_check(in, "device_tensors").status, "n/a");
}

TEST(Practices, FloatTransfersAreFlagged) {
  diagnosis::PracticeInputs in = cuda_run();
  in.h2d_bytes = 25600ull * 12288 * 4;  // float32 samples crossed the bus
  const diagnosis::PracticeCheck c = flagged_check(in, "transfer_dtype");
  EXPECT_TRUE(warns(c, "4.00x the uint8 sample"));
}

TEST(Practices, WorkerCountsAgainstCores) {
  diagnosis::PracticeInputs in = cuda_run();
  in.workers = 32;
  EXPECT_EQ(flagged_check(in, "workers").status, "warn");
  EXPECT_TRUE(contains(flagged_check(in, "workers").advice, "--workers 16"));

  in = cuda_run();  // CPU training: LibTorch's threads compete with the loader's
  in.cuda = false;
  in.training_on_cpu = true;
  in.cores = 2;
  in.workers = 2;
  in.torch_threads = 2;
  in.loader_busy_threads = 1.5;
  const diagnosis::PracticeCheck over = flagged_check(in, "workers");
  EXPECT_EQ(over.status, "warn");
  EXPECT_TRUE(contains(over.advice, "oversubscribed: 3.50 busy threads on 2 cores")) << over.advice;

  in = cuda_run();  // input-bound with the bottleneck saturated: more workers
  in.input_bound = true;
  in.bottleneck_stage = "decode";
  in.bottleneck_busy = 0.97;
  in.workers = 4;
  in.loader_busy_threads = 3.9;
  const diagnosis::PracticeCheck under = flagged_check(in, "workers");
  EXPECT_EQ(under.status, "warn");
  EXPECT_TRUE(contains(under.advice, "decode saturated at 4 workers: use --workers 16"))
      << under.advice;
  in.workers = 16;
  in.loader_busy_threads = 15.5;
  EXPECT_TRUE(contains(flagged_check(in, "workers").advice, "--echo"));
}

TEST(Practices, CpuRunsHaveNoBusChecksAndDeterministicRunsSayOk) {
  diagnosis::PracticeInputs in = cuda_run();
  in.cuda = false;
  in.device_records = false;
  in.deterministic = true;
  const auto checks = diagnosis::check_practices(in, flag_language());
  for (const char* name : {"pinned_memory", "device_tensors", "transfer_dtype"}) {
    EXPECT_EQ(check(checks, name).status, "n/a") << name;
  }
  EXPECT_EQ(check(checks, "determinism").status, "ok");
  in.profiled = false;
  EXPECT_EQ(flagged_check(in, "host_sync").status, "n/a");
}

TEST(Practices, APythonLoopsDeviceHabitsComeWithWhatToWriteInstead) {
  diagnosis::PracticeInputs in = cuda_run();
  diagnosis::LoopHabits& h = in.habits;
  h.forwards = h.training_forwards = h.cuda_forwards = h.convolutions = true;
  h.bf16_supported = true;
  // float32 training with cuDNN's benchmark off: advice worth trying, not a fault.
  diagnosis::PracticeCheck c = check(diagnosis::check_practices(in), "training_loop");
  EXPECT_EQ(c.status, "info") << c.finding;
  EXPECT_TRUE(contains(c.finding, "training forwards run in float32 (no torch.autocast)"))
      << c.finding;
  EXPECT_TRUE(contains(c.advice,
                       "dtype=torch.bfloat16):` to use the tensor cores (bfloat16 "
                       "needs no GradScaler)"))
      << c.advice;
  EXPECT_TRUE(contains(c.advice, "torch.backends.cudnn.benchmark = True")) << c.advice;
  h.autocast_dtype = "float16";
  h.cudnn_benchmark = true;
  c = check(diagnosis::check_practices(in), "training_loop");
  EXPECT_TRUE(contains(c.finding, "autocast to float16 on a device that computes in bfloat16"))
      << c.finding;
  EXPECT_FALSE(contains(c.advice, "cudnn")) << c.advice;
  h.autocast_dtype = "bfloat16";
  c = check(diagnosis::check_practices(in), "training_loop");
  EXPECT_EQ(c.status, "ok") << c.finding;
  EXPECT_TRUE(contains(c.finding, "autocast to bfloat16")) << c.finding;
  // Evaluation with autograd on is a fault on any device.
  h.eval_grad_forwards = 12;
  h.eval_grad_site = "eval.py:9";
  c = check(diagnosis::check_practices(in), "training_loop");
  EXPECT_TRUE(warns(c,
                    "12 forwards of modules in eval() with autograd on (first at "
                    "eval.py:9)"));
  // Host tensors moved every step, seen where they are written, CUPTI or not.
  in.device_records = false;
  h.host_tensor_moves = 400;
  h.host_tensor_site = "train.py:40 .to()";
  c = check(diagnosis::check_practices(in), "device_tensors");
  EXPECT_TRUE(warns(c, "(4.00 per step; most at train.py:40 .to())"));
  // None of it on the CPU, where there are no tensor cores or cuDNN.
  in = cuda_run();
  in.habits.forwards = in.habits.training_forwards = in.habits.convolutions = true;
  EXPECT_EQ(check(diagnosis::check_practices(in), "training_loop").status, "ok");
}

TEST(Practices, JsonHasOneObjectPerCheck) {
  const auto json =
      diagnosis::practices_json(diagnosis::check_practices(cuda_run(), flag_language()));
  ASSERT_EQ(json.size(), 8u);
  EXPECT_EQ(json[0]["name"], "pinned_memory");
  EXPECT_TRUE(json[0]["advice"].is_null());
  EXPECT_EQ(json[5]["status"], "info");
}

TEST(Practices, EachFrontEndReadsItsOwnWords) {
  diagnosis::PracticeInputs in = cuda_run();
  in.workers = 32;  // more than cores: advice names the workers setting
  in.cores = 16;
  in.deterministic = false;  // advice names the deterministic switch
  in.step_syncs = 40;
  in.host_sync_idle_share = 0.2;  // advice names how to read the loss less often
  diagnosis::Language python = diagnosis::field_language();
  python.terms = {"", "", "", "torch.use_deterministic_algorithms(True)", ""};
  std::string flags, fields;
  for (const auto& c : diagnosis::check_practices(in, flag_language())) {
    flags += c.finding + "|" + c.advice + "\n";
  }
  for (const auto& c : diagnosis::check_practices(in, python))
    fields += c.finding + "|" + c.advice + "\n";
  EXPECT_TRUE(contains(flags, "--workers 16")) << flags;
  EXPECT_TRUE(contains(flags, "--seed 7")) << flags;
  EXPECT_TRUE(contains(flags, "--deterministic")) << flags;
  EXPECT_TRUE(contains(flags, "(--sync-every)")) << flags;
  EXPECT_TRUE(contains(fields, "workers=16")) << fields;
  EXPECT_TRUE(contains(fields, "seed=7")) << fields;
  EXPECT_TRUE(contains(fields, "torch.use_deterministic_algorithms(True)")) << fields;
  EXPECT_FALSE(contains(fields, "--")) << fields;   // a keyword user is never told a flag
  EXPECT_FALSE(contains(fields, " ()")) << fields;  // no empty aside for a switch it lacks
  EXPECT_FALSE(contains(fields, "with )")) << fields;
}

// --- sweep ----------------------------------------------------------------------------------

/// A grid point as the flags give it: echo as text, the cache in MiB.
SweepPoint point(AutoCount workers, AutoCount prefetch, const std::string& echo, Order order,
                 std::uint64_t cache_mb) {
  return {workers, prefetch, EchoOptions::parse(echo), order, cache_mb << 20};
}

TEST(SweepGrid, ListsMultiplyInTheGivenOrder) {
  SweepAxes axes;
  axes.workers = "1,2,4";
  axes.echo = "1,auto:3";
  const SweepGrid g = parse_grid(axes, SweepPoint{}, 8);
  const auto points = g.points();
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(points[0], point(1, 4, "1", Order::chunk, 512));
  EXPECT_EQ(points[1], point(1, 4, "auto:3", Order::chunk, 512));
  EXPECT_EQ(points[5], point(4, 4, "auto:3", Order::chunk, 512));
}

TEST(SweepGrid, DecodeIsAnAxisOfItsOwn) {
  SweepAxes axes;
  axes.workers = "4";
  axes.decode = "cpu,gpu,auto";
  const auto points = parse_grid(axes, SweepPoint{}, 8).points();
  ASSERT_EQ(points.size(), 3u);
  EXPECT_EQ(points[0].decode, Decode::cpu);
  EXPECT_EQ(points[2].decode, Decode::automatic);
  EXPECT_TRUE(contains(describe(points[1]), "decode gpu")) << describe(points[1]);
  LoaderOptions o;
  points[1].apply_to(o);
  EXPECT_EQ(o.image.decode, Decode::gpu);
  EXPECT_EQ(SweepPoint::of(o).decode, Decode::gpu);
  axes.decode = "cpu,nvjpeg";
  EXPECT_THROW((void)parse_grid(axes, SweepPoint{}, 8), UsageError);
}

TEST(SweepGrid, WithoutListsSweepsWorkersAndEcho) {
  const auto points = parse_grid(SweepAxes{}, point(0, 2, "1", Order::random, 64), 8).points();
  ASSERT_EQ(points.size(), 6u);  // workers 1, 4, 8 x echo 1, 2
  EXPECT_EQ(points[0], point(1, 2, "1", Order::random, 64));
  EXPECT_EQ(points[3], point(4, 2, "2", Order::random, 64));
  EXPECT_EQ(points[5].workers, 8u);
  EXPECT_EQ(parse_grid(SweepAxes{}, SweepPoint{}, 1).points().size(), 2u);  // one core
}

TEST(SweepGrid, BadListsAreUsageErrorsNamingTheFlag) {
  const auto error_of = [](SweepAxes axes) {
    try {
      (void)parse_grid(axes, SweepPoint{}, 4);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // One bad list at a time: what the message says of it.
  const struct {
    std::string SweepAxes::*list;
    const char* value;
    const char* says;
  } bad[] = {
      {&SweepAxes::workers, "1,,2", "--workers 1,,2: empty value"},
      {&SweepAxes::prefetch, "2,x", "--prefetch 2,x: x is not 1 to 256, or auto"},
      {&SweepAxes::prefetch, "0", "--prefetch 0"},
      // The range is the field table's, as in gpufeed.Loader(workers=).
      {&SweepAxes::workers, "2,auto,1025", "1025 is not 0 to 1024, or auto"},
      {&SweepAxes::cache_mb, "64,2000000",
       "--cache-mb 64,2000000: 2000000 is not a whole number in [0, 1048576]"},
      {&SweepAxes::order, "chunk,shuffled", "shuffled is not sequential, random or chunk"},
      {&SweepAxes::echo, "1,99", "--echo=99"},
      {&SweepAxes::workers, "2,2", "2 is listed twice"},
  };
  for (const auto& b : bad) {
    SweepAxes one;
    one.*b.list = b.value;
    EXPECT_TRUE(contains(error_of(one), b.says)) << error_of(one);
  }
  SweepAxes a;
  a.workers = "1,2,3,4,5,6,7,8";
  a.prefetch = "1,2,3,4,5,6,7,8";
  a.cache_mb = "1,2,3,4,5";
  EXPECT_TRUE(contains(error_of(a), "320 settings")) << error_of(a);
}

SweepRow row(unsigned workers, double rate, std::uint64_t rss) {
  SweepRow r;
  r.point.workers = workers;
  r.samples_per_s = rate;
  r.peak_rss_bytes = rss;
  return r;
}

TEST(SweepBest, FastestWinsAndNearTiesGoToLessMemory) {
  std::vector<SweepRow> rows{row(1, 1000, 100), row(2, 2000, 300), row(4, 1960, 200)};
  EXPECT_EQ(best_row(rows), 2u);  // within 3% of the fastest, with less memory
  rows[2].samples_per_s = 1900;
  EXPECT_EQ(best_row(rows), 1u);
  rows[1].error = "out of memory";
  EXPECT_EQ(best_row(rows), 2u);
  for (SweepRow& r : rows) r.error = "failed";
  EXPECT_EQ(best_row(rows), std::nullopt);
}

TEST(SweepConfirmation, ComparesTheRecommendedNeighbourWithTheFirstSetting) {
  std::vector<SweepRow> rows{row(1, 1000, 100), row(2, 1900, 100), row(4, 1950, 100)};
  rows[0].recommendation = "--workers 2";
  rows[0].setting = Setting::of(Knob::workers, 2);
  rows[0].predicted_util = 0.9;
  rows[1].device_util = 0.88;
  Confirmation c = confirm_recommendation(rows);
  EXPECT_EQ(c.status, "confirmed");
  EXPECT_TRUE(contains(c.text, "--workers 2 (predicted util 90.0%)")) << c.text;
  EXPECT_TRUE(contains(c.text, "+90% samples/s, util 88.0%")) << c.text;

  rows[1].samples_per_s = 1010;
  EXPECT_EQ(confirm_recommendation(rows).status, "not_confirmed");

  rows[0].recommendation = "--workers 8";
  rows[0].setting = Setting::of(Knob::workers, 8);
  c = confirm_recommendation(rows);
  EXPECT_EQ(c.status, "not_in_grid");
  EXPECT_TRUE(contains(c.text, "add --workers 8 to the sweep")) << c.text;

  rows[0].recommendation = "keep the loss on the device";
  rows[0].setting.reset();
  EXPECT_EQ(confirm_recommendation(rows).status, "not_in_grid");
  rows[0].recommendation.clear();
  EXPECT_EQ(confirm_recommendation(rows).status, "no_recommendation");
}

TEST(SweepConfirmation, EveryKnobIsAPointOfTheGrid) {
  const SweepPoint p = point(2, 4, "1", Order::random, 512);
  EXPECT_EQ(with_setting(p, Setting::of(Knob::workers, 1)).workers, 1u);
  EXPECT_EQ(with_setting(p, Setting::of(Knob::prefetch, 8)).prefetch, 8u);
  EXPECT_EQ(with_setting(p, Setting::of(Knob::echo, 2)).echo, EchoOptions{2});
  EXPECT_EQ(with_setting(p, Setting::of(Order::chunk)).order, Order::chunk);
  EXPECT_EQ(with_setting(p, Setting::of(Knob::cache_bytes, 1024ull << 20)).cache_bytes,
            1024ull << 20);
  // A point moves LoaderOptions there and back, typed all the way.
  LoaderOptions o;
  with_setting(p, Setting::of(Knob::prefetch, 8)).apply_to(o);
  EXPECT_EQ(o.resources.prefetch, 8u);
  EXPECT_EQ(o.sampling.order, Order::random);
  EXPECT_EQ(SweepPoint::of(o), with_setting(p, Setting::of(Knob::prefetch, 8)));
  EXPECT_EQ(flag_spelling(Setting::of(Knob::cache_bytes, 1024ull << 20)), "--cache-mb 1024");
  EXPECT_EQ(flag_spelling(Setting::of(Order::chunk)), "--order chunk");
}

TEST(FieldFlags, NameLoaderFieldsOnceAndCountInWholeUnits) {
  std::set<std::string_view> fields;
  for (const FieldFlag& f : kFieldFlags) {
    EXPECT_NE(find_field(f.field), nullptr) << f.field << " is not a LoaderOptions field";
    EXPECT_TRUE(fields.insert(f.field).second) << f.field;
    EXPECT_TRUE(f.flag.starts_with("--")) << f.flag;
    // A flag in MiB for a field in bytes: its range in MiB is whole.
    EXPECT_EQ(field_range(f.field).high % (std::uint64_t{1} << f.shift), 0u) << f.field;
  }
  EXPECT_EQ(field_flag("cache_bytes"), "--cache-mb");
  EXPECT_EQ(field_flag("batch_size"), "--batch");
  EXPECT_EQ(field_flag("chunk_window"), "--chunk-window");  // no flag of its own
  EXPECT_EQ(flag_value_text(Setting::of(Knob::cache_bytes, 256ull << 20)), "256");
  EXPECT_EQ(flag_value_text(Setting::of(Knob::workers, 3)), "3");
  EXPECT_EQ(flag_unit_range("cache_bytes").high, kMaxBytesSetting >> 20);
  try {
    check_field_range("chunk_window", 0);
    ADD_FAILURE() << "chunk_window=0 passed";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.render(field_flag), "--chunk-window=0: use 1 to 1048576");
  }
}

TEST(SweepOutput, CsvHasAHeaderAndOneLinePerSettingWithQuotedText) {
  std::vector<SweepRow> rows{row(1, 1234.5, 100), row(2, 0, 0)};
  rows[0].verdict = "not input-bound";
  rows[0].device_util = 0.5;
  rows[1].error = "model \"cnn\" ran out of memory";
  const std::string csv = sweep_csv(rows);
  const auto lines = std::count(csv.begin(), csv.end(), '\n');
  EXPECT_EQ(lines, 3);
  EXPECT_TRUE(
      contains(csv, "1,4,\"1\",chunk,512,cpu,1234.500,0.500000,0.000000,100,\"not input-bound\""))
      << csv;
  EXPECT_TRUE(
      contains(csv, "2,4,\"1\",chunk,512,cpu,,,,,\"\",\"\",\"\",\"model \"\"cnn\"\" ran out"))
      << csv;
  const auto json = sweep_json(rows, 0, Confirmation{"no_recommendation", "none"});
  EXPECT_EQ(json["settings"].size(), 2u);
  EXPECT_EQ(json["best"], 0);
  EXPECT_TRUE(json["settings"][1]["samples_per_s"].is_null());
  EXPECT_EQ(json["recommendation"]["status"], "no_recommendation");
}

}  // namespace
}  // namespace gpufeed::tools::pipebench
