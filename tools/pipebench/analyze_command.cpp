#include "pipebench/analyze_command.hpp"

#include <cstdio>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/diagnosis/diagnosis.hpp"
#include "gpufeed/diagnosis/input_pool.hpp"
#include "gpufeed/diagnosis/recommend.hpp"
#include "gpufeed/profiler/gap_report.hpp"
#include "gpufeed/profiler/html_report.hpp"
#include "gpufeed/profiler/idle_breakdown.hpp"
#include "gpufeed/profiler/job_report.hpp"
#include "gpufeed/profiler/kineto_trace.hpp"
#include "gpufeed/profiler/report_json.hpp"
#include "gpufeed/profiler/summary.hpp"
#include "gpufeed/profiler/trace_input.hpp"
#include "pipebench/profile_session.hpp"

namespace gpufeed::tools::pipebench {

namespace {

using nlohmann::json;

bool has_range(const profiler::Timeline& t, const std::string& name) {
  for (const profiler::HostRange& r : t.host) {
    if (r.name == name) return true;
  }
  return false;
}

double ms(std::int64_t ns) {
  return static_cast<double>(ns) * 1e-6;
}

void print_source(const profiler::TraceInput& in) {
  std::printf("%-19s %s (%s trace, %zu events%s)\n", "trace", in.path.c_str(), in.format.c_str(),
              in.events, in.truncated ? ", truncated" : "");
  if (in.kineto) {
    const profiler::KinetoCounts& c = *in.kineto;
    std::printf(
        "%-19s %zu kernels, %zu memcpys, %zu memsets, %zu syncs, %zu runtime calls, "
        "%zu CPU ops, %zu annotations\n",
        "", c.kernels, c.memcpys, c.memsets, c.syncs, c.runtime_calls, c.cpu_ops, c.annotations);
  } else {
    std::printf("%-19s %zu host ranges, %zu device activities\n", "", in.timeline.host.size(),
                in.timeline.device.size());
  }
}

void print_temporal(const profiler::TemporalBreakdown& t) {
  if (t.span_ns <= 0) return;
  std::printf(
      "temporal breakdown (HolisticTraceAnalysis method) over %.3f ms of device time: idle "
      "%.2f%%, compute %.2f%%, non-compute %.2f%%\n",
      ms(t.span_ns), 100.0 * t.share(t.idle_ns), 100.0 * t.share(t.compute_ns),
      100.0 * t.share(t.non_compute_ns));
}

json temporal_json(const profiler::TemporalBreakdown& t) {
  return {{"span_ns", t.span_ns},
          {"idle_ns", t.idle_ns},
          {"compute_ns", t.compute_ns},
          {"non_compute_ns", t.non_compute_ns},
          {"idle_share", t.share(t.idle_ns)},
          {"compute_share", t.share(t.compute_ns)},
          {"non_compute_share", t.share(t.non_compute_ns)}};
}

void print_breakdown(const std::vector<profiler::StreamIdle>& streams) {
  std::printf(
      "idle time per stream (HolisticTraceAnalysis method: gaps between consecutive "
      "device activities)\n");
  if (streams.empty()) {
    std::printf("  no device activity in the trace\n");
    return;
  }
  std::printf("  %6s %8s %10s %12s %12s %12s %12s %12s\n", "device", "stream", "activities",
              "busy ms", "idle ms", "host wait", "kernel wait", "other");
  for (const profiler::StreamIdle& s : streams) {
    std::printf("  %6u %8u %10zu %12.3f %12.3f %12.3f %12.3f %12.3f\n", s.device, s.stream,
                s.activities, ms(s.busy_ns), ms(s.idle_ns()), ms(s.host_wait_ns),
                ms(s.kernel_wait_ns), ms(s.other_ns));
  }
}

json breakdown_json(const std::vector<profiler::StreamIdle>& streams) {
  json out = json::array();
  for (const profiler::StreamIdle& s : streams) {
    out.push_back({{"device", s.device},
                   {"stream", s.stream},
                   {"activities", s.activities},
                   {"busy_ns", s.busy_ns},
                   {"idle_ns", s.idle_ns()},
                   {"host_wait_ns", s.host_wait_ns},
                   {"kernel_wait_ns", s.kernel_wait_ns},
                   {"other_ns", s.other_ns},
                   {"host_wait_gaps", s.host_wait_gaps},
                   {"kernel_wait_gaps", s.kernel_wait_gaps},
                   {"other_gaps", s.other_gaps}});
  }
  return out;
}

json source_json(const profiler::TraceInput& in) {
  json j = {{"path", in.path},
            {"format", in.format},
            {"events", in.events},
            {"malformed", in.malformed},
            {"truncated", in.truncated},
            {"host_ranges", in.timeline.host.size()},
            {"device_activities", in.timeline.device.size()}};
  if (in.kineto) {
    const profiler::KinetoCounts& c = *in.kineto;
    j["kinds"] = {{"kernels", c.kernels},
                  {"memcpys", c.memcpys},
                  {"memsets", c.memsets},
                  {"syncs", c.syncs},
                  {"runtime_calls", c.runtime_calls},
                  {"cpu_ops", c.cpu_ops},
                  {"annotations", c.annotations},
                  {"flows", c.flows},
                  {"unknown", c.unknown_kinds}};
  }
  return j;
}

/// Several traces: one per rank of a job, compared.
int run_job(const AnalyzeOptions& o) {
  if (!o.report.empty()) {
    throw UsageError("--report takes one trace; analyze the rank you want a report of alone");
  }
  std::vector<profiler::TraceInput> inputs;
  std::vector<profiler::Timeline> timelines;
  for (const std::string& path : o.traces) {
    inputs.push_back(profiler::read_trace(path));
    timelines.push_back(inputs.back().timeline);
  }
  const profiler::JobReport job = profiler::analyze_job(timelines);
  for (const profiler::TraceInput& in : inputs) print_source(in);
  std::fputs(profiler::format_job(job).c_str(), stdout);
  std::fflush(stdout);
  if (!o.json.empty()) {
    json j = json::parse(profiler::job_json(job));
    j["traces"] = json::array();
    for (const profiler::TraceInput& in : inputs) j["traces"].push_back(source_json(in));
    diagnosis::write_text_atomically(o.json, j.dump(2) + "\n");
  }
  return kExitOk;
}

}  // namespace

int run_analyze(const AnalyzeOptions& o) {
  if (o.traces.size() > 1) return run_job(o);
  const profiler::TraceInput in = profiler::read_trace(o.traces.front());
  // A pipebench run without a training stage: analyzed as pipebench itself did.
  const bool consumer_only =
      in.format == "gpufeed" && !has_range(in.timeline, "step") && has_range(in.timeline, "wait");
  const profiler::Timeline analyzed =
      consumer_only ? diagnosis::with_consumer_steps(in.timeline) : in.timeline;
  // A trace of another input (torch.profiler's DataLoader ranges) gets no Loader settings.
  profiler::PipelineFacts facts;
  facts.loader_settings = in.format == "gpufeed";
  // A DataLoader that made its batches in the loop's process: its fetches are in the trace.
  std::optional<diagnosis::InputPoolFacts> pool;
  if (!facts.loader_settings) pool = diagnosis::single_process_dataloader(in.timeline);
  profiler::GapReport report = profiler::analyze(analyzed, {}, facts);
  diagnosis::advise(report, facts, pool);
  if (consumer_only) diagnosis::mark_consumer_only(report, flag_language());
  const std::vector<profiler::StreamIdle> streams = profiler::idle_time_breakdown(in.timeline);
  const profiler::TemporalBreakdown temporal = profiler::temporal_breakdown(in.timeline);
  print_source(in);
  std::fputs(profiler::format_summary(report).c_str(), stdout);
  print_temporal(temporal);
  print_breakdown(streams);
  std::fflush(stdout);
  if (!o.json.empty()) {
    json j = json::parse(profiler::report_json(report));
    j["trace"] = source_json(in);
    j["idle_breakdown"] = breakdown_json(streams);
    j["temporal_breakdown"] = temporal_json(temporal);
    diagnosis::write_text_atomically(o.json, j.dump(2) + "\n");
  }
  if (!o.report.empty()) {
    profiler::HtmlReport::Options options;
    options.title = "gpufeed analysis of " + in.path;
    diagnosis::write_text_atomically(o.report,
                                     profiler::HtmlReport::render(analyzed, report, options));
  }
  return kExitOk;
}

}  // namespace gpufeed::tools::pipebench
