#pragma once
// The profiler's view of a pipebench run: recorder (and CUPTI) around the run, then the gap
// analysis against the training stage's steps, printed, merged into --json and written as
// --trace / --report.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpufeed/profiler/cupti_collector.hpp"
#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/pipeline_facts.hpp"
#include "gpufeed/profiler/timeline.hpp"
#include "pipebench/options.hpp"
#include "pipebench/report.hpp"

namespace gpufeed::tools::pipebench {

/// The stages the loader's workers (and its echo stage) run: what a run's facts and practice
/// checks sum over.
inline constexpr Stage kPipelineStages[] = {Stage::read, Stage::decode,    Stage::assemble,
                                            Stage::h2d,  Stage::normalize, Stage::echo};

struct Diagnosis {
  bool profiled = false;        ///< the recorder ran (no --no-profile)
  bool has_steps = false;       ///< a training stage marked "step" ranges
  profiler::Timeline timeline;  ///< what was recorded (the --trace)
  /// Without a training stage: `timeline` plus the consumer's own time between batches as
  /// "step" ranges, so waits and the stages behind them can still be analyzed (the --report).
  /// With one: the same as `timeline`.
  profiler::Timeline analyzed_timeline;
  /// The gap report of `analyzed_timeline`; without a training stage its "device" is the
  /// consumer (device_timeline says so) and device-side advice is left out.
  profiler::GapReport report;
  profiler::PipelineFacts facts;
  std::uint64_t recorder_events = 0;
  std::uint64_t recorder_dropped = 0;
  std::optional<profiler::CuptiStats> cupti;  ///< when CUPTI collected device activity

  /// The gap report measures the device against training steps (else only the consumer's wait
  /// share is known).
  [[nodiscard]] bool analyzed() const { return has_steps && report.window_ns() > 0; }
  /// Analyzed against the consumer's own time (no training stage).
  [[nodiscard]] bool consumer_only() const { return !has_steps && report.window_ns() > 0; }
};

/// Profiling for one run: the constructor clears and enables the global recorder (or disables
/// it for --no-profile) and starts CUPTI on a CUDA device; finish() stops collection and
/// analyzes. Checks up front that --trace and --report can be written (UsageError otherwise).
class ProfileSession {
 public:
  ProfileSession(const BenchOptions& options, const std::string& device);
  ~ProfileSession();
  ProfileSession(const ProfileSession&) = delete;
  ProfileSession& operator=(const ProfileSession&) = delete;

  Diagnosis finish(const BenchReport& report);

 private:
  bool enabled_;
  bool cupti_ = false;
};

/// `timeline` with a "step" range between consecutive "wait" ranges of each consumer thread:
/// a stand-in device for runs without a training stage.
profiler::Timeline with_consumer_steps(const profiler::Timeline& timeline);

/// Labels a report of with_consumer_steps() as such (device_timeline, a warning first) and drops
/// the device-side advice (echo, host_sync, launch): there is no device to advise on.
void mark_consumer_only(profiler::GapReport& report);

/// What the recommendations may know: workers, cores, prefetch, echo, stage busy fractions,
/// pinned memory, cache hit rate, chunk reads, bytes per sample.
profiler::PipelineFacts pipeline_facts(const BenchReport& report);

/// The diagnosis after pipebench's own summary: the profiler's summary, or, without a training
/// stage, a plain note that utilization needs one.
void print_diagnosis(const Diagnosis& diagnosis, const BenchReport& report);
/// Fills the --json keys the gap report knows (device_util, idle_by_cause, bottleneck_stage,
/// stage shares during waits) and adds "profile", "recorder" and "cupti".
void add_diagnosis_json(nlohmann::json& json, const Diagnosis& diagnosis);
/// --trace (Chrome trace) and --report (HTML), each written atomically.
void write_profile_outputs(const BenchOptions& options, const Diagnosis& diagnosis);

/// Throws std::runtime_error (naming `option`) when `path` is set and cannot be written: a
/// directory, or in a directory that does not exist or is not writable.
void check_writable(const char* option, const std::string& path);

/// Writes `text` to `path` through a temporary file beside it; std::runtime_error naming the
/// path and what to check on failure.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace gpufeed::tools::pipebench
