#include "gpufeed/storage/pending_files.hpp"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace gpufeed::storage {

namespace {

// A slot is free (0), being filled or emptied by its owner (1), or holds a path (2). The signal
// handler reads only slots in state 2; an owner turns a slot back to free only after it no
// longer needs the path.
enum : int { kFree = 0, kBusy = 1, kHeld = 2 };

struct Entry {
  std::atomic<int> state{kFree};
  std::array<char, PATH_MAX> path{};
};

std::array<Entry, PendingFile::kMaxPendingFiles>& entries() {
  static std::array<Entry, PendingFile::kMaxPendingFiles> all;
  return all;
}

static_assert(std::atomic<int>::is_always_lock_free, "signal handlers need lock-free atomics");

bool all_digits(std::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool process_runs(long pid) {
  if (pid <= 0 || pid > INT_MAX) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
}

}  // namespace

PendingFile::PendingFile(const std::string& path) noexcept {
  if (path.size() + 1 > PATH_MAX) return;
  for (int i = 0; i < kMaxPendingFiles; ++i) {
    Entry& e = entries()[static_cast<std::size_t>(i)];
    int expected = kFree;
    if (!e.state.compare_exchange_strong(expected, kBusy)) continue;
    std::memcpy(e.path.data(), path.c_str(), path.size() + 1);
    e.state.store(kHeld, std::memory_order_release);
    slot_ = i;
    return;
  }
}

void PendingFile::release() noexcept {
  if (slot_ < 0) return;
  entries()[static_cast<std::size_t>(slot_)].state.store(kFree, std::memory_order_release);
  slot_ = -1;
}

void remove_pending_files(void (*removed)(const char* path) noexcept) noexcept {
  for (Entry& e : entries()) {
    if (e.state.load(std::memory_order_acquire) != kHeld) continue;
    if (::unlink(e.path.data()) == 0 && removed != nullptr) removed(e.path.data());
  }
}

std::vector<StaleTemporary> remove_stale_temporaries(const std::string& output) {
  namespace fs = std::filesystem;
  const fs::path out(output);
  const std::string name = out.filename().string();
  const fs::path folder = out.has_parent_path() ? out.parent_path() : fs::path(".");
  std::vector<StaleTemporary> removed;
  std::error_code ec;
  for (fs::directory_iterator it(folder, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    if (file.size() <= name.size() || file.compare(0, name.size(), name) != 0) continue;
    const std::string_view rest = std::string_view(file).substr(name.size());
    std::string_view pid;
    for (std::string_view kind : {".tmp.", ".bytes.tmp.", ".raw.tmp."}) {
      if (rest.substr(0, kind.size()) == kind) pid = rest.substr(kind.size());
    }
    if (!all_digits(pid) || pid.size() > 9 || process_runs(std::stol(std::string(pid)))) continue;
    std::error_code size_ec, remove_ec;
    const std::uintmax_t bytes = fs::file_size(it->path(), size_ec);
    if (fs::remove(it->path(), remove_ec)) {
      removed.push_back({it->path().string(), size_ec ? 0 : static_cast<std::uint64_t>(bytes)});
    }
  }
  return removed;
}

}  // namespace gpufeed::storage
