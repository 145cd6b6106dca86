#include "gpufeed/profiler/chrome_trace.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <set>
#include <sstream>
#include <unordered_map>

#include "analyze/lanes.hpp"
#include "traces/file_output.hpp"

namespace gpufeed::profiler {

namespace {

using nlohmann::json;

constexpr int kHostPid = 1;
constexpr int kDevicePidBase = 100;
constexpr std::uint64_t kGapTid = 0xFFFFFFFF;

/// Streams events as a JSON array, one per line, without building the whole document.
class EventSink {
 public:
  EventSink(std::ostream& out, std::int64_t origin) : out_(out), origin_(origin) {}
  void add(const json& event) {
    out_ << (first_ ? "\n" : ",\n") << event.dump(-1, ' ', false, json::error_handler_t::replace);
    first_ = false;
  }
  [[nodiscard]] double us(std::int64_t ns) const { return static_cast<double>(ns - origin_) / 1e3; }

 private:
  std::ostream& out_;
  std::int64_t origin_;
  bool first_ = true;
};

json complete(const EventSink& s, std::string name, const char* cat, int pid, std::uint64_t tid,
              std::int64_t begin, std::int64_t end) {
  return {{"name", std::move(name)},
          {"cat", cat},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", s.us(begin)},
          {"dur", static_cast<double>(end - begin) / 1e3}};
}

json metadata(const char* what, int pid, std::uint64_t tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

std::int64_t origin_of(const Timeline& t) {
  std::int64_t o = INT64_MAX;
  for (const HostRange& r : t.host) o = std::min(o, r.begin_ns);
  for (const DeviceActivity& a : t.device) o = std::min(o, a.begin_ns);
  return o == INT64_MAX ? 0 : o;
}

void write_host(EventSink& sink, const Timeline& t) {
  for (const HostRange& r : t.host) {
    json e = complete(sink, r.detail.empty() ? r.name : r.detail, r.name.c_str(), kHostPid,
                      r.thread, r.begin_ns, r.end_ns);
    if (r.arg != kNoArg) e["args"]["arg"] = r.arg;
    if (r.correlation != 0) e["args"]["correlation"] = r.correlation;
    sink.add(e);
  }
  sink.add(metadata("process_name", kHostPid, 0, "host"));
  for (const auto& [tid, name] : detail::host_lane_names(t)) {
    sink.add(metadata("thread_name", kHostPid, tid, name));
  }
}

void write_device(EventSink& sink, const Timeline& t) {
  std::set<std::pair<std::uint32_t, std::uint32_t>> lanes;
  const auto stream_names = detail::stream_lane_names(t);
  for (const DeviceActivity& a : t.device) {
    const int pid = kDevicePidBase + static_cast<int>(a.device);
    json e =
        complete(sink, a.name, activity_kind_name(a.kind), pid, a.stream, a.begin_ns, a.end_ns);
    if (a.bytes > 0) e["args"]["bytes"] = a.bytes;
    if (a.correlation != 0) e["args"]["correlation"] = a.correlation;
    if (a.pageable) e["args"]["pageable"] = true;
    sink.add(e);
    lanes.insert({a.device, a.stream});
  }
  std::set<std::uint32_t> devices;
  for (const auto& [device, stream] : lanes) {
    const int pid = kDevicePidBase + static_cast<int>(device);
    if (devices.insert(device).second) {
      sink.add(metadata("process_name", pid, 0, "device " + std::to_string(device)));
    }
    const auto named = stream_names.find({device, stream});  // none: only syncs and waits
    sink.add(
        metadata("thread_name", pid, stream,
                 named != stream_names.end() ? named->second : "stream " + std::to_string(stream)));
  }
}

void write_flows(EventSink& sink, const Timeline& t) {
  std::unordered_map<std::uint64_t, const HostRange*> launches;
  for (const HostRange& r : t.host) {
    if (r.correlation != 0) launches.emplace(r.correlation, &r);
  }
  for (const DeviceActivity& a : t.device) {
    const auto it = a.correlation != 0 ? launches.find(a.correlation) : launches.end();
    if (it == launches.end() || !a.is_work()) continue;
    const HostRange& h = *it->second;
    sink.add({{"name", "launch"},
              {"cat", "flow"},
              {"ph", "s"},
              {"id", a.correlation},
              {"pid", kHostPid},
              {"tid", h.thread},
              {"ts", sink.us(h.begin_ns)}});
    sink.add({{"name", "launch"},
              {"cat", "flow"},
              {"ph", "f"},
              {"bp", "e"},
              {"id", a.correlation},
              {"pid", kDevicePidBase + static_cast<int>(a.device)},
              {"tid", a.stream},
              {"ts", sink.us(a.begin_ns)}});
  }
}

void write_gaps(EventSink& sink, const GapReport& r, bool device_records) {
  for (const Gap& g : r.gaps) {
    json e = complete(sink, std::string("idle: ") + gap_cause_name(g.cause), "gap", kDevicePidBase,
                      kGapTid, g.begin_ns, g.end_ns);
    for (GapCause c :
         {GapCause::input_wait, GapCause::host_sync, GapCause::launch, GapCause::other}) {
      if (g.by_cause[c] > 0) e["args"][gap_cause_name(c)] = g.by_cause[c];
    }
    sink.add(e);
  }
  if (!device_records)
    sink.add(metadata("process_name", kDevicePidBase, 0, "device (step ranges)"));
  sink.add(metadata("thread_name", kDevicePidBase, kGapTid, "idle gaps (by cause)"));
}

}  // namespace

void ChromeTrace::write(std::ostream& out, const Timeline& timeline, const GapReport* report,
                        const Options& options) {
  const std::int64_t origin = origin_of(timeline);
  out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"origin_ns\":" << origin
      << ",\"producer\":\"gpufeed profiler\"},";
  if (timeline.rank >= 0) {  // Kineto's key, so tools that read PyTorch traces find it too
    out << "\"distributedInfo\":{\"rank\":" << timeline.rank
        << ",\"world_size\":" << timeline.world_size << "},";
  }
  out << "\"traceEvents\":[";
  EventSink sink(out, origin);
  write_host(sink, timeline);
  write_device(sink, timeline);
  if (options.flows) write_flows(sink, timeline);
  if (options.gaps && report != nullptr) write_gaps(sink, *report, !timeline.device.empty());
  out << "\n]}\n";
}

void ChromeTrace::write_file(const std::string& path, const Timeline& timeline,
                             const GapReport* report, const Options& options) {
  std::ostringstream text;
  write(text, timeline, report, options);
  detail::write_text_file(path, text.str(), "Chrome trace");
}

}  // namespace gpufeed::profiler
