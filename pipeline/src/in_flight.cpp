#include "in_flight.hpp"

#include <algorithm>
#include <mutex>
#include <vector>

#include "gpufeed/pipeline/in_flight.hpp"
#include "gpufeed/profiler/clock.hpp"

namespace gpufeed::pipeline {

namespace {

struct Scopes {
  std::mutex mutex;
  std::vector<const detail::WorkScope*> live;
};

Scopes& scopes() {
  static Scopes* const s = new Scopes;  // never destroyed: workers may outlive static teardown
  return *s;
}

}  // namespace

detail::WorkScope::WorkScope(const std::string& path_, Stage stage_, std::uint64_t epoch_,
                             std::uint64_t batch_)
    : path(path_), stage(stage_), epoch(epoch_), batch(batch_), since_ns(profiler::now_ns()) {
  Scopes& s = scopes();
  const std::lock_guard lock(s.mutex);
  s.live.push_back(this);
}

detail::WorkScope::~WorkScope() {
  Scopes& s = scopes();
  const std::lock_guard lock(s.mutex);
  s.live.erase(std::find(s.live.begin(), s.live.end(), this));
}

std::vector<WorkInFlight> work_in_flight() {
  std::vector<WorkInFlight> out;
  Scopes& s = scopes();
  {
    const std::lock_guard lock(s.mutex);
    for (const detail::WorkScope* w : s.live) {
      out.push_back({w->path, std::string(stage_name(w->stage)), w->epoch, w->batch,
                     w->current_sample(), w->since_ns});
    }
  }
  std::sort(out.begin(), out.end(),
            [](const WorkInFlight& a, const WorkInFlight& b) { return a.since_ns < b.since_ns; });
  return out;
}

}  // namespace gpufeed::pipeline
