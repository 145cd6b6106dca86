#include "disk_cache.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <system_error>
#include <vector>

#include "gpufeed/base/unique_handle.hpp"
#include "gpufeed/storage/error.hpp"
#include "gpufeed/storage/file_io.hpp"

namespace gpufeed::storage {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kTemporary = ".tmp-";

std::string hex64(std::string_view text) {  // FNV-1a: the same name in every process
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ull;
  }
  char out[17];
  std::snprintf(out, sizeof out, "%016llx", static_cast<unsigned long long>(h));
  return out;
}

/// The writer's pid in a temporary name ".tmp-PID-..."; 0 when the name is not one.
pid_t temporary_writer(const std::string& name) {
  if (!name.starts_with(kTemporary)) return 0;
  return static_cast<pid_t>(std::strtol(name.c_str() + kTemporary.size(), nullptr, 10));
}

struct CachedFile {
  fs::file_time_type used;
  std::uint64_t bytes = 0;
  fs::path path;
};

/// Every finished file under `root`; temporary files whose writer is gone are removed.
std::vector<CachedFile> scan(const std::string& root) {
  std::vector<CachedFile> files;
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (!it->is_regular_file(file_ec)) continue;
    const std::string name = it->path().filename().string();
    if (const pid_t writer = temporary_writer(name); writer != 0) {
      if (::kill(writer, 0) != 0 && errno == ESRCH) fs::remove(it->path(), file_ec);
      continue;
    }
    const std::uint64_t bytes = it->file_size(file_ec);
    const fs::file_time_type used = it->last_write_time(file_ec);
    if (!file_ec) files.push_back({used, bytes, it->path()});
  }
  return files;
}

}  // namespace

DiskCache::DiskCache(const std::string& dir, std::uint64_t budget_bytes, const std::string& url,
                     const std::string& etag, std::uint64_t queue_bytes)
    : root_(dir + "/gpufeed-objects"),
      object_dir_(root_ + "/" + hex64(url) + "-" + hex64(etag)),
      budget_(budget_bytes),
      queue_limit_(queue_bytes) {
  std::error_code ec;
  fs::create_directories(object_dir_, ec);
  if (ec || ::access(object_dir_.c_str(), W_OK) != 0) {
    throw IoError("cannot use the cache directory " + dir + ": " +
                  (ec ? ec.message() : std::string("not writable")) +
                  "; give a writable local directory as cache_dir");
  }
  if (budget_ == 0) {
    struct statvfs fsinfo {};
    if (::statvfs(dir.c_str(), &fsinfo) == 0) {
      budget_ = static_cast<std::uint64_t>(fsinfo.f_bavail) * fsinfo.f_frsize / 2;
    }
  }
  std::uint64_t used = 0;
  for (const CachedFile& f : scan(root_)) used += f.bytes;
  used_ = used;
  writer_ = std::thread([this] { run(); });
}

DiskCache::~DiskCache() {
  {
    const std::lock_guard lock(queue_mutex_);
    stopping_ = true;
  }
  queue_cv_.notify_all();
  flush();         // beside the writer, at this thread's priority
  writer_.join();  // once it wrote the range it was writing
}

std::string DiskCache::file_of(const Extent& e) const {
  return object_dir_ + "/" + std::to_string(e.offset) + "-" + std::to_string(e.length);
}

bool DiskCache::contains(const Extent& e) const {
  {
    const std::lock_guard lock(queue_mutex_);
    if (queued_.contains({e.offset, e.length})) return true;
  }
  return ::access(file_of(e).c_str(), F_OK) == 0;
}

std::string DiskCache::stopped() const {
  const std::lock_guard lock(queue_mutex_);
  return stopped_;
}

bool DiskCache::read(const Extent& e, std::span<std::uint8_t> out) const {
  {
    const std::lock_guard lock(queue_mutex_);
    if (const auto it = queued_.find({e.offset, e.length}); it != queued_.end()) {
      std::memcpy(out.data(), it->second.bytes.data(), e.length);
      hits_.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
  const std::string path = file_of(e);
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat info {};
  if (!fd || ::fstat(fd.get(), &info) != 0) {
    misses_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  const bool whole = static_cast<std::uint64_t>(info.st_size) == e.length &&
                     pread_full(fd.get(), out.first(e.length), 0).bytes == e.length;
  if (!whole) {  // not what a finished write leaves: never served
    ::unlink(path.c_str());
    misses_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  ::futimens(fd.get(), nullptr);  // recently used: evicted last
  hits_.fetch_add(1, std::memory_order_relaxed);
  return true;
}

void DiskCache::write(const Extent& e, std::span<const std::uint8_t> bytes) {
  {
    // The copy is made outside the lock, and only when the queue may take it.
    const std::lock_guard lock(queue_mutex_);
    if (queued_.contains({e.offset, e.length})) return;
    if (!stopped_.empty() || stopping_ || queued_bytes_ + bytes.size() > queue_limit_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
  }
  std::shared_ptr<std::uint8_t[]> copy(new std::uint8_t[bytes.size()]);
  std::memcpy(copy.get(), bytes.data(), bytes.size());
  const std::span<const std::uint8_t> kept(copy.get(), bytes.size());
  enqueue(e, {std::move(copy), kept}, bytes.size());
}

void DiskCache::write_shared(const Extent& e, std::shared_ptr<const std::uint8_t[]> owner,
                             std::uint64_t owner_bytes, std::span<const std::uint8_t> bytes) {
  enqueue(e, {std::move(owner), bytes}, owner_bytes);
}

void DiskCache::enqueue(const Extent& e, Queued queued, std::uint64_t owner_bytes) {
  const Key key{e.offset, e.length};
  {
    const std::lock_guard lock(queue_mutex_);
    if (queued_.contains(key)) return;
    const std::uint64_t more = owners_.holds(queued.owner.get()) ? 0 : owner_bytes;
    if (!stopped_.empty() || stopping_ || queued_bytes_ + more > queue_limit_) {
      dropped_.fetch_add(1, std::memory_order_relaxed);
      return;
    }
    queued_bytes_ += owners_.hold(queued.owner.get(), owner_bytes);
    queued_.emplace(key, std::move(queued));
    order_.push_back(key);
  }
  queue_cv_.notify_all();
}

void DiskCache::release_locked(const Queued& queued) {
  queued_bytes_ -= owners_.release(queued.owner.get());
}

void DiskCache::flush() {
  std::unique_lock lock(queue_mutex_);
  // The caller writes beside the writer: a writer at idle priority on a busy machine would keep
  // it waiting for the CPU time the caller has.
  while (!order_.empty()) write_next(lock);
  queue_cv_.wait(lock, [this] { return order_.empty() && writing_ == 0; });
}

void DiskCache::run() {
  ::pthread_setname_np(::pthread_self(), "gpufeed-cache");  // as top and gdb show it
  // The writer runs on CPU time no other thread wants: filling the cache never slows the
  // loader's threads or the training's. A machine with no idle core caches less this epoch
  // (the queue fills, ranges are dropped) and the rest when the next one reads them.
  const sched_param idle{};
  ::pthread_setschedparam(::pthread_self(), SCHED_IDLE, &idle);
  std::unique_lock lock(queue_mutex_);
  for (;;) {
    queue_cv_.wait(lock, [this] { return stopping_ || !order_.empty(); });
    if (order_.empty()) return;  // stopping, and everything queued is written
    write_next(lock);
  }
}

void DiskCache::write_next(std::unique_lock<std::mutex>& lock) {
  const Key key = order_.front();
  order_.pop_front();
  const auto it = queued_.find(key);
  ++writing_;
  lock.unlock();
  // The entry stays put: only the thread that took its key erases it, and read() copies from
  // it meanwhile.
  std::string failure;
  try {
    keep({key.first, key.second}, it->second.bytes);
    written_files_.fetch_add(1, std::memory_order_relaxed);
  } catch (const std::exception& e) {
    failure = e.what();
  }
  lock.lock();
  --writing_;
  release_locked(it->second);
  queued_.erase(it);
  if (!failure.empty()) {
    dropped_.fetch_add(1, std::memory_order_relaxed);
    if (stopped_.empty()) {  // stop caching: drop what is queued and not being written
      stopped_ = failure;
      dropped_.fetch_add(order_.size(), std::memory_order_relaxed);
      for (const Key& left : order_) {
        const auto queued = queued_.find(left);
        release_locked(queued->second);
        queued_.erase(queued);
      }
      order_.clear();
      std::fprintf(stderr,
                   "gpufeed: cache_dir stopped caching (%s); reading goes on from object "
                   "storage\n",
                   failure.c_str());
    }
  }
  queue_cv_.notify_all();  // flush() waits for an empty queue
}

void DiskCache::keep(const Extent& e, std::span<const std::uint8_t> bytes) {
  const std::string path = file_of(e);
  const std::string temporary =
      object_dir_ + "/" + std::string(kTemporary) + std::to_string(::getpid()) + "-" +
      std::to_string(serial_.fetch_add(1)) + "-" + fs::path(path).filename().string();
  {
    const UniqueFd fd(::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!fd) throw_errno("cannot write " + temporary);
    try {
      write_all(fd.get(), bytes, "cannot write " + temporary);
    } catch (const IoError&) {
      ::unlink(temporary.c_str());
      throw;
    }
  }
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    ::unlink(temporary.c_str());
    errno = error;
    throw_errno("cannot rename " + temporary + " to " + path);
  }
  if (written_.fetch_add(bytes.size()) + bytes.size() + used_ > budget_) evict();
}

void DiskCache::evict() {
  std::lock_guard lock(evict_mutex_);
  std::vector<CachedFile> files = scan(root_);  // other ranks write here too: look again
  std::uint64_t total = 0;
  for (const CachedFile& f : files) total += f.bytes;
  written_ = 0;
  if (total > budget_) {
    // Down to 90% of the budget, so the next writes do not scan again at once.
    const std::uint64_t target = budget_ / 10 * 9;
    std::sort(files.begin(), files.end(),
              [](const CachedFile& a, const CachedFile& b) { return a.used < b.used; });
    for (const CachedFile& f : files) {
      if (total <= target) break;
      std::error_code ec;
      if (fs::remove(f.path, ec)) total -= f.bytes;
    }
  }
  used_ = total;
}

}  // namespace gpufeed::storage
