#pragma once
// Interned range names: id <-> string, deduplicated, thread-safe.
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpufeed/profiler/range_event.hpp"

namespace gpufeed::profiler::detail {

/// Names are never removed, so an id stays valid for the life of the registry. Registration and
/// lookup take a lock; the recording hot path uses only ids.
class NameRegistry {
 public:
  NameId intern(std::string_view name);
  /// All names, indexed by id.
  [[nodiscard]] std::vector<std::string> names() const;

 private:
  mutable std::mutex mutex_;
  std::deque<std::string> names_;  // deque: stable addresses for the map's string_view keys
  std::unordered_map<std::string_view, NameId> ids_;
};

}  // namespace gpufeed::profiler::detail
