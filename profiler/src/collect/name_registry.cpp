#include "collect/name_registry.hpp"

namespace gpufeed::profiler::detail {

NameId NameRegistry::intern(std::string_view name) {
  const std::lock_guard lock(mutex_);
  if (const auto it = ids_.find(name); it != ids_.end()) return it->second;
  const auto id = static_cast<NameId>(names_.size());
  names_.emplace_back(name);
  ids_.emplace(names_.back(), id);
  return id;
}

std::vector<std::string> NameRegistry::names() const {
  const std::lock_guard lock(mutex_);
  return {names_.begin(), names_.end()};
}

}  // namespace gpufeed::profiler::detail
