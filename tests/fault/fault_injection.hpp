#pragma once
// Disk faults on demand: fails the libc I/O calls (read, pread, write, pwrite, their vector
// forms, fsync, fdatasync, close) made on chosen files, with a chosen errno, after a number of
// calls or bytes. HDF5 does its I/O through the same calls, so its reads and writes fail too.
//
// Two ways to use it:
//  - linked into a test executable (the `gpufeed_fault` shared library), it interposes libc for
//    the whole process and is driven by arm() / disarm() below;
//  - as LD_PRELOAD for a tool (h5pack, pipebench), it is armed at start from the environment:
//      GPUFEED_FAULT_PATH         part of the path of the files to fail (arms the library)
//      GPUFEED_FAULT_OPS          read,write,sync,close (default: read)
//      GPUFEED_FAULT_MODE         fail | short | eof | truncate (default: fail)
//      GPUFEED_FAULT_ERRNO        EIO, ENOSPC, EFBIG, EDQUOT, EROFS, EINTR, ... or a number
//      GPUFEED_FAULT_AFTER_CALLS  matching calls that go through first (default 0)
//      GPUFEED_FAULT_AFTER_BYTES  bytes that go through first (default: no byte limit)
//      GPUFEED_FAULT_TIMES        faults before the rule stops firing (default 0: no end)
//      GPUFEED_FAULT_SHORT_BYTES  mode short: the most a call transfers (default 1)
//      GPUFEED_FAULT_TRUNCATE_PATH, GPUFEED_FAULT_TRUNCATE_SIZE  mode truncate: the file to cut
//      GPUFEED_FAULT_REPORT       a file that holds the number of faults injected so far
// Files are matched by the path the kernel shows for the descriptor (/proc/self/fd/N), so an
// unlinked file matches too ("... (deleted)").
#include <cerrno>
#include <cstdint>
#include <optional>
#include <string>

namespace gpufeed::testing::fault {

/// The kinds of call a rule applies to (a bit set).
enum Op : unsigned {
  kRead = 1u,   ///< read, pread, pread64, readv, preadv, preadv64
  kWrite = 2u,  ///< write, pwrite, pwrite64, writev, pwritev, pwritev64
  kSync = 4u,   ///< fsync, fdatasync
  kClose = 8u,  ///< close (the descriptor is closed all the same, as Linux does)
};

enum class Mode {
  fail,      ///< the call fails with `error`
  short_io,  ///< the call transfers at most `short_bytes`: a legal short read or write
  eof,       ///< a read returns 0, as at the end of the file (other calls fail with `error`)
  truncate,  ///< `truncate_path` is cut to `truncate_size` bytes, then the call goes on
};

struct Rule {
  std::string path;  ///< a part of the files' paths; required
  unsigned ops = kRead;
  Mode mode = Mode::fail;
  int error = EIO;
  std::uint64_t after_calls = 0;  ///< matching calls that go through untouched first
  /// Bytes that go through untouched first; the call that crosses the limit is cut short
  /// there (a disk that fills up mid-write), the calls after it fault.
  std::optional<std::uint64_t> after_bytes;
  std::uint64_t times = 0;  ///< faults before the rule stops firing; 0: it never stops
  std::size_t short_bytes = 1;
  std::string truncate_path;
  std::uint64_t truncate_size = 0;
};

/// Replaces the rule in force and zeroes the counters.
void arm(const Rule& rule);
/// No rule: every call goes straight to libc.
void disarm();
/// Faults injected since the last arm().
std::uint64_t faults();
/// Calls on matching files (of the rule's kinds) since the last arm().
std::uint64_t matched();
/// True when this process's libc calls reach the library (it is linked or preloaded so that
/// it comes before libc).
bool interposed();

/// arm() for a scope; disarm() at its end.
class Armed {
 public:
  explicit Armed(const Rule& rule) { arm(rule); }
  ~Armed() { disarm(); }
  Armed(const Armed&) = delete;
  Armed& operator=(const Armed&) = delete;
};

}  // namespace gpufeed::testing::fault
