// The interposers: every call looks at the rule in force (one atomic load while none is) and
// either goes on to the next definition in the search order (libc), or fails, or is cut short.
#include "fault_injection.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace gpufeed::testing::fault {

namespace {

// The state lives in constant-initialized plain data: the interposers may run before any
// constructor of this library (other libraries' constructors read files too).
struct State {
  pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
  char path[PATH_MAX] = {};
  unsigned ops = 0;
  Mode mode = Mode::fail;
  int error = EIO;
  std::uint64_t after_calls = 0;
  bool bytes_limited = false;
  std::uint64_t after_bytes = 0;
  std::uint64_t times = 0;
  std::size_t short_bytes = 1;
  char truncate_path[PATH_MAX] = {};
  std::uint64_t truncate_size = 0;
  char report[PATH_MAX] = {};
  // Counters since the rule was armed.
  std::uint64_t matched = 0;
  std::uint64_t passed_bytes = 0;
  std::uint64_t faults = 0;
};

State g_state;
std::atomic<bool> g_armed{false};
std::atomic<std::uint64_t> g_seen{0};  // calls that reached the interposers at all

template <typename F>
F next_definition(const char* name) {
  void* symbol = ::dlsym(RTLD_NEXT, name);
  F f = nullptr;
  static_assert(sizeof f == sizeof symbol);
  std::memcpy(&f, &symbol, sizeof f);
  return f;
}

#define GPUFEED_NEXT(name)                                            \
  static const auto real = next_definition<decltype(&::name)>(#name); \
  g_seen.fetch_add(1, std::memory_order_relaxed)

enum class Action { pass, fail, limit, eof };

struct Decision {
  Action action = Action::pass;
  std::size_t limit = 0;
  int error = 0;
};

class Lock {
 public:
  Lock() { pthread_mutex_lock(&g_state.mutex); }
  ~Lock() { pthread_mutex_unlock(&g_state.mutex); }
  Lock(const Lock&) = delete;
  Lock& operator=(const Lock&) = delete;
};

void copy_text(char (&to)[PATH_MAX], const char* from) {
  std::snprintf(to, sizeof to, "%s", from);
}

bool fd_matches(int fd) {
  char link[48];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  char target[PATH_MAX];
  const ssize_t n = ::readlink(link, target, sizeof target - 1);
  if (n <= 0) return false;
  target[n] = '\0';
  return std::strstr(target, g_state.path) != nullptr;
}

int real_close(int fd);

// Writes the fault count to GPUFEED_FAULT_REPORT: the tool may end with _exit.
void write_report() {
  if (g_state.report[0] == '\0') return;
  const int fd = ::open(g_state.report, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return;
  char text[32];
  const int size =
      std::snprintf(text, sizeof text, "%llu\n", static_cast<unsigned long long>(g_state.faults));
  static const auto real_write = next_definition<decltype(&::write)>("write");
  if (real_write(fd, text, static_cast<std::size_t>(size)) < 0) {
    // Nothing to do: the report is advisory.
  }
  real_close(fd);
}

Decision inject(unsigned op, std::size_t requested) {
  if (g_state.times != 0 && g_state.faults >= g_state.times) return {};
  ++g_state.faults;
  write_report();
  switch (g_state.mode) {
    case Mode::fail:
      return {Action::fail, 0, g_state.error};
    case Mode::short_io:
      if (requested <= g_state.short_bytes) return {};
      return {Action::limit, g_state.short_bytes, 0};
    case Mode::eof:
      if (op == kRead) return {Action::eof, 0, 0};
      return {Action::fail, 0, g_state.error};
    case Mode::truncate:
      if (::truncate(g_state.truncate_path, static_cast<off_t>(g_state.truncate_size)) != 0) {
        std::fprintf(stderr, "fault injection: cannot truncate %s: %s\n", g_state.truncate_path,
                     std::strerror(errno));
      }
      return {};
  }
  return {};
}

Decision decide(unsigned op, int fd, std::size_t requested) {
  if (!g_armed.load(std::memory_order_acquire)) return {};
  const int saved_errno = errno;
  const Lock lock;
  Decision d;
  if (g_armed.load(std::memory_order_relaxed) && (g_state.ops & op) != 0 && fd_matches(fd)) {
    ++g_state.matched;
    const bool moves_bytes = op == kRead || op == kWrite;
    if (g_state.matched <= g_state.after_calls) {
      g_state.passed_bytes += requested;
    } else if (!g_state.bytes_limited) {
      d = inject(op, requested);
    } else {
      const std::uint64_t left = g_state.after_bytes > g_state.passed_bytes
                                     ? g_state.after_bytes - g_state.passed_bytes
                                     : 0;
      if (moves_bytes && requested <= left) {
        g_state.passed_bytes += requested;
      } else if (moves_bytes && left > 0) {
        g_state.passed_bytes = g_state.after_bytes;
        d = {Action::limit, static_cast<std::size_t>(left), 0};
      } else if (!moves_bytes && left > 0) {
        // A sync or close before the disk is full goes through.
      } else {
        d = inject(op, requested);
      }
    }
  }
  errno = saved_errno;
  return d;
}

/// Runs `call(n)` for the bytes the rule lets through, or fails as it says.
template <typename Call>
ssize_t transfer(unsigned op, int fd, std::size_t count, const Call& call) {
  const Decision d = decide(op, fd, count);
  switch (d.action) {
    case Action::fail:
      errno = d.error;
      return -1;
    case Action::eof:
      return 0;
    case Action::limit:
      return call(d.limit);
    case Action::pass:
      break;
  }
  return call(count);
}

std::size_t total(const struct iovec* iov, int count) {
  std::size_t sum = 0;
  for (int i = 0; i < count; ++i) sum += iov[i].iov_len;
  return sum;
}

/// Calls `call(vectors, count)` with the first `limit` bytes of `iov`.
template <typename Call>
ssize_t vector_transfer(unsigned op, int fd, const struct iovec* iov, int count, const Call& call) {
  return transfer(op, fd, total(iov, count), [&](std::size_t limit) -> ssize_t {
    if (limit >= total(iov, count)) return call(iov, count);
    struct iovec cut[IOV_MAX];
    int n = 0;
    for (int i = 0; i < count && i < IOV_MAX && limit > 0; ++i, ++n) {
      cut[n] = iov[i];
      cut[n].iov_len = std::min(cut[n].iov_len, limit);
      limit -= cut[n].iov_len;
    }
    return call(cut, n);
  });
}

int status_call(unsigned op, int fd) {
  const Decision d = decide(op, fd, 0);
  if (d.action == Action::fail) {
    errno = d.error;
    return -1;
  }
  return 0;
}

int errno_from(const char* text) {
  static const struct {
    const char* name;
    int value;
  } kNames[] = {{"EIO", EIO},       {"ENOSPC", ENOSPC}, {"EFBIG", EFBIG},   {"EDQUOT", EDQUOT},
                {"EROFS", EROFS},   {"EINTR", EINTR},   {"EAGAIN", EAGAIN}, {"EACCES", EACCES},
                {"ENOMEM", ENOMEM}, {"ESTALE", ESTALE}, {"EBADF", EBADF}};
  for (const auto& entry : kNames) {
    if (std::strcmp(text, entry.name) == 0) return entry.value;
  }
  return std::atoi(text);
}

unsigned ops_from(const char* text) {
  unsigned ops = 0;
  if (std::strstr(text, "read") != nullptr) ops |= kRead;
  if (std::strstr(text, "write") != nullptr) ops |= kWrite;
  if (std::strstr(text, "sync") != nullptr) ops |= kSync;
  if (std::strstr(text, "close") != nullptr) ops |= kClose;
  return ops;
}

Mode mode_from(const char* text) {
  if (std::strcmp(text, "short") == 0) return Mode::short_io;
  if (std::strcmp(text, "eof") == 0) return Mode::eof;
  if (std::strcmp(text, "truncate") == 0) return Mode::truncate;
  return Mode::fail;
}

std::uint64_t number(const char* name, std::uint64_t otherwise) {
  const char* text = std::getenv(name);
  return text != nullptr && *text != '\0' ? std::strtoull(text, nullptr, 10) : otherwise;
}

// LD_PRELOAD: the rule comes from the environment.
__attribute__((constructor)) void arm_from_environment() {
  const char* path = std::getenv("GPUFEED_FAULT_PATH");
  if (path == nullptr || *path == '\0') return;
  Rule rule;
  rule.path = path;
  if (const char* ops = std::getenv("GPUFEED_FAULT_OPS")) rule.ops = ops_from(ops);
  if (const char* mode = std::getenv("GPUFEED_FAULT_MODE")) rule.mode = mode_from(mode);
  if (const char* error = std::getenv("GPUFEED_FAULT_ERRNO")) rule.error = errno_from(error);
  rule.after_calls = number("GPUFEED_FAULT_AFTER_CALLS", 0);
  if (const char* bytes = std::getenv("GPUFEED_FAULT_AFTER_BYTES"); bytes && *bytes) {
    rule.after_bytes = std::strtoull(bytes, nullptr, 10);
  }
  rule.times = number("GPUFEED_FAULT_TIMES", 0);
  rule.short_bytes = static_cast<std::size_t>(number("GPUFEED_FAULT_SHORT_BYTES", 1));
  if (const char* cut = std::getenv("GPUFEED_FAULT_TRUNCATE_PATH")) rule.truncate_path = cut;
  rule.truncate_size = number("GPUFEED_FAULT_TRUNCATE_SIZE", 0);
  arm(rule);
  if (const char* report = std::getenv("GPUFEED_FAULT_REPORT")) {
    const Lock lock;
    copy_text(g_state.report, report);
    write_report();
  }
}

}  // namespace

void arm(const Rule& rule) {
  const Lock lock;
  copy_text(g_state.path, rule.path.c_str());
  g_state.ops = rule.ops;
  g_state.mode = rule.mode;
  g_state.error = rule.error;
  g_state.after_calls = rule.after_calls;
  g_state.bytes_limited = rule.after_bytes.has_value();
  g_state.after_bytes = rule.after_bytes.value_or(0);
  g_state.times = rule.times;
  g_state.short_bytes = std::max<std::size_t>(1, rule.short_bytes);
  copy_text(g_state.truncate_path, rule.truncate_path.c_str());
  g_state.truncate_size = rule.truncate_size;
  g_state.matched = 0;
  g_state.passed_bytes = 0;
  g_state.faults = 0;
  g_armed.store(!rule.path.empty(), std::memory_order_release);
}

void disarm() {
  const Lock lock;
  g_armed.store(false, std::memory_order_release);
}

std::uint64_t faults() {
  const Lock lock;
  return g_state.faults;
}

std::uint64_t matched() {
  const Lock lock;
  return g_state.matched;
}

bool interposed() {
  const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  const std::uint64_t before = g_seen.load();
  char byte = 0;
  const ssize_t n = ::read(fd, &byte, 1);
  const bool seen = g_seen.load() > before && n == 0;
  ::close(fd);
  return seen;
}

namespace {

int real_close(int fd) {
  static const auto real = next_definition<decltype(&::close)>("close");
  return real(fd);
}

}  // namespace

}  // namespace gpufeed::testing::fault

using gpufeed::testing::fault::g_seen;
using gpufeed::testing::fault::kClose;
using gpufeed::testing::fault::kRead;
using gpufeed::testing::fault::kSync;
using gpufeed::testing::fault::kWrite;
using gpufeed::testing::fault::next_definition;
using gpufeed::testing::fault::status_call;
using gpufeed::testing::fault::transfer;
using gpufeed::testing::fault::vector_transfer;

extern "C" {

ssize_t read(int fd, void* buf, size_t count) {
  GPUFEED_NEXT(read);
  return transfer(kRead, fd, count, [&](size_t n) { return real(fd, buf, n); });
}

ssize_t pread(int fd, void* buf, size_t count, off_t offset) {
  GPUFEED_NEXT(pread);
  return transfer(kRead, fd, count, [&](size_t n) { return real(fd, buf, n, offset); });
}

ssize_t pread64(int fd, void* buf, size_t count, off64_t offset) {
  GPUFEED_NEXT(pread64);
  return transfer(kRead, fd, count, [&](size_t n) { return real(fd, buf, n, offset); });
}

ssize_t readv(int fd, const struct iovec* iov, int count) {
  GPUFEED_NEXT(readv);
  return vector_transfer(kRead, fd, iov, count,
                         [&](const struct iovec* v, int c) { return real(fd, v, c); });
}

ssize_t preadv(int fd, const struct iovec* iov, int count, off_t offset) {
  GPUFEED_NEXT(preadv);
  return vector_transfer(kRead, fd, iov, count,
                         [&](const struct iovec* v, int c) { return real(fd, v, c, offset); });
}

ssize_t preadv64(int fd, const struct iovec* iov, int count, off64_t offset) {
  GPUFEED_NEXT(preadv64);
  return vector_transfer(kRead, fd, iov, count,
                         [&](const struct iovec* v, int c) { return real(fd, v, c, offset); });
}

ssize_t write(int fd, const void* buf, size_t count) {
  GPUFEED_NEXT(write);
  return transfer(kWrite, fd, count, [&](size_t n) { return real(fd, buf, n); });
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  GPUFEED_NEXT(pwrite);
  return transfer(kWrite, fd, count, [&](size_t n) { return real(fd, buf, n, offset); });
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off64_t offset) {
  GPUFEED_NEXT(pwrite64);
  return transfer(kWrite, fd, count, [&](size_t n) { return real(fd, buf, n, offset); });
}

ssize_t writev(int fd, const struct iovec* iov, int count) {
  GPUFEED_NEXT(writev);
  return vector_transfer(kWrite, fd, iov, count,
                         [&](const struct iovec* v, int c) { return real(fd, v, c); });
}

ssize_t pwritev(int fd, const struct iovec* iov, int count, off_t offset) {
  GPUFEED_NEXT(pwritev);
  return vector_transfer(kWrite, fd, iov, count,
                         [&](const struct iovec* v, int c) { return real(fd, v, c, offset); });
}

ssize_t pwritev64(int fd, const struct iovec* iov, int count, off64_t offset) {
  GPUFEED_NEXT(pwritev64);
  return vector_transfer(kWrite, fd, iov, count,
                         [&](const struct iovec* v, int c) { return real(fd, v, c, offset); });
}

int fsync(int fd) {
  GPUFEED_NEXT(fsync);
  if (status_call(kSync, fd) != 0) return -1;
  return real(fd);
}

int fdatasync(int fd) {
  GPUFEED_NEXT(fdatasync);
  if (status_call(kSync, fd) != 0) return -1;
  return real(fd);
}

int close(int fd) {
  GPUFEED_NEXT(close);
  // Linux releases the descriptor even when close() reports an error.
  const int injected = status_call(kClose, fd);
  const int saved_errno = errno;
  const int rc = real(fd);
  if (injected != 0) {
    errno = saved_errno;
    return -1;
  }
  return rc;
}

}  // extern "C"
