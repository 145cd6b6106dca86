#include "pipebench/command_line.hpp"

#include <string_view>

namespace gpufeed::tools::pipebench {

namespace {

CLI::App* add_analyze_command(CLI::App& app, AnalyzeOptions& o) {
  CLI::App* cmd = app.add_subcommand(
      "analyze",
      "Diagnose a PyTorch profiler (Kineto) trace or a gpufeed trace; with one trace per rank "
      "of a job, compare the ranks and name the straggler");
  cmd->add_option("trace", o.traces, "TRACE.json or TRACE.json.gz; several: one per rank")
      ->required();
  cmd->add_option("--json", o.json, "write the report as JSON to this file");
  cmd->add_option("--report", o.report, "write a self-contained HTML report to this file");
  return cmd;
}

}  // namespace

void add_commands(CLI::App& app, CommandLine& line) {
  app.require_subcommand(1);
  app.footer("'pipebench [options]' is 'pipebench run [options]'; see 'pipebench run --help'.");
  line.run_command = app.add_subcommand("run", "Run the loader and report (the default command)");
  add_run_options(*line.run_command, line.run);
  line.sweep_command = app.add_subcommand(
      "sweep", "Run a grid of loader settings, print the table and the best one, write CSV/JSON");
  add_run_options(*line.sweep_command, line.sweep, &line.sweep_axes);
  line.analyze_command = add_analyze_command(app, line.analyze);
}

std::vector<const char*> with_default_command(int argc, const char* const* argv) {
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

}  // namespace gpufeed::tools::pipebench
