#pragma once
// pipebench's command line: every option of `pipebench run` and how it maps to the Loader.
#include <cstdint>
#include <string>

#include <CLI/CLI.hpp>

#include "gpufeed/pipeline/loader.hpp"
#include "gpufeed/pipeline/stall_injection.hpp"
#include "pipebench/sweep.hpp"
#include "pipebench/training.hpp"

namespace gpufeed::tools::pipebench {

inline constexpr const char* kProgram = "pipebench";
/// The embedded default dataset (no --data, no --synthetic) and its chunking.
inline constexpr const char* kDefaultSynthetic = "8192:64x64x3";
inline constexpr std::uint64_t kDefaultSyntheticChunk = 64;
inline constexpr unsigned kDefaultEpochs = 3;
inline constexpr unsigned kDefaultSweepEpochs = 2;  ///< per setting

struct BenchOptions {
  std::string data;
  std::string synthetic;
  /// The loader's settings, typed as the flags are parsed (its range checks are the field
  /// table's); the path and the device are set when the run starts.
  LoaderOptions loader;
  /// --inject-stall; unset: GPUFEED_INJECT_STALL's, resolved when the run starts
  /// (stall_override_for()). Not a LoaderOptions field: the loaders take it from
  /// testing::StallOverride.
  std::optional<pipeline::StallInjection> inject_stall;
  std::string device = "auto";
  unsigned epochs = 0;  ///< 0: kDefaultEpochs (unless --steps)
  std::uint64_t steps = 0;
  std::string json;
  bool no_profile = false;        ///< recorder off, no diagnosis (to A/B the profiler's cost)
  std::string progress = "auto";  ///< auto | line | plain | off
  double progress_every = 0;      ///< seconds; 0: 0.5 for a live line, 10 for plain lines
  /// Training stage (--model); empty: cnn for the embedded default, none otherwise.
  std::string model;
  std::string optimizer = "sgd";
  double lr = 0;  ///< 0: 0.01 for sgd, 0.001 for adamw
  bool eval = false;
  std::string amp = "none";
  bool channels_last = false;
  bool cudnn_benchmark = false;
  bool deterministic = false;
  std::uint32_t sync_every = 0;
  std::string trace;
  std::string report;
};

/// How long a run goes: `steps` batches when set, else `epochs` epochs.
struct RunPlan {
  std::uint64_t epochs = kDefaultEpochs;
  std::uint64_t steps = 0;
};

/// The options of `pipebench run`; with `axes`, those of `pipebench sweep`, where --workers,
/// --prefetch, --echo, --order and --cache-mb take lists into `axes` (and --csv is added).
void add_run_options(CLI::App& command, BenchOptions& options, SweepAxes* axes = nullptr);
/// Throws UsageError for options that cannot go together (--no-profile with --trace/--report).
void reject_unsupported(const BenchOptions& options);
RunPlan run_plan(const BenchOptions& options);
/// --size as it is given: "224x224".
std::string size_text(const LoaderOptions& options);
/// True without --data and --synthetic: the run uses the embedded default dataset.
bool embedded_default(const BenchOptions& options);
/// --model as given, or the default: cnn for the embedded default, none otherwise.
std::string model_name(const BenchOptions& options);
/// The training stage's options from the flags (the caller sets device, input, num_classes).
TrainingOptions training_options(const BenchOptions& options);

}  // namespace gpufeed::tools::pipebench
