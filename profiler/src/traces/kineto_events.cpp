#include "traces/kineto_events.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <functional>
#include <limits>

#include "collect/runtime_api.hpp"

namespace gpufeed::profiler::detail {

namespace {

using nlohmann::json;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool contains_any(const std::string& name, const std::vector<std::string>& patterns) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
    return !p.empty() && name.find(p) != std::string::npos;
  });
}

/// The largest |microseconds| a timestamp or duration may have: its nanoseconds, and the sum of
/// two of them (an event's end), still fit an int64 (about 146 years).
constexpr std::int64_t kMaxMicros = std::numeric_limits<std::int64_t>::max() / 2000;

/// Kineto timestamps are microseconds, integral or fractional; false when `key` is missing,
/// not a finite number, or beyond kMaxMicros.
bool micros_to_ns(const json& e, const char* key, std::int64_t& ns) {
  const auto it = e.find(key);
  if (it == e.end()) return false;
  if (it->is_number_unsigned()) {
    if (it->get<std::uint64_t>() > static_cast<std::uint64_t>(kMaxMicros)) return false;
    ns = static_cast<std::int64_t>(it->get<std::uint64_t>()) * 1000;
    return true;
  }
  if (it->is_number_integer()) {
    const std::int64_t us = it->get<std::int64_t>();
    if (us > kMaxMicros || us < -kMaxMicros) return false;
    ns = us * 1000;
    return true;
  }
  if (it->is_number_float()) {
    const double us = it->get<double>();
    if (!(std::fabs(us) <= static_cast<double>(kMaxMicros))) return false;  // NaN too
    // Not llround(us * 1000): epoch timestamps (about 1.7e15 us) in nanoseconds pass 2^53, where
    // a double resolves only 256 ns, so whole microseconds came out up to 128 ns off and landed
    // on the wrong side of a microsecond boundary. The whole part and the fraction are exact.
    const double whole = std::floor(us);
    ns = static_cast<std::int64_t>(whole) * 1000 + std::llround((us - whole) * 1000.0);
    return true;
  }
  return false;
}

/// An integer field that may be missing, a number or a numeric string.
std::int64_t int_of(const json& obj, const char* key, std::int64_t fallback) {
  const auto it = obj.find(key);
  if (it == obj.end()) return fallback;
  if (it->is_number_unsigned()) {
    const std::uint64_t v = it->get<std::uint64_t>();
    return v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
               ? fallback
               : static_cast<std::int64_t>(v);
  }
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_number_float()) {
    const double v = it->get<double>();
    return std::fabs(v) < 9.2e18 ? static_cast<std::int64_t>(v) : fallback;  // NaN too
  }
  if (it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    char* end = nullptr;
    const long long v = std::strtoll(s.c_str(), &end, 10);
    if (end != s.c_str() && *end == '\0') return v;
    return static_cast<std::int64_t>(std::hash<std::string>{}(s)&0x7FFFFFFF);
  }
  return fallback;
}

const json& args_of(const json& e) {
  static const json kEmpty = json::object();
  const auto it = e.find("args");
  return it != e.end() && it->is_object() ? *it : kEmpty;
}

ActivityKind copy_kind(const std::string& name) {
  if (name.find("HtoD") != std::string::npos) return ActivityKind::memcpy_h2d;
  if (name.find("DtoH") != std::string::npos) return ActivityKind::memcpy_d2h;
  if (name.find("DtoD") != std::string::npos) return ActivityKind::memcpy_d2d;
  return ActivityKind::memcpy_other;
}

enum class Kind {
  device_kernel,
  device_memcpy,
  device_memset,
  sync,
  runtime,
  op,
  annotation,
  skip,
  unknown
};

Kind kind_of(const std::string& cat) {
  if (cat == "kernel") return Kind::device_kernel;
  if (cat == "gpu_memcpy" || cat == "memcpy") return Kind::device_memcpy;
  if (cat == "gpu_memset" || cat == "memset") return Kind::device_memset;
  if (cat == "cuda_sync") return Kind::sync;
  if (cat == "cuda_runtime" || cat == "runtime" || cat == "cuda_driver" || cat == "driver") {
    return Kind::runtime;
  }
  if (cat == "cpu_op" || cat == "operator" || cat == "python_function") return Kind::op;
  if (cat == "user_annotation") return Kind::annotation;
  if (cat == "gpu_user_annotation" || cat == "trace" || cat == "overhead") return Kind::skip;
  return Kind::unknown;
}

}  // namespace

void KinetoEventReader::add(const json& e) {
  KinetoCounts& c = out_.counts;
  ++c.events;
  if (!e.is_object() || !e.contains("ph") || !e["ph"].is_string()) {
    ++c.malformed;
    return;
  }
  const std::string& ph = e["ph"].get_ref<const std::string&>();
  if (ph == "M" || ph == "i" || ph == "I") {
    ++c.metadata;
    return;
  }
  std::int64_t ts = 0;
  const bool has_ts = micros_to_ns(e, "ts", ts);
  if (ph == "s" || ph == "f") {
    if (has_ts) add_flow(e, ts);
    if (!has_ts) ++c.malformed;
    return;
  }
  if (ph != "X") {
    ++c.unknown_kinds["phase " + ph];
    return;
  }
  std::int64_t dur = 0;
  if (!has_ts || !micros_to_ns(e, "dur", dur) || dur < 0 || !e.contains("name") ||
      !e["name"].is_string()) {
    ++c.malformed;
    return;
  }
  const auto cat = e.find("cat");
  std::string category = cat != e.end() && cat->is_string() ? lower(cat->get<std::string>()) : "";
  // torch.profiler without Kineto (a CPU-only build) writes operators without a category, on
  // the process "CPU functions".
  if (category.empty() && e.contains("pid") && e["pid"] == "CPU functions") category = "cpu_op";
  add_complete(e, category, ts, dur);
}

void KinetoEventReader::add_complete(const json& e, const std::string& cat, std::int64_t ts,
                                     std::int64_t dur) {
  KinetoCounts& c = out_.counts;
  const std::string& name = e["name"].get_ref<const std::string&>();
  switch (kind_of(cat)) {
    case Kind::device_kernel:
      ++c.kernels;
      return add_device(e, ActivityKind::kernel, ts, dur);
    case Kind::device_memcpy:
      ++c.memcpys;
      return add_device(e, copy_kind(name), ts, dur);
    case Kind::device_memset:
      ++c.memsets;
      return add_device(e, ActivityKind::memset, ts, dur);
    case Kind::sync:
      ++c.syncs;
      add_device(e,
                 name.find("Wait Event") == std::string::npos ? ActivityKind::sync
                                                              : ActivityKind::stream_wait,
                 ts, dur);
      return;
    case Kind::runtime: {
      ++c.runtime_calls;
      HostRange r{classify_runtime_call(name),
                  ts,
                  ts + dur,
                  static_cast<std::uint64_t>(int_of(e, "tid", 0)),
                  kNoArg,
                  static_cast<std::uint64_t>(int_of(args_of(e), "correlation", 0)),
                  name};
      out_.timeline.host.push_back(std::move(r));
      return;
    }
    case Kind::op:
      ++c.cpu_ops;
      return add_host(e, range_names::cpu_op, ts, dur);
    case Kind::annotation:
      ++c.annotations;
      return add_host(e, name, ts, dur);
    case Kind::skip:
      return;
    case Kind::unknown:
      ++c.unknown_kinds[cat.empty() ? "(no cat)" : cat];
      return;
  }
}

void KinetoEventReader::add_device(const json& e, ActivityKind kind, std::int64_t ts,
                                   std::int64_t dur) {
  const json& a = args_of(e);
  const std::string& name = e["name"].get_ref<const std::string&>();
  DeviceActivity d;
  d.kind = kind;
  d.device = static_cast<std::uint32_t>(int_of(a, "device", int_of(e, "pid", 0)));
  d.stream = static_cast<std::uint32_t>(int_of(a, "stream", int_of(e, "tid", 0)));
  d.begin_ns = ts;
  d.end_ns = ts + dur;
  d.bytes = static_cast<std::uint64_t>(std::max<std::int64_t>(0, int_of(a, "bytes", 0)));
  d.correlation =
      static_cast<std::uint64_t>(std::max<std::int64_t>(0, int_of(a, "correlation", 0)));
  d.pageable = name.find("Pageable") != std::string::npos;
  d.name = name;
  out_.timeline.device.push_back(std::move(d));
}

void KinetoEventReader::add_host(const json& e, std::string name, std::int64_t ts,
                                 std::int64_t dur) {
  const std::string& event_name = e["name"].get_ref<const std::string&>();
  std::string detail;
  if (contains_any(event_name, options_.wait_names)) {
    name = range_names::wait;
  } else if (contains_any(event_name, options_.step_names)) {
    name = range_names::step;
  } else if (contains_any(event_name, options_.sync_ops)) {
    name = range_names::sync;
  } else if (contains_any(event_name, options_.collective_names)) {
    name = range_names::collective;
  }
  if (name != event_name) detail = event_name;
  out_.timeline.host.push_back({std::move(name), ts, ts + dur,
                                static_cast<std::uint64_t>(int_of(e, "tid", 0)), kNoArg, 0,
                                std::move(detail)});
}

void KinetoEventReader::add_flow(const json& e, std::int64_t ts) {
  ++out_.counts.flows;
  if (e["ph"] == "f") {
    flow_ends_[{int_of(e, "tid", 0), ts}] = static_cast<std::uint64_t>(int_of(e, "id", 0));
  }
}

void KinetoEventReader::finish() {
  for (DeviceActivity& d : out_.timeline.device) {
    if (d.correlation != 0) continue;
    const auto it = flow_ends_.find({static_cast<std::int64_t>(d.stream), d.begin_ns});
    if (it != flow_ends_.end()) d.correlation = it->second;
  }
  refine_copy_calls(out_.timeline);
  add_implicit_steps();
  out_.timeline.normalize();
}

void KinetoEventReader::add_implicit_steps() {
  Timeline& t = out_.timeline;
  if (!t.device.empty()) return;
  std::map<std::uint64_t, std::vector<const HostRange*>> waits;  // by thread
  for (const HostRange& r : t.host) {
    if (r.name == range_names::step) return;  // the trace marks its steps
    if (r.name == range_names::wait) waits[r.thread].push_back(&r);
  }
  std::vector<HostRange> steps;
  for (auto& [thread, list] : waits) {
    std::sort(list.begin(), list.end(),
              [](const HostRange* a, const HostRange* b) { return a->begin_ns < b->begin_ns; });
    for (std::size_t i = 1; i < list.size(); ++i) {
      if (list[i]->begin_ns <= list[i - 1]->end_ns) continue;
      steps.push_back({std::string(range_names::step), list[i - 1]->end_ns, list[i]->begin_ns,
                       thread, static_cast<std::int64_t>(steps.size()), 0,
                       "from one batch to the next request"});
    }
  }
  out_.counts.implicit_steps = steps.size();
  for (HostRange& s : steps) t.host.push_back(std::move(s));
}

}  // namespace gpufeed::profiler::detail
