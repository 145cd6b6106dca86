// pipebench: measures how fast a gpufeed Loader delivers batches, and which stage limits it.
#include <vector>

#include <CLI/CLI.hpp>

#include "common/cli.hpp"
#include "gpufeed/base/errors.hpp"
#include "pipebench/command_line.hpp"
#include "pipebench/commands.hpp"

int main(int argc, char** argv) {
  using namespace gpufeed::tools;
  using namespace gpufeed::tools::pipebench;
  fail_writes_past_size_limit();
  CLI::App app{"Measure how fast a gpufeed loader delivers batches and which stage limits it",
               kProgram};
  CommandLine line;
  add_commands(app, line);
  const std::vector<const char*> args = with_default_command(argc, argv);
  return run_cli(app, static_cast<int>(args.size()), args.data(), [&] {
    if (line.run_command->parsed()) return run_bench(line.run);
    if (line.sweep_command->parsed()) return run_sweep(line.sweep, line.sweep_axes);
    if (line.analyze_command->parsed()) return run_analyze(line.analyze);
    throw gpufeed::UsageError("no command given; run 'pipebench --help'");
  });
}
