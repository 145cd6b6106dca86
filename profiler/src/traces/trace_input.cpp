#include "gpufeed/profiler/trace_input.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "gpufeed/profiler/error.hpp"
#include "traces/gzip_file.hpp"

namespace gpufeed::profiler {

namespace {

using nlohmann::json;

// ChromeTrace's layout: host ranges in process 1, device d in process 100 + d.
constexpr std::int64_t kHostPid = 1;
constexpr std::int64_t kDevicePidBase = 100;
constexpr std::string_view kProducer = "\"producer\":\"gpufeed profiler\"";
constexpr std::size_t kSniffBytes = 4096;

struct Reader {
  TraceInput& in;
  std::int64_t origin = 0;
  std::map<std::string, std::size_t> unknown;

  static bool number(const json& e, const char* key, double& out) {
    const auto it = e.find(key);
    if (it == e.end() || !it->is_number()) return false;
    out = it->get<double>();
    return std::isfinite(out);
  }
  static std::int64_t integer(const json& o, const char* key, std::int64_t fallback) {
    const auto it = o.find(key);
    return it != o.end() && it->is_number_integer() ? it->get<std::int64_t>() : fallback;
  }

  void add(const json& e) {
    ++in.events;
    if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) {
      ++in.malformed;
      return;
    }
    if (e["ph"] != "X") return;  // metadata and flows: correlation ids sit on both ends
    double ts = 0, dur = 0;
    const auto name = e.find("name");
    const auto cat = e.find("cat");
    if (!number(e, "ts", ts) || !number(e, "dur", dur) || dur < 0 || name == e.end() ||
        !name->is_string() || cat == e.end() || !cat->is_string()) {
      ++in.malformed;
      return;
    }
    const std::int64_t begin = origin + std::llround(ts * 1e3);
    const std::int64_t end = begin + std::llround(dur * 1e3);
    const std::string& n = name->get_ref<const std::string&>();
    const std::string& c = cat->get_ref<const std::string&>();
    const json args = e.contains("args") && e["args"].is_object() ? e["args"] : json::object();
    const std::int64_t pid = integer(e, "pid", -1);
    const std::int64_t tid = integer(e, "tid", 0);
    const auto correlation =
        static_cast<std::uint64_t>(std::max<std::int64_t>(0, integer(args, "correlation", 0)));
    if (pid == kHostPid) {
      in.timeline.host.push_back({c, begin, end, static_cast<std::uint64_t>(tid),
                                  integer(args, "arg", kNoArg), correlation,
                                  n == c ? std::string() : n});
    } else if (c == "gap") {
      // the writer's own analysis; analyzed again from scratch
    } else if (const auto kind = parse_activity_kind(c); kind && pid >= kDevicePidBase) {
      DeviceActivity a;
      a.kind = *kind;
      a.device = static_cast<std::uint32_t>(pid - kDevicePidBase);
      a.stream = static_cast<std::uint32_t>(tid);
      a.begin_ns = begin;
      a.end_ns = end;
      a.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, integer(args, "bytes", 0)));
      a.correlation = correlation;
      a.pageable = args.value("pageable", false);
      a.name = n;
      in.timeline.device.push_back(std::move(a));
    } else {
      ++unknown[c];
    }
  }
};

/// The writer puts one event per line: what precedes the damage of a cut-off file survives.
void read_lines(std::string_view text, Reader& reader) {
  std::size_t pos = text.find('\n');
  while (pos != std::string_view::npos && pos < text.size()) {
    const std::size_t next = text.find('\n', pos + 1);
    std::string_view line =
        text.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1);
    pos = next;
    while (!line.empty() && (line.back() == ',' || line.back() == ' ' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    if (line.empty() || line.front() != '{') continue;
    const json e = json::parse(line, nullptr, false);
    if (e.is_discarded()) {
      ++reader.in.events;
      ++reader.in.malformed;
      continue;
    }
    reader.add(e);
  }
}

}  // namespace

TraceInput parse_gpufeed_trace(const std::string& text, const std::string& source) {
  TraceInput in;
  in.path = source;
  in.format = "gpufeed";
  Reader reader{in, 0, {}};
  if (const auto at = text.find("\"origin_ns\":"); at != std::string::npos) {
    reader.origin = std::strtoll(text.c_str() + at + 12, nullptr, 10);
  }
  const json doc = json::parse(text, nullptr, false);
  if (!doc.is_discarded() && doc.is_object() && doc.contains("traceEvents") &&
      doc["traceEvents"].is_array()) {
    for (const json& e : doc["traceEvents"]) reader.add(e);
    if (const auto info = doc.find("distributedInfo"); info != doc.end() && info->is_object()) {
      in.timeline.rank = info->value("rank", -1);
      in.timeline.world_size = info->value("world_size", 0);
    }
  } else {
    in.truncated = true;
    read_lines(text, reader);
    // The header line holds "distributedInfo":{"rank":R,"world_size":W} ahead of the events.
    constexpr std::string_view kRankKey = "\"distributedInfo\":{\"rank\":";
    if (const auto at = text.find(kRankKey); at != std::string::npos) {
      const char* p = text.c_str() + at + kRankKey.size();
      char* end = nullptr;
      in.timeline.rank = static_cast<std::int32_t>(std::strtol(p, &end, 10));
      constexpr std::string_view kWorldKey = "\"world_size\":";
      if (const char* w = std::strstr(end, kWorldKey.data()); w != nullptr) {
        in.timeline.world_size =
            static_cast<std::int32_t>(std::strtol(w + kWorldKey.size(), nullptr, 10));
      }
    }
  }
  std::vector<std::string>& w = in.timeline.warnings;
  if (in.timeline.host.empty() && in.timeline.device.empty()) {
    throw TraceError(source + " holds no readable trace events" +
                     (in.truncated ? " (the JSON is damaged)" : ""));
  }
  if (in.truncated) {
    w.push_back(source + " is truncated or malformed JSON; analysed the " +
                std::to_string(in.events - in.malformed) + " complete events before the damage");
  }
  if (in.malformed > 0) {
    w.push_back(std::to_string(in.malformed) + " events of " + source +
                " were unreadable and skipped");
  }
  for (const auto& [kind, n] : reader.unknown) {
    w.push_back("skipped " + std::to_string(n) + " events of unknown kind '" + kind + "'");
  }
  in.timeline.normalize();
  return in;
}

TraceInput read_trace(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw TraceError(path + " is a directory; give a trace file (.json or .json.gz)");
  }
  const std::string text = detail::read_maybe_gzip(path);
  if (text.substr(0, kSniffBytes).find(kProducer) != std::string::npos) {
    return parse_gpufeed_trace(text, path);
  }
  KinetoTrace k = KinetoTrace::parse(text, path);
  TraceInput in;
  in.path = path;
  in.format = "kineto";
  in.timeline = std::move(k.timeline);
  in.events = k.counts.events;
  in.malformed = k.counts.malformed;
  in.truncated = k.truncated;
  in.kineto = std::move(k.counts);
  return in;
}

}  // namespace gpufeed::profiler
