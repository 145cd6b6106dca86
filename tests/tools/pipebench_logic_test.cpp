// pipebench's pure parts: the progress line, its words in the practice checks and the sweep
// grid.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "../diagnosis/cuda_run.hpp"
#include "common/cli.hpp"
#include "common/flags.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/diagnosis/diagnosis.hpp"
#include "gpufeed/diagnosis/practices.hpp"
#include "pipebench/language.hpp"
#include "pipebench/progress.hpp"
#include "pipebench/sweep.hpp"

namespace gpufeed::tools::pipebench {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// --- progress -------------------------------------------------------------------------------

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
// The checks themselves are diagnosis's (tests/diagnosis/practices_test.cpp); here, that
// pipebench's words reach them.

TEST(Practices, EachFrontEndReadsItsOwnWords) {
  diagnosis::PracticeInputs in = diagnosis::cuda_run();
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
