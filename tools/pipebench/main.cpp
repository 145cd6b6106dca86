// pipebench: measures how fast a gpufeed Loader delivers batches, and which stage limits it.
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/errors.hpp"
#include "gpufeed/pipeline/loader.hpp"
#include "pipebench/analyze_command.hpp"
#include "pipebench/dataset.hpp"
#include "pipebench/diagnosis.hpp"
#include "pipebench/options.hpp"
#include "pipebench/report.hpp"
#include "pipebench/run.hpp"
#include "pipebench/training.hpp"
#include "pipebench/training/summary.hpp"

namespace gpufeed::tools::pipebench {
namespace {

DeviceChoice choose_device(const std::string& requested) {
  const std::string resolved = resolve_device(requested);
  return DeviceChoice{requested, resolved, resolved};
}

int run_bench(const BenchOptions& given) {
  reject_unsupported(given);
  BenchOptions options = given;
  options.model = model_name(given);
  const DeviceChoice device = choose_device(options.device);
  LoaderOptions loader_opts = loader_options(options);
  const BenchDataset data(options);
  loader_opts.path = data.path();
  loader_opts.device = device.used;
  Loader loader(loader_opts);
  TrainingOptions training_opts = training_options(options);
  training_opts.device = device.used;
  if (training_opts.model != "none") {
    training_opts.input = model_input(loader);
    training_opts.num_classes = label_classes(loader, training_opts.model);
  }
  const std::unique_ptr<TrainingStage> training = TrainingStage::create(training_opts);
  ProfileSession profile(options, device.used);
  const RunResult run = run_benchmark(loader, run_plan(options), training.get());
  const BenchReport report = make_report(loader, data, options, device, run);
  const Diagnosis diagnosis = profile.finish(report);
  print_report(report);
  if (training) std::printf("%-11s %s\n", "model", describe_training(training_opts, run).c_str());
  print_diagnosis(diagnosis, report);
  std::fflush(stdout);
  write_profile_outputs(options, diagnosis);
  if (!options.json.empty()) {
    nlohmann::json json = report_json(report);
    json["training"] = training ? training_json(training_opts, run) : nlohmann::json(nullptr);
    add_diagnosis_json(json, diagnosis);
    write_json_file(options.json, json);
  }
  return kExitOk;
}

/// `pipebench [options]` means `pipebench run [options]`.
std::vector<const char*> with_default_command(int argc, char** argv) {
  std::vector<const char*> args(argv, argv + argc);
  const auto explicit_command = [&] {
    if (argc < 2) return false;
    const std::string_view first = argv[1];
    return first == "run" || first == "sweep" || first == "analyze" || first == "-h" ||
           first == "--help";
  };
  if (!explicit_command()) args.insert(args.begin() + 1, "run");
  return args;
}

}  // namespace
}  // namespace gpufeed::tools::pipebench

int main(int argc, char** argv) {
  using namespace gpufeed::tools;
  using namespace gpufeed::tools::pipebench;
  CLI::App app{"Measure how fast a gpufeed loader delivers batches and which stage limits it",
               kProgram};
  app.require_subcommand(1);
  app.footer("'pipebench [options]' is 'pipebench run [options]'; see 'pipebench run --help'.");
  BenchOptions options;
  CLI::App* run = app.add_subcommand("run", "Run the loader and report (the default command)");
  add_run_options(*run, options);
  const CLI::App* sweep =
      app.add_subcommand("sweep", "Try settings and recommend (not supported yet)")->allow_extras();
  AnalyzeOptions analyze_options;
  const CLI::App* analyze = add_analyze_command(app, analyze_options);
  const std::vector<const char*> args = with_default_command(argc, argv);
  return run_cli(app, static_cast<int>(args.size()), args.data(), [&] {
    if (run->parsed()) return run_bench(options);
    if (sweep->parsed()) {
      throw gpufeed::UsageError(
          "pipebench sweep is not supported yet; run one setting at a time with pipebench run");
    }
    if (analyze->parsed()) return run_analyze(analyze_options);
    throw gpufeed::UsageError("no command given; run 'pipebench --help'");
  });
}
