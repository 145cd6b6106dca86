// The diagnosis on the terminal, in --json, and as --trace / --report files.
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/text.hpp"
#include "gpufeed/diagnosis/diagnosis.hpp"
#include "gpufeed/profiler/chrome_trace.hpp"
#include "gpufeed/profiler/error.hpp"
#include "gpufeed/profiler/html_report.hpp"
#include "gpufeed/profiler/report_json.hpp"
#include "gpufeed/profiler/summary.hpp"
#include "gpufeed/storage/error.hpp"
#include "gpufeed/storage/pending_files.hpp"

namespace gpufeed::diagnosis {

namespace {

using nlohmann::json;

std::string sources(const Diagnosis& d) {
  std::string out = format("%-11s recorder %llu ranges, %llu dropped", "profile",
                           static_cast<unsigned long long>(d.recorder_events),
                           static_cast<unsigned long long>(d.recorder_dropped));
  if (d.cupti) {
    out += format("; CUPTI %llu records, %llu dropped",
                  static_cast<unsigned long long>(d.cupti->records),
                  static_cast<unsigned long long>(d.cupti->dropped_records));
  }
  return out + "\n";
}

json cupti_json(const Diagnosis& d) {
  if (!d.cupti) return nullptr;
  return {{"records", d.cupti->records},
          {"dropped_records", d.cupti->dropped_records},
          {"dropped_buffers", d.cupti->dropped_buffers},
          {"clock_drift_ns", d.cupti->offset_stop_ns - d.cupti->offset_start_ns}};
}

/// Without a training stage: which stage the consumer waited on, and the input-side advice.
std::string consumer_only(const profiler::GapReport& g, const Language& lang) {
  std::string out;
  for (const profiler::StageShare& s : g.stages) {
    if (s.name != g.bottleneck_stage || g.bottleneck_basis != "input_wait") continue;
    out += format(
        "%-11s while it waited, the loader was mostly in \"%s\" (%.2f threads on "
        "average)\n",
        "", s.name.c_str(), s.share_during_wait);
  }
  for (const profiler::Recommendation& rec : g.recommendations) {
    out += format("%-11s try ", "") + rec.action(lang.setting) + ": " + rec.reason + "\n";
  }
  return out;
}

double seconds(std::int64_t ns) {
  return static_cast<double>(ns) * 1e-9;
}

json bottleneck_json(const LoaderStats& s) {
  const std::optional<Stage> bottleneck = s.bottleneck();
  return bottleneck ? json(stage_name(*bottleneck)) : json(nullptr);
}

[[noreturn]] void fail_write(const std::string& path, int error) {
  const std::string advice = storage::errno_advice(error);  // a full disk, a size limit
  throw profiler::ReportError(
      "cannot write " + path + ": " + std::strerror(error) +
      (advice.empty() ? "; check that its directory exists and is writable" : advice));
}

json decode_json(const DecodeStats& d) {
  json reasons = json::object();
  for (const auto& [reason, count] : d.cpu_reasons) reasons[reason] = count;
  return {{"mode", d.mode},
          {"engines", d.engines.empty() ? json(nullptr) : json(d.engines)},
          {"engine_images", d.engine_images},
          {"cpu_images", d.cpu_images},
          {"cpu_reasons", reasons},
          {"failed_parts", d.failed_parts},
          {"engine_device_s", seconds(d.engine_device_ns)}};
}

}  // namespace

json number_or_null(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json network_json(const std::optional<NetworkStats>& network) {
  if (!network) return nullptr;
  const NetworkStats& n = *network;
  return {{"requests", n.requests},
          {"bytes", n.bytes},
          {"retries", n.retries},
          {"throttled", n.throttled},
          {"peak_in_flight", n.peak_in_flight},
          {"read_requests", n.read_requests},
          {"backoff_s", seconds(n.backoff_ns)},
          {"rate_wait_s", seconds(n.rate_wait_ns)},
          {"rate_limit", n.rate_limit},
          {"mean_first_byte_ms", n.mean_first_byte_ms()},
          {"request_s", seconds(n.request_ns)}};
}

json stats_json(const LoaderStats& s) {
  json tuning = json::array();
  for (const TuningChange& c : s.tuning) {
    tuning.push_back({{"time_s", seconds(c.time_ns)},
                      {"knob", knob_name(c.knob)},
                      {"from", c.from},
                      {"to", c.to},
                      {"stage", stage_name(c.stage)},
                      {"reason", c.reason}});
  }
  json stages = json::object();
  for (const StageInfo& info : kStages) {
    if (info.stage == Stage::step) continue;  // the trainer's, not the loader's
    const StageStats& st = s[info.stage];
    stages[info.name] = {{"busy_s", seconds(st.busy_ns)},
                         {"busy_frac", s.busy_fraction(info.stage)},
                         {"items", st.items}};
  }
  return {{"wall_s", seconds(s.wall_ns)},
          {"workers", s.workers},
          {"cpu_share", s.cpu_share},
          {"prefetch", s.prefetch},
          {"tuning", tuning},
          {"batches", s.batches},
          {"samples", s.samples},
          {"fresh_batches", s.fresh_batches},
          {"echoed_batches", s.echoed_batches},
          {"reaugmented_batches", s.reaugmented_batches},
          {"skipped_samples", s.skipped_samples},
          {"stages", stages},
          {"bottleneck", bottleneck_json(s)},
          {"queue",
           {{"mean_ready", s.mean_ready_batches},
            {"max_ready", s.max_ready_batches},
            {"ready", s.ready_batches}}},
          {"cache",
           {{"hits", s.cache_hits},
            {"misses", s.cache_misses},
            {"hit_rate", number_or_null(cache_hit_rate(s))},
            {"peak_bytes", s.cache_peak_bytes},
            {"chunk_reads", s.chunk_reads},
            {"bytes_read", s.bytes_read}}},
          {"network", network_json(s.network)},
          {"decode", decode_json(s.decode)},
          {"memory",
           {{"slot_bytes", s.slot_bytes},
            {"pinned", s.pinned},
            {"pinned_bytes", s.pinned_bytes},
            {"device_bytes", s.device_bytes}}},
          {"h2d",
           {{"pinned_bytes_per_s", s.pinned_h2d_bytes_per_s},
            {"pageable_bytes_per_s", s.pageable_h2d_bytes_per_s}}}};
}

json run_json(const RunFacts& f) {
  const LoaderStats& s = f.stats;
  const double wall_s = seconds(s.wall_ns);
  json stages = json::object();
  for (const StageInfo& info : kStages) {
    const StageStats& st = s[info.stage];
    if (st.items == 0) continue;
    stages[info.name] = {
        {"busy_frac", s.busy_fraction(info.stage)}, {"items", st.items}, {"busy_ns", st.busy_ns}};
  }
  return {{"samples_per_s", wall_s > 0 ? static_cast<double>(s.samples) / wall_s : 0.0},
          {"device_util", nullptr},
          {"idle_by_cause",
           {{"input_wait", input_wait_share(s)},
            {"host_sync", nullptr},
            {"launch", nullptr},
            {"other", nullptr}}},
          {"bottleneck_stage", bottleneck_json(s)},
          {"stages", stages},
          {"echo",
           {{"fresh_batches", s.fresh_batches},
            {"echoed_batches", s.echoed_batches},
            {"reaugmented_batches", s.reaugmented_batches}}},
          {"decode", s.decode.engine_images + s.decode.cpu_images > 0 ? decode_json(s.decode)
                                                                      : json(nullptr)},
          {"steps", f.steps},
          {"epochs", f.epochs},
          {"wall_s", wall_s},
          {"samples", s.samples}};
}

std::string format_diagnosis(const Diagnosis& d, double input_wait_share, const Language& lang) {
  if (!d.profiled) {
    const std::string how = lang.term(Term::profiling_off);
    return format("%-11s off", "profile") + (how.empty() ? "" : " (" + how + ")") + "\n";
  }
  std::string out = sources(d);
  if (!d.analyzed()) {
    if (d.has_steps) {
      out += format("%-11s too few training steps for a steady-state window; run longer\n", "");
    } else {
      out += format("%-11s device utilization needs a training stage: use ", "") +
             lang.term(Term::training_stage) + "\n";
    }
    out += format("%-11s the consumer waited for input %.1f%% of the run\n", "",
                  100.0 * input_wait_share);
    if (d.consumer_only()) out += consumer_only(d.report, lang);
    return out;
  }
  return out + "diagnosis (steady state, training steps against the input pipeline)\n" +
         profiler::format_summary(d.report, lang.setting);
}

void add_diagnosis_json(json& j, const Diagnosis& d, const Language& lang) {
  j["recorder"] = {
      {"enabled", d.profiled}, {"events", d.recorder_events}, {"dropped", d.recorder_dropped}};
  j["cupti"] = cupti_json(d);
  j["profile"] =
      d.profiled ? json::parse(profiler::report_json(d.report, 2, lang.setting)) : json(nullptr);
  if (!d.analyzed()) return;  // keeps device_util null and input_wait as the consumer's share
  const profiler::GapReport& g = d.report;
  j["device_util"] = g.device_util;
  json& idle = j["idle_by_cause"];
  for (const profiler::GapCause c : {profiler::GapCause::input_wait, profiler::GapCause::host_sync,
                                     profiler::GapCause::launch, profiler::GapCause::other}) {
    idle[profiler::gap_cause_name(c)] = g.idle_share(c);
  }
  j["bottleneck_stage"] = g.has_bottleneck() ? json(g.bottleneck_stage) : json(nullptr);
  j["verdict"] = profiler::verdict_text(g.verdict);
  json& stages = j["stages"];
  for (const profiler::StageShare& s : g.stages) {
    if (stages.contains(s.name)) stages[s.name]["share_during_wait"] = s.share_during_wait;
  }
}

void write_trace(const std::string& path, const Diagnosis& d) {
  std::ostringstream text;
  profiler::ChromeTrace::write(text, d.timeline, &d.report);
  write_text_atomically(path, text.str());
}

void write_report(const std::string& path, const Diagnosis& d, const Language& lang) {
  profiler::HtmlReport::Options options;
  options.spelling = lang.setting;
  options.title = d.has_steps ? "gpufeed: " + std::string(profiler::verdict_text(d.report.verdict))
                              : "gpufeed: input pipeline only (no training steps were marked)";
  write_text_atomically(path, profiler::HtmlReport::render(d.analyzed_timeline, d.report, options));
}

void write_text_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  const storage::PendingFile pending(temporary);  // removed if a signal ends the program
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out) {
      const int error = errno;
      std::remove(temporary.c_str());
      fail_write(path, error);
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    fail_write(path, error);
  }
}

}  // namespace gpufeed::diagnosis
