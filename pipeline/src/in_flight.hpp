#pragma once
// A worker thread's registration of its current work (gpufeed/pipeline/in_flight.hpp reads
// them): a scope for a batch's stage, with the sample it is in updated as it goes (a relaxed
// store a sample). Registering takes a lock, once a scope: a few times a batch.
#include <atomic>
#include <cstdint>
#include <string>

#include "gpufeed/base/stages.hpp"

namespace gpufeed::pipeline::detail {

class WorkScope {
 public:
  WorkScope(const std::string& path, Stage stage, std::uint64_t epoch, std::uint64_t batch);
  ~WorkScope();
  WorkScope(const WorkScope&) = delete;
  WorkScope& operator=(const WorkScope&) = delete;

  /// The work is in `sample` now.
  void sample(std::uint64_t sample) noexcept {
    sample_.store(static_cast<std::int64_t>(sample), std::memory_order_relaxed);
  }

  const std::string& path;
  const Stage stage;
  const std::uint64_t epoch;
  const std::uint64_t batch;
  const std::int64_t since_ns;
  [[nodiscard]] std::int64_t current_sample() const noexcept {
    return sample_.load(std::memory_order_relaxed);
  }

 private:
  std::atomic<std::int64_t> sample_{-1};
};

}  // namespace gpufeed::pipeline::detail
