#include "gpufeed/profiler/kineto_trace.hpp"

#include <nlohmann/json.hpp>

#include "gpufeed/profiler/error.hpp"
#include "traces/gzip_file.hpp"
#include "traces/json_salvage.hpp"
#include "traces/kineto_events.hpp"

namespace gpufeed::profiler {

namespace {

using nlohmann::json;

const json* event_array(const json& doc) {
  if (doc.is_array()) return &doc;
  if (doc.is_object()) {
    const auto it = doc.find("traceEvents");
    if (it != doc.end() && it->is_array()) return &*it;
  }
  return nullptr;
}

/// Reads what survives of a damaged document; returns false when nothing does.
bool read_salvaged(std::string_view text, detail::KinetoEventReader& reader, KinetoTrace& out,
                   const std::string& source, const std::string& error) {
  const detail::Salvage s = detail::salvage_events(text);
  if (!s.found_array || s.objects.empty()) return false;
  for (std::string_view obj : s.objects) {
    const json e = json::parse(obj, nullptr, false);
    if (e.is_discarded()) {
      ++out.counts.events;
      ++out.counts.malformed;
    } else {
      reader.add(e);
    }
  }
  out.truncated = true;
  out.timeline.warnings.push_back(source + " is truncated or malformed (" + error +
                                  "); analysed the " + std::to_string(s.objects.size()) +
                                  " complete events before byte " + std::to_string(s.stopped_at));
  return true;
}

/// Kineto's "distributedInfo": {"rank": 0, "world_size": 8, ...}, when the trace has it.
void read_distributed_info(const json& doc, Timeline& t) {
  const auto it = doc.find("distributedInfo");
  if (it == doc.end() || !it->is_object()) return;
  const json& info = *it;
  if (info.contains("rank") && info["rank"].is_number_integer()) t.rank = info["rank"].get<int>();
  if (info.contains("world_size") && info["world_size"].is_number_integer()) {
    t.world_size = info["world_size"].get<int>();
  }
}

void add_warnings(KinetoTrace& out, const std::string& source) {
  const KinetoCounts& c = out.counts;
  std::vector<std::string>& w = out.timeline.warnings;
  if (c.malformed > 0) {
    w.push_back(std::to_string(c.malformed) + " events of " + source +
                " lack a name, timestamp or duration and were skipped");
  }
  for (const auto& [kind, n] : c.unknown_kinds) {
    w.push_back("skipped " + std::to_string(n) + " events of unknown kind '" + kind + "'");
  }
  if (c.kernels + c.memcpys + c.memsets == 0) {
    w.push_back(source +
                " has no device events (kernel, gpu_memcpy, gpu_memset): was the profiler run "
                "with ProfilerActivity.CUDA? The device timeline falls back to step ranges");
  }
  if (c.implicit_steps > 0) {
    w.push_back("no step ranges: " + std::to_string(c.implicit_steps) +
                " steps are the time from each DataLoader batch to the next request, as "
                "gpufeed.profile takes them");
  }
}

}  // namespace

KinetoTrace KinetoTrace::parse(std::string_view json_text, const std::string& source,
                               const KinetoOptions& options) {
  KinetoTrace out;
  detail::KinetoEventReader reader(options, out);
  json doc;
  std::string error;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e999
    error = e.what();
  }
  if (error.empty()) {
    const json* events = event_array(doc);
    if (events == nullptr) {
      throw TraceError(source + " is not a Chrome trace: no \"traceEvents\" array");
    }
    for (const json& e : *events) reader.add(e);
    read_distributed_info(doc, out.timeline);
  } else if (!read_salvaged(json_text, reader, out, source, error)) {
    throw TraceError(source + " is not readable trace JSON: " + error);
  }
  reader.finish();
  add_warnings(out, source);
  return out;
}

KinetoTrace KinetoTrace::read(const std::string& path, const KinetoOptions& options) {
  return parse(detail::read_maybe_gzip(path), path, options);
}

}  // namespace gpufeed::profiler
