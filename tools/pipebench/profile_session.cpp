#include "pipebench/profile_session.hpp"

#include "common/cli.hpp"

namespace gpufeed::tools::pipebench {

namespace {

bool checked_writable(const BenchOptions& o) {
  check_writable("--trace", o.trace);
  check_writable("--report", o.report);
  return !o.no_profile;
}

}  // namespace

ProfileSession::ProfileSession(const BenchOptions& options, const std::string& device)
    : recording_(checked_writable(options), device.rfind("cuda", 0) == 0) {}

Diagnosis ProfileSession::finish(const BenchReport& report) {
  return recording_.finish(run_facts(report));
}

void write_profile_outputs(const BenchOptions& o, const Diagnosis& d) {
  const std::int32_t rank = d.timeline.rank, world = d.timeline.world_size;
  if (!o.trace.empty()) write_trace(per_rank_path(o.trace, rank, world), d);
  if (!o.report.empty()) write_report(per_rank_path(o.report, rank, world), d, flag_spelling);
}

}  // namespace gpufeed::tools::pipebench
