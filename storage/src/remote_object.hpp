#pragma once
// An object: what every reader of one URL shares (size, ETag, the client, the metadata reads).
#include <atomic>
#include <cstdint>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "disk_cache.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "gpufeed/storage/error.hpp"
#include "s3/client.hpp"

namespace gpufeed::storage {

/// What an object keeps of its metadata reads (read_metadata()) at most.
constexpr std::uint64_t kMetadataCacheBytes = std::uint64_t{64} << 20;

struct RemoteObject {
  std::shared_ptr<s3::Client> client;
  s3::Url url;
  s3::ObjectInfo info;

  std::mutex mutex;
  std::map<std::uint64_t, std::vector<std::uint8_t>> cached;  // by start offset, disjoint
  std::uint64_t cached_bytes = 0;

  /// Copies [offset, offset + out.size()) from what is kept, across neighbouring blocks; false
  /// (out partly written) when a byte of it is not kept.
  bool copy_cached(std::span<std::uint8_t> out, std::uint64_t offset) {
    std::lock_guard lock(mutex);
    auto it = cached.upper_bound(offset);
    if (it == cached.begin()) return false;
    --it;
    std::uint64_t at = offset;
    for (std::size_t done = 0; done < out.size(); ++it) {
      if (it == cached.end() || it->first > at || it->first + it->second.size() <= at) {
        return false;
      }
      const std::size_t n =
          std::min<std::uint64_t>(out.size() - done, it->first + it->second.size() - at);
      std::memcpy(out.data() + done, it->second.data() + (at - it->first), n);
      done += n;
      at += n;
    }
    return true;
  }
  /// Where the first block kept after `offset` starts, if any.
  std::optional<std::uint64_t> kept_after(std::uint64_t offset) {
    std::lock_guard lock(mutex);
    const auto it = cached.upper_bound(offset);
    if (it == cached.end()) return std::nullopt;
    return it->first;
  }
  void keep(std::uint64_t offset, std::vector<std::uint8_t> bytes) {
    std::lock_guard lock(mutex);
    if (cached_bytes + bytes.size() > kMetadataCacheBytes) return;
    cached_bytes += bytes.size();
    cached.emplace(offset, std::move(bytes));
  }

  /// cache_dir, when one was attached: every range read is kept there.
  std::shared_ptr<DiskCache> disk_cache() {
    std::lock_guard lock(mutex);
    return disk;
  }
  void attach(const std::string& dir, std::uint64_t budget) {
    std::lock_guard lock(mutex);
    if (disk && disk_dir == dir && disk_budget == budget) return;
    disk = std::make_shared<DiskCache>(dir, budget, url.text(), info.etag);
    disk_dir = dir;
    disk_budget = budget;
    // What was fetched before (the edges an open brought) is kept there too.
    for (const auto& [offset, bytes] : cached) disk->write({offset, bytes.size()}, bytes);
  }

  /// What fetch_edges() takes when the opening did not (a HEAD opening, for cache_dir).
  std::atomic<std::uint64_t> edge_head{MetadataEdges::kDefaultBytes};
  std::atomic<std::uint64_t> edge_tail{MetadataEdges::kDefaultBytes};
  std::once_flag edges_once;  // the object's edges, fetched at the first metadata read
  std::shared_ptr<DiskCache> disk;
  std::string disk_dir;
  std::uint64_t disk_budget = 0;
};

/// Rethrows the IoError of a request for bytes of an object as a read of `what`.
inline void rethrow_as_read(const std::exception_ptr& error, const Describe& what) {
  try {
    std::rethrow_exception(error);
  } catch (const IoError& e) {
    throw IoError("cannot read " + what() + ": " + e.what());
  }
}

}  // namespace gpufeed::storage
