#pragma once
// The object-store requests in flight in this process, for a watcher on another thread (the
// Python profile's stall report names the GET a stalled loader waits for, and its age). The I/O
// thread registers a transfer when it sends it and removes it when it ends; a snapshot copies
// them under a lock (a few per batch: the lock is never the cost).
#include <cstdint>
#include <string>
#include <vector>

namespace gpufeed::storage {

/// One request on the wire.
struct RequestInFlight {
  std::string what;      ///< "GET s3://bucket/key bytes 0-99"
  std::int64_t sent_ns;  ///< when this attempt was sent (steady clock, the recorder's ns)
  int attempt = 1;       ///< 1 for the first, more for a retry
};

/// Every request in flight now, oldest first.
[[nodiscard]] std::vector<RequestInFlight> requests_in_flight();

namespace detail {
/// The I/O thread's: request `key` (its address) is sent, or has ended.
void request_sent(const void* key, const std::string& what, int attempt);
void request_ended(const void* key) noexcept;
}  // namespace detail

}  // namespace gpufeed::storage
