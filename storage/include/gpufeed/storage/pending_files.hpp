#pragma once
// Files being written that are not complete yet (the writers' `OUT.tmp.PID` temporaries): a
// process-wide registry an interrupt handler can empty, and the clean-up of the temporaries that
// earlier runs left behind when they were killed.
#include <cstdint>
#include <string>
#include <vector>

namespace gpufeed::storage {

/// Registers `path` as an unfinished file for the object's lifetime. Up to kMaxPendingFiles are
/// registered at once; beyond that a file is not registered (its writer still removes it).
/// Thread-safe.
class PendingFile {
 public:
  static constexpr int kMaxPendingFiles = 16;

  PendingFile() = default;
  explicit PendingFile(const std::string& path) noexcept;
  ~PendingFile() { release(); }
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  /// No longer pending (committed, or removed by its owner).
  void release() noexcept;

 private:
  int slot_ = -1;
};

/// Unlinks every registered pending file and calls `removed(path)` for each one it removed.
/// Async-signal-safe (for SIGINT and SIGTERM handlers) when `removed` is.
void remove_pending_files(void (*removed)(const char* path) noexcept = nullptr) noexcept;

/// A temporary an earlier run left beside its output.
struct StaleTemporary {
  std::string path;
  std::uint64_t bytes = 0;
};

/// The temporaries of `output` (`output.tmp.PID`, `output.bytes.tmp.PID`, `output.raw.tmp.PID`)
/// whose process no longer runs: removes them and says what it removed. Those of a process that
/// still runs are left alone. Unreadable folders give an empty list.
std::vector<StaleTemporary> remove_stale_temporaries(const std::string& output);

}  // namespace gpufeed::storage
