#pragma once
// POSIX file reads for the lock-free paths: no HDF5, no shared state but the descriptor.
#include <cstdint>
#include <span>
#include <string>

#include "gpufeed/base/unique_handle.hpp"

namespace gpufeed::storage {

/// Opens `path` read-only (close-on-exec); throws IoError "cannot open <path>: <reason>".
UniqueFd open_read_only(const std::string& path);
/// The file's size in bytes; throws IoError naming `path`.
std::uint64_t file_size(int fd, const std::string& path);

/// What pread_full managed: `bytes` read, and errno when a read failed (0 otherwise).
/// bytes < requested with error 0 means the file ended first.
struct ReadResult {
  std::size_t bytes = 0;
  int error = 0;
};

/// Reads out.size() bytes at `offset`, retrying short reads and EINTR. Never throws, so the
/// caller can word the message (which chunk of which file).
ReadResult pread_full(int fd, std::span<std::uint8_t> out, std::uint64_t offset) noexcept;

/// Flushes the written file `path` to its disk (fsync), before it is renamed into place: an
/// error the disk reports only at write-back (a full disk, an I/O error) shows here, and a crash
/// after the rename cannot leave a complete-looking file with missing data. Throws IoError
/// "cannot write <path>: <reason>".
void sync_file(const std::string& path);

/// Writes all of `bytes` at the descriptor's position, retrying short writes and EINTR;
/// throws IoError "<what>: <reason>".
void write_all(int fd, std::span<const std::uint8_t> bytes, const std::string& what);

}  // namespace gpufeed::storage
