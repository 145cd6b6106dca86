#pragma once
// The profiler's view of a run: recorder (and CUPTI) around it, then the gap analysis against
// the training steps, as text, JSON, a Chrome trace and an HTML report. Shared by pipebench and
// the Python package (gpufeed.profile); knows runs only through RunFacts.
#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "gpufeed/diagnosis/language.hpp"
#include "gpufeed/diagnosis/run_facts.hpp"
#include "gpufeed/profiler/cupti_collector.hpp"
#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/pipeline_facts.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::diagnosis {

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

/// Recording one run: the constructor clears the global recorder and enables it (or disables
/// it when `enabled` is false) and starts CUPTI when `cuda`; stop() stops collecting and
/// finish() analyzes. Nothing here throws into the run; CUPTI that cannot start logs one line.
class Recording {
 public:
  Recording(bool enabled, bool cuda);
  ~Recording();
  Recording(const Recording&) = delete;
  Recording& operator=(const Recording&) = delete;

  [[nodiscard]] bool enabled() const { return enabled_; }
  /// Stops collecting: the run is what was recorded until now; work after it (measuring a
  /// remedy, say) is not part of it. finish() stops too if this was not called.
  void stop();
  /// Stops collecting and analyzes; warnings name what to do in `language`.
  Diagnosis finish(const RunFacts& facts, const Language& language = field_language());

 private:
  bool enabled_;
  bool cupti_ = false;
  /// What stop() collected (the timeline and the counts of finish()'s Diagnosis).
  std::optional<Diagnosis> collected_;
};

/// `timeline` with a "step" range between consecutive "wait" ranges of each consumer thread:
/// a stand-in device for runs without a training stage.
profiler::Timeline with_consumer_steps(const profiler::Timeline& timeline);

/// Labels a report of with_consumer_steps() as such (device_timeline, a warning first, saying
/// in `language` how to measure the device) and drops the device-side advice (echo, host_sync,
/// launch): there is no device to advise on.
void mark_consumer_only(profiler::GapReport& report, const Language& language);

/// What the recommendations may know: workers, cores, prefetch, echo, stage busy fractions,
/// pinned memory, cache hit rate, chunk reads, bytes per sample.
profiler::PipelineFacts pipeline_facts(const RunFacts& facts);

/// The diagnosis as pipebench prints it after its own summary: the recorder's counts, then the
/// profiler's summary, or, without training steps, a plain note that utilization needs them
/// and the consumer's wait (`input_wait_share` of the run). Recommended settings are written as
/// `language` says (pipebench: flags; Python: keywords). Ends with a newline.
std::string format_diagnosis(const Diagnosis& diagnosis, double input_wait_share,
                             const Language& language);
/// Fills the --json keys the gap report knows (device_util, idle_by_cause, bottleneck_stage:
/// null unless the run is input-bound, stage shares during waits) and adds "profile" (its
/// recommendations' "action" written in `language`), "recorder" and "cupti".
void add_diagnosis_json(nlohmann::json& json, const Diagnosis& diagnosis, const Language& language);
/// `value`, or null when there is none: how every gpufeed JSON writes a figure it may lack.
nlohmann::json number_or_null(const std::optional<double>& value);

/// A loader's counters as JSON (Python's Loader.stats(), pipebench's "cache", "memory" and
/// "tuning"): wall_s, workers, prefetch, tuning (time_s, knob, from, to, stage, reason),
/// batches, samples, fresh/echoed/reaugmented batches, skipped_samples, stages (busy_s,
/// busy_frac, items; the loader's and the consumer's wait), bottleneck, queue, cache, memory,
/// h2d.
nlohmann::json stats_json(const LoaderStats& stats);
/// The keys every front end's run JSON starts with, from the loader's counters over the run:
/// samples_per_s, device_util (null until the diagnosis fills it), idle_by_cause (input_wait;
/// the others null until the diagnosis fills them), bottleneck_stage, stages (busy_frac, items,
/// busy_ns of each stage that ran), echo, steps, epochs, wall_s, samples.
nlohmann::json run_json(const RunFacts& facts);
/// The Chrome trace of the recorded timeline (opens in Perfetto), written atomically.
void write_trace(const std::string& path, const Diagnosis& diagnosis);
/// The self-contained HTML report, written atomically.
void write_report(const std::string& path, const Diagnosis& diagnosis, const Language& language);

/// Where one rank of a job writes `path`: every "{rank}" replaced by the rank; without one, in
/// a job of several ranks, ".rankR" goes before the extension (run.json -> run.rank1.json).
std::string per_rank_path(const std::string& path, std::int32_t rank, std::int32_t world_size);

/// Throws Error (naming `option`) when `path` is set and cannot be written: a
/// directory, or in a directory that does not exist or is not writable.
void check_writable(const char* option, const std::string& path);

/// Writes `text` to `path` through a temporary file beside it; profiler::ReportError naming the
/// path and what to check on failure.
void write_text_atomically(const std::string& path, const std::string& text);

}  // namespace gpufeed::diagnosis
