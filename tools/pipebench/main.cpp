// pipebench: measures how fast a gpufeed Loader delivers batches, and which stage limits it.
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "gpufeed/pipeline/errors.hpp"
#include "pipebench/analyze_command.hpp"
#include "pipebench/commands.hpp"
#include "pipebench/options.hpp"

namespace gpufeed::tools::pipebench {
namespace {

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
  BenchOptions sweep_options;
  SweepAxes sweep_axes;
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Run a grid of loader settings, print the table and the best one, write CSV/JSON");
  add_run_options(*sweep, sweep_options, &sweep_axes);
  AnalyzeOptions analyze_options;
  const CLI::App* analyze = add_analyze_command(app, analyze_options);
  const std::vector<const char*> args = with_default_command(argc, argv);
  return run_cli(app, static_cast<int>(args.size()), args.data(), [&] {
    if (run->parsed()) return run_bench(options);
    if (sweep->parsed()) return run_sweep(sweep_options, sweep_axes);
    if (analyze->parsed()) return run_analyze(analyze_options);
    throw gpufeed::UsageError("no command given; run 'pipebench --help'");
  });
}
