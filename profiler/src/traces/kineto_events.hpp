#pragma once
// Turning individual Kineto trace events into timeline entries.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <utility>

#include "gpufeed/profiler/kineto_trace.hpp"

namespace gpufeed::profiler::detail {

/// Accumulates events one by one; finish() resolves flows and sorts.
class KinetoEventReader {
 public:
  explicit KinetoEventReader(const KinetoOptions& options, KinetoTrace& out)
      : options_(options), out_(out) {}
  void add(const nlohmann::json& event);
  void finish();

 private:
  void add_complete(const nlohmann::json& e, const std::string& cat, std::int64_t ts,
                    std::int64_t dur);
  void add_device(const nlohmann::json& e, ActivityKind kind, std::int64_t ts, std::int64_t dur);
  void add_host(const nlohmann::json& e, std::string name, std::int64_t ts, std::int64_t dur);
  void add_flow(const nlohmann::json& e, std::int64_t ts);
  /// Without device activity and step ranges: steps between consecutive waits on a thread.
  void add_implicit_steps();

  const KinetoOptions& options_;
  KinetoTrace& out_;
  /// ac2g flow ends ("f", bound to the device event) by (tid, ts): the correlation id.
  std::map<std::pair<std::int64_t, std::int64_t>, std::uint64_t> flow_ends_;
};

}  // namespace gpufeed::profiler::detail
