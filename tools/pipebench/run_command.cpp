// pipebench run: one setting, then the report, the diagnosis and the practice checks.
#include <unistd.h>

#include <cstdio>

#include "common/cli.hpp"
#include "common/flags.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/diagnosis/practice_inputs.hpp"
#include "gpufeed/diagnosis/practices.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "pipebench/commands.hpp"
#include "pipebench/profile_session.hpp"
#include "pipebench/run.hpp"
#include "pipebench/training/summary.hpp"

namespace gpufeed::tools::pipebench {

namespace {

constexpr double kLineInterval = 0.5;    ///< seconds between live-line updates
constexpr double kPlainInterval = 10.0;  ///< seconds between plain progress lines

std::uint64_t planned_steps(const BenchOptions& options, const Loader& loader) {
  const RunPlan plan = run_plan(options);
  if (plan.steps != 0) return plan.steps;
  const EchoOptions& echo = options.loader.echo;
  if (echo.adaptive) return 0;  // echoes depend on how late input is
  return plan.epochs * loader.batches_per_epoch() * echo.factor;
}

}  // namespace

DeviceChoice choose_device(const std::string& requested) {
  const Device device = Device::parse(requested);
  return DeviceChoice{device, pipeline::resolve_device(device)};
}

testing::StallOverride stall_override_for(BenchOptions& options) {
  if (!options.inject_stall) options.inject_stall = testing::injected_stall();
  return testing::StallOverride(options.inject_stall);
}

LoaderOptions loader_options_for(const BenchOptions& options, const BenchDataset& data,
                                 const DeviceChoice& device) {
  LoaderOptions o = options.loader;
  o.source.path = data.path();
  o.output.device = device.used;
  return o;
}

std::unique_ptr<TrainingStage> make_training(const BenchOptions& options,
                                             const DeviceChoice& device, const Loader& loader,
                                             TrainingOptions& training_options) {
  training_options = pipebench::training_options(options);
  training_options.device = device.used;
  if (training_options.model != "none") {
    training_options.input = model_input(loader);
    training_options.num_classes = label_classes(loader, training_options.model);
  }
  return TrainingStage::create(training_options);
}

std::unique_ptr<Progress> make_progress(const BenchOptions& options, const Loader& loader,
                                        bool training) {
  const ProgressMode mode = parse_progress_mode(options.progress, ::isatty(STDERR_FILENO) == 1);
  const double interval = options.progress_every > 0   ? options.progress_every
                          : mode == ProgressMode::line ? kLineInterval
                                                       : kPlainInterval;
  const ProgressShape shape{planned_steps(options, loader), training};
  return std::make_unique<Progress>(mode, interval, shape);
}

int run_bench(const BenchOptions& given) {
  reject_unsupported(given);
  stop_on_interrupt(kProgram, "stopping to report what was measured (again to quit at once)");
  BenchOptions options = given;
  options.model = model_name(given);
  const testing::StallOverride stall = stall_override_for(options);
  const DeviceChoice device = choose_device(options.device);
  const BenchDataset data(options);
  Loader loader(loader_options_for(options, data, device));
  for (const std::string& notice : loader.notices()) {
    print_note(kProgram, render_option_names(notice, field_flag));
  }
  TrainingOptions training_opts;
  const std::unique_ptr<TrainingStage> training =
      make_training(options, device, loader, training_opts);
  const std::unique_ptr<Progress> progress = make_progress(options, loader, training != nullptr);
  ProfileSession profile(options, device.used);
  const RunResult run = run_benchmark(loader, run_plan(options), training.get(), progress.get());
  if (run.interrupted_by != 0 && run.batches == 0) {
    print_note(kProgram, "interrupted before the first batch: nothing to report");
    return 128 + run.interrupted_by;
  }
  const BenchReport report = make_report(loader, data, options, device, run);
  const diagnosis::Diagnosis diagnosis = profile.finish(report);
  const std::vector<diagnosis::PracticeCheck> practices = diagnosis::check_practices(
      diagnosis::practice_inputs(report.facts, diagnosis), flag_language());
  print_report(report);
  if (training) std::printf("%-11s %s\n", "model", describe_training(training_opts, run).c_str());
  std::fputs(diagnosis::format_diagnosis(diagnosis, diagnosis::input_wait_share(report.run.stats),
                                         flag_language())
                 .c_str(),
             stdout);
  std::fputs(diagnosis::format_practices(practices).c_str(), stdout);
  std::fflush(stdout);
  write_profile_outputs(options, diagnosis);
  if (!options.json.empty()) {
    nlohmann::json json = report_json(report);
    json["training"] = training ? training_json(training_opts, run) : nlohmann::json(nullptr);
    diagnosis::add_diagnosis_json(json, diagnosis, flag_language());
    json["practices"] = diagnosis::practices_json(practices);
    write_json_file(options.json, json);
  }
  return run.interrupted_by != 0 ? 128 + run.interrupted_by : kExitOk;
}

}  // namespace gpufeed::tools::pipebench
