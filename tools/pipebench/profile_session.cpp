#include "pipebench/profile_session.hpp"

#include "common/cli.hpp"

namespace gpufeed::tools::pipebench {

namespace {

bool checked_writable(const BenchOptions& o) {
  diagnosis::check_writable("--trace", o.trace);
  diagnosis::check_writable("--report", o.report);
  return !o.no_profile;
}

}  // namespace

ProfileSession::ProfileSession(const BenchOptions& options, const Device& device)
    : recording_(checked_writable(options), device.is_cuda()) {}

diagnosis::Diagnosis ProfileSession::finish(const BenchReport& report) {
  return recording_.finish(report.facts, flag_language());
}

void write_profile_outputs(const BenchOptions& o, const diagnosis::Diagnosis& d) {
  const std::int32_t rank = d.timeline.rank, world = d.timeline.world_size;
  if (!o.trace.empty()) diagnosis::write_trace(diagnosis::per_rank_path(o.trace, rank, world), d);
  if (!o.report.empty())
    diagnosis::write_report(diagnosis::per_rank_path(o.report, rank, world), d, flag_language());
}

}  // namespace gpufeed::tools::pipebench
