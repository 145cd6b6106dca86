#include "gpufeed/storage/requests_in_flight.hpp"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <unordered_map>

namespace gpufeed::storage {

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<const void*, RequestInFlight> requests;
};

Registry& registry() {
  static Registry* const r = new Registry;  // never destroyed: the exit handler's I/O may run late
  return *r;
}

}  // namespace

std::vector<RequestInFlight> requests_in_flight() {
  Registry& r = registry();
  std::vector<RequestInFlight> out;
  {
    const std::lock_guard lock(r.mutex);
    out.reserve(r.requests.size());
    for (const auto& [key, request] : r.requests) out.push_back(request);
  }
  std::sort(out.begin(), out.end(), [](const RequestInFlight& a, const RequestInFlight& b) {
    return a.sent_ns < b.sent_ns;
  });
  return out;
}

namespace detail {

void request_sent(const void* key, const std::string& what, int attempt) {
  const std::int64_t now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                               std::chrono::steady_clock::now().time_since_epoch())
                               .count();
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.requests[key] = RequestInFlight{what, now, attempt};
}

void request_ended(const void* key) noexcept {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.requests.erase(key);
}

}  // namespace detail

}  // namespace gpufeed::storage
