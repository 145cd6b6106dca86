// pipebench sweep: every setting of a grid through the same dataset and training stage.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <thread>

#include "common/cli.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/text.hpp"
#include "pipebench/commands.hpp"
#include "pipebench/profile_session.hpp"
#include "pipebench/run.hpp"

namespace gpufeed::tools::pipebench {

namespace {

constexpr const char* kDefaultCsv = "pipebench-sweep.csv";
constexpr const char* kDefaultJson = "pipebench-sweep.json";

BenchOptions with_point(BenchOptions o, const SweepPoint& p) {
  p.apply_to(o.loader);
  return o;
}

/// The first recommendation that changes one loader setting (a point of a grid), else the
/// first one.
const profiler::Recommendation* sweepable(const std::vector<profiler::Recommendation>& recs) {
  for (const profiler::Recommendation& r : recs) {
    if (r.settings.size() == 1 && r.words.empty()) return &r;
  }
  return recs.empty() ? nullptr : &recs.front();
}

void fill_row(SweepRow& row, const BenchReport& report, const diagnosis::Diagnosis& d) {
  row.samples_per_s = samples_per_s(report);
  row.input_wait_share = diagnosis::input_wait_share(report.run.stats);
  row.peak_rss_bytes = report.peak_rss_bytes;
  if (d.analyzed()) row.device_util = d.report.device_util;
  const bool device_side = d.analyzed();  // without steps there is no utilization to predict
  if (d.analyzed() || d.consumer_only()) {
    row.verdict = profiler::verdict_text(d.report.verdict);
    row.bottleneck_stage = d.report.bottleneck_stage;
    if (const profiler::Recommendation* rec = sweepable(d.report.recommendations)) {
      row.recommendation = rec->action(flag_spelling);
      if (rec->settings.size() == 1 && rec->words.empty()) row.setting = rec->settings.front();
      if (device_side) row.predicted_util = rec->predicted_device_util;
    }
  }
}

}  // namespace

int run_sweep(const BenchOptions& given, const SweepAxes& axes) {
  reject_unsupported(given);
  if (!given.trace.empty() || !given.report.empty()) {
    throw UsageError("--trace and --report describe one run; use them with pipebench run");
  }
  BenchOptions options = given;
  options.model = model_name(given);
  const testing::StallOverride stall = stall_override_for(options);
  if (options.epochs == 0 && options.steps == 0) options.epochs = kDefaultSweepEpochs;
  // Off a terminal the per-setting lines are the log; progress lines would bury them.
  if (options.progress == "auto" && ::isatty(STDERR_FILENO) != 1) options.progress = "off";
  const std::vector<SweepPoint> points =
      parse_grid(axes, SweepPoint::of(options.loader),
                 std::max(1u, std::thread::hardware_concurrency()))
          .points();
  for (const SweepPoint& p : points) check_options(with_point(options, p).loader);  // usage first
  const std::string csv_path = axes.csv.empty() ? kDefaultCsv : axes.csv;
  const std::string json_path = options.json.empty() ? kDefaultJson : options.json;
  diagnosis::check_writable("--csv", csv_path);  // fail now, not after the sweep
  diagnosis::check_writable("--json", json_path);

  stop_on_interrupt(kProgram, "reporting the settings that finished (again to quit at once)");
  const DeviceChoice device = choose_device(options.device);
  const BenchDataset data(options);
  TrainingOptions training_opts;
  std::unique_ptr<TrainingStage> training;
  std::vector<SweepRow> rows;
  std::printf("sweep       %zu settings on %s, model %s, %s each\n", points.size(),
              device.used.str().c_str(), options.model.c_str(),
              options.steps != 0 ? (std::to_string(options.steps) + " steps").c_str()
                                 : (std::to_string(options.epochs) + " epochs").c_str());
  std::fflush(stdout);
  for (std::size_t i = 0; i < points.size() && stop_signal() == 0; ++i) {
    const BenchOptions o = with_point(options, points[i]);
    SweepRow row;
    row.point = points[i];
    try {
      reset_peak_rss();
      Loader loader(loader_options_for(o, data, device));
      if (!training && o.model != "none")
        training = make_training(o, device, loader, training_opts);
      const std::unique_ptr<Progress> progress = make_progress(o, loader, training != nullptr);
      ProfileSession profile(o, device.used);
      const RunResult run = run_benchmark(loader, run_plan(o), training.get(), progress.get());
      if (run.interrupted_by != 0) break;  // a part of a run is no row to compare
      const BenchReport report = make_report(loader, data, o, device, run);
      fill_row(row, report, profile.finish(report));
      std::printf("%-11s %zu/%zu %s: %.0f samples/s\n", "setting", i + 1, points.size(),
                  describe(row.point).c_str(), row.samples_per_s);
    } catch (const UsageError&) {
      throw;
    } catch (const std::exception& e) {
      row.error = first_line(e.what());
      std::printf("%-11s %zu/%zu %s: failed: %s\n", "setting", i + 1, points.size(),
                  describe(row.point).c_str(), row.error.c_str());
    }
    std::fflush(stdout);
    rows.push_back(std::move(row));
  }

  if (const int signal = stop_signal(); signal != 0) {
    std::printf("%-11s by %s after %zu of %zu settings\n", "interrupted",
                signal_name(signal).c_str(), rows.size(), points.size());
    if (rows.empty()) return 128 + signal;
  }
  print_sweep_table(rows);
  const std::optional<std::size_t> best = best_row(rows);
  if (best) {
    const SweepRow& b = rows[*best];
    std::printf("%-11s %s: %.0f samples/s", "best", describe(b.point).c_str(), b.samples_per_s);
    if (rows.front().error.empty() && rows.front().samples_per_s > 0) {
      std::printf(" (%.2fx the first setting)", b.samples_per_s / rows.front().samples_per_s);
    }
    std::printf("\n");
  } else {
    std::printf("%-11s none: every setting failed\n", "best");
  }
  const Confirmation confirmation = confirm_recommendation(rows);
  std::printf("%-11s %s\n", "advice", confirmation.text.c_str());
  diagnosis::write_text_atomically(csv_path, sweep_csv(rows));
  nlohmann::json json = sweep_json(rows, best, confirmation);
  json["interrupted"] =
      stop_signal() != 0 ? nlohmann::json(signal_name(stop_signal())) : nlohmann::json(nullptr);
  json["settings_planned"] = points.size();
  write_json_file(json_path, json);
  std::printf("%-11s %s, %s\n", "wrote", csv_path.c_str(), json_path.c_str());
  std::fflush(stdout);
  if (const int signal = stop_signal(); signal != 0) return 128 + signal;
  return best ? kExitOk : kExitFailure;
}

}  // namespace gpufeed::tools::pipebench
