// Recording a run and analyzing it: recorder + CUPTI around the run, the pipeline facts only
// the caller knows, the gap analysis and the advice over it.
#include "gpufeed/diagnosis/diagnosis.hpp"
#include "gpufeed/base/errors.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include "gpufeed/diagnosis/recommend.hpp"
#include "gpufeed/pipeline/echo.hpp"
#include "gpufeed/profiler/recorder.hpp"

namespace gpufeed::diagnosis {

namespace {

namespace fs = std::filesystem;

bool has_step_ranges(const profiler::Timeline& t) {
  return std::any_of(t.host.begin(), t.host.end(), [](const profiler::HostRange& r) {
    return r.name == profiler::range_names::step;
  });
}

}  // namespace

void mark_consumer_only(profiler::GapReport& r, const Language& language) {
  r.device_timeline = "the consumer's own time between batches (no training stage)";
  r.warnings.insert(r.warnings.begin(),
                    "no training stage: the consumer's time between batches stands in for device "
                    "steps, so utilization here is the consumer's; use " +
                        language.term(Term::training_stage) + " to measure the device");
  std::erase_if(r.recommendations, [](const profiler::Recommendation& rec) {
    return rec.kind == "echo" || rec.kind == "host_sync" || rec.kind == "launch";
  });
}

Recording::Recording(bool enabled, bool cuda) : enabled_(enabled) {
  profiler::Recorder& recorder = profiler::Recorder::global();
  recorder.set_enabled(enabled_);
  recorder.clear();
  if (enabled_ && cuda) {
    // Logs one line and stays off where CUPTI cannot run; the analysis then uses the steps.
    cupti_ = profiler::CuptiCollector::instance().start();
  }
}

Recording::~Recording() {
  if (cupti_) profiler::CuptiCollector::instance().stop();
}

void Recording::stop() {
  if (collected_) return;
  Diagnosis& d = collected_.emplace();
  d.profiled = enabled_;
  profiler::CuptiCollector& cupti = profiler::CuptiCollector::instance();
  if (cupti_) cupti.stop();
  if (!enabled_) return;
  const profiler::RecorderSnapshot snapshot = profiler::Recorder::global().snapshot();
  d.recorder_events = snapshot.events.size();
  d.recorder_dropped = snapshot.dropped;
  d.timeline = profiler::timeline_from(snapshot);
  if (cupti_) {
    cupti.append_to(d.timeline);
    d.cupti = cupti.stats();
    cupti_ = false;
  }
}

Diagnosis Recording::finish(const RunFacts& facts, const Language& language) {
  stop();
  Diagnosis d = std::move(*collected_);
  if (!enabled_) return d;
  d.timeline.rank = facts.rank;
  d.timeline.world_size = facts.world_size;
  if (!facts.process_ranges.empty()) {
    d.timeline.host.insert(d.timeline.host.end(), facts.process_ranges.begin(),
                           facts.process_ranges.end());
    d.timeline.normalize();
  }
  d.has_steps = has_step_ranges(d.timeline);
  d.facts = pipeline_facts(facts);
  d.analyzed_timeline = d.has_steps ? d.timeline : with_consumer_steps(d.timeline);
  d.report = profiler::analyze(d.analyzed_timeline, profiler::AnalysisOptions{}, d.facts);
  advise(d.report, d.facts, facts.input_pool);
  if (!d.has_steps) mark_consumer_only(d.report, language);
  return d;
}

profiler::Timeline with_consumer_steps(const profiler::Timeline& timeline) {
  profiler::Timeline t = timeline;
  std::map<std::uint64_t, std::vector<const profiler::HostRange*>> waits;
  for (const profiler::HostRange& r : timeline.host) {
    if (r.name == profiler::range_names::wait) waits[r.thread].push_back(&r);
  }
  for (auto& [thread, list] : waits) {
    std::sort(list.begin(), list.end(),
              [](const auto* a, const auto* b) { return a->begin_ns < b->begin_ns; });
    for (std::size_t i = 1; i < list.size(); ++i) {
      if (list[i]->begin_ns <= list[i - 1]->end_ns) continue;
      t.host.push_back({profiler::range_names::step, list[i - 1]->end_ns, list[i]->begin_ns, thread,
                        static_cast<std::int64_t>(i - 1), 0, "consumer"});
    }
  }
  t.normalize();
  return t;
}

profiler::PipelineFacts pipeline_facts(const RunFacts& r) {
  profiler::PipelineFacts f;
  const LoaderStats& s = r.stats;
  f.workers = r.workers;
  if (const unsigned cores = std::thread::hardware_concurrency(); cores > 0) f.cpu_cores = cores;
  f.prefetch = r.prefetch;
  f.echo = r.echo.adaptive ? r.echo.cap : r.echo.factor;
  for (const Stage stage : kLoaderStages) {
    if (s[stage].items > 0 || s[stage].busy_ns > 0) {
      f.stage_busy[stage_name(stage)] = s.busy_fraction(stage);
    }
  }
  if (r.cuda) {
    f.pinned_memory = s.pinned;
    // Batches cross the bus as uint8 and are normalized on the device.
    f.transfer_bytes_per_sample = r.sample.bytes();
    f.uint8_bytes_per_sample = r.sample.bytes();
  }
  f.loader_settings = r.gpufeed_input;
  if (r.input_pool) f.pool_workers = r.input_pool->workers;
  if (r.batch_size > 0) f.samples_per_step = static_cast<double>(r.batch_size);
  f.cache_hit_rate = cache_hit_rate(s);
  f.order = r.order;
  f.cache_bytes = r.cache_bytes;
  if (s.network) {
    const NetworkStats& n = *s.network;
    profiler::NetworkFacts facts;
    facts.requests = n.requests;
    facts.throttled = n.throttled;
    facts.retries = n.retries;
    facts.peak_in_flight = n.peak_in_flight;
    facts.read_requests = n.read_requests;
    facts.mean_first_byte_ms = n.mean_first_byte_ms();
    facts.backoff_ns = n.backoff_ns;
    facts.rate_wait_ns = n.rate_wait_ns;
    facts.rate_limit = n.rate_limit;
    facts.bytes = n.bytes;
    facts.jpeg_layout = r.encoded;
    f.network = facts;
  }
  if (s.chunk_reads > 0 && r.samples_per_chunk > 1) {
    // The least a run can read: every chunk once per epoch it started.
    f.chunk_reads = s.chunk_reads;
    f.chunks_read_once = std::min(s.chunk_reads, r.chunks * std::max<std::uint64_t>(1, r.epochs));
  }
  return f;
}

std::string per_rank_path(const std::string& path, std::int32_t rank, std::int32_t world_size) {
  std::string out = path;
  const std::string mark = "{rank}";
  bool marked = false;
  for (std::size_t at = out.find(mark); at != std::string::npos; at = out.find(mark, at)) {
    out.replace(at, mark.size(), std::to_string(std::max(rank, 0)));
    marked = true;
  }
  if (marked || world_size <= 1) return out;
  const std::size_t slash = out.find_last_of('/');
  const std::size_t dot = out.find_last_of('.');
  const bool has_extension =
      dot != std::string::npos && (slash == std::string::npos || dot > slash);
  const std::string tag = ".rank" + std::to_string(rank);
  return has_extension ? out.insert(dot, tag) : out + tag;
}

void check_writable(const char* option, const std::string& path) {
  if (path.empty()) return;
  const fs::path parent = fs::absolute(fs::path(path)).parent_path();
  std::error_code ec;
  if (fs::is_directory(path, ec)) {
    throw Error(std::string(option) + " " + path + " is a directory; give a file name");
  }
  if (!fs::is_directory(parent, ec)) {
    throw Error(std::string(option) + " " + path + ": directory " + parent.string() +
                " does not exist; create it or choose another path");
  }
  if (::access(parent.c_str(), W_OK) != 0) {
    throw Error(std::string(option) + " " + path + ": cannot write into " + parent.string() + " (" +
                std::strerror(errno) + "); choose a writable directory");
  }
}

}  // namespace gpufeed::diagnosis
