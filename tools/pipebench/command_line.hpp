#pragma once
// pipebench's command line: the run, sweep and analyze commands and the options they fill.
// Parsing runs nothing; each command checks its option values when it starts.
#include <vector>

#include <CLI/CLI.hpp>

#include "pipebench/analyze_command.hpp"
#include "pipebench/options.hpp"
#include "pipebench/sweep.hpp"

namespace gpufeed::tools::pipebench {

struct CommandLine {
  BenchOptions run;
  BenchOptions sweep;
  SweepAxes sweep_axes;
  AnalyzeOptions analyze;
  CLI::App* run_command = nullptr;
  CLI::App* sweep_command = nullptr;
  CLI::App* analyze_command = nullptr;
};

/// Adds run, sweep and analyze to `app` (one of them required), bound to `line`.
void add_commands(CLI::App& app, CommandLine& line);

/// `pipebench [options]` means `pipebench run [options]`: the arguments with "run" inserted
/// after the program name when they name no command (nor --help).
std::vector<const char*> with_default_command(int argc, const char* const* argv);

}  // namespace gpufeed::tools::pipebench
