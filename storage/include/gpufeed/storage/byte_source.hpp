#pragma once
// The bytes of a dataset file, wherever they live: a local (or shared-filesystem) file read with
// pread, or an object in S3-compatible storage read with ranged GETs. The readers and the HDF5
// driver for objects read through it; a remote source also takes a plan (the ranges the next
// batches need, in order) and keeps many requests in flight ahead of the reads.
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "gpufeed/storage/object_store.hpp"

namespace gpufeed::storage {

/// Bytes [offset, offset + length) of a source.
struct Extent {
  std::uint64_t offset = 0;
  std::uint64_t length = 0;
  [[nodiscard]] std::uint64_t end() const { return offset + length; }
};

/// Bytes the source already holds, shared instead of copied: they stay valid while `owner` is
/// held (a planned GET's buffer, which may hold more than these bytes).
struct SharedBytes {
  std::shared_ptr<const void> owner;  ///< null: the source does not hold them
  std::span<const std::uint8_t> bytes;
  std::uint64_t owner_bytes = 0;  ///< the memory that holding `owner` keeps alive
  explicit operator bool() const { return owner != nullptr; }
};

/// The memory kept alive through SharedBytes, charged once per owner however many of its
/// ranges are held (the chunk cache's views, the disk cache's writer queue). Not thread-safe.
class OwnerCharges {
 public:
  [[nodiscard]] bool holds(const void* owner) const { return owners_.contains(owner); }
  /// One more range of `owner` (a buffer of `owner_bytes`) held: the bytes newly charged
  /// (`owner_bytes` for its first range, else 0).
  std::uint64_t hold(const void* owner, std::uint64_t owner_bytes);
  /// One range of `owner` let go: the bytes released (its buffer's, with its last range; 0 for
  /// an owner not held).
  std::uint64_t release(const void* owner);

 private:
  struct Owner {
    std::uint64_t bytes = 0;
    std::uint64_t ranges = 0;
  };
  std::unordered_map<const void*, Owner> owners_;
};

/// Names what a read is for in its messages ("chunk 3 of /images in s3://b/d.h5 (samples
/// 768-1023)"); only called when a read fails.
using Describe = std::function<std::string()>;

/// Immutable after construction except for the plan; every method is thread-safe.
class ByteSource {
 public:
  virtual ~ByteSource() = default;

  /// The path or URL as the user gave it.
  [[nodiscard]] const std::string& name() const { return name_; }
  /// The size when it was opened.
  [[nodiscard]] std::uint64_t size() const { return size_; }
  /// True for an object in object storage.
  [[nodiscard]] virtual bool remote() const = 0;
  /// The size now: a local file that shrank since it was opened reads as zeros through HDF5,
  /// so its readers look; an object cannot change under an open source (reads send If-Match).
  [[nodiscard]] virtual std::uint64_t current_size() const { return size_; }

  /// Reads exactly out.size() bytes at `offset`. Throws IoError ("cannot read WHAT: ...") when
  /// the read fails, FormatError ("NAME is truncated: WHAT ends at byte ...") when the source
  /// ends first.
  virtual void read(std::span<std::uint8_t> out, std::uint64_t offset,
                    const Describe& what) const = 0;
  /// `extent` without a copy where the source holds it already (a remote source's planned GET:
  /// waits for it to land), else an empty SharedBytes: read() it. Throws as read() does.
  [[nodiscard]] virtual SharedBytes view(Extent extent, const Describe& what) const;
  /// Several reads at once (a remote source sends them together); `outs[i]` gets `extents[i]`.
  virtual void read_many(std::span<const Extent> extents,
                         std::span<const std::span<std::uint8_t>> outs, const Describe& what) const;

  /// What reading it asked of the network so far: the counters of the object-store client it
  /// reads through (shared by the objects opened with the same configuration); zeros for a
  /// local file.
  [[nodiscard]] virtual ObjectStoreStats network() const { return {}; }

  /// The ranges the next reads will ask for, in the order they will be asked, replacing any
  /// earlier plan. A local file ignores it; a remote source fetches ahead within `settings`.
  virtual void plan(std::vector<Extent> extents, const ReadAhead& settings) const;

 protected:
  ByteSource(std::string name, std::uint64_t size) : name_(std::move(name)), size_(size) {}

 private:
  std::string name_;
  std::uint64_t size_ = 0;
};

/// A range of the source numbered `source` in a ReadGroup.
struct SourceExtent {
  std::size_t source = 0;
  Extent extent;
};

/// Several sources read ahead as one (the shards of a dataset): one plan over all of them, in
/// one order, within one ReadAhead (its GETs in flight, its budget), neighbours coalesced within
/// an object. Joining makes each remote source read from the group's plan, no longer its own;
/// local sources plan nothing. Destroying the group cancels its GETs in flight (reads then
/// fetch what they need themselves). Thread-safe.
class ReadGroup {
 public:
  explicit ReadGroup(std::span<const std::shared_ptr<const ByteSource>> sources);
  ~ReadGroup();
  ReadGroup(const ReadGroup&) = delete;
  ReadGroup& operator=(const ReadGroup&) = delete;

  /// The ranges the next reads will ask for, in order, replacing any earlier plan (cache_dir's
  /// ranges left out).
  void plan(std::vector<SourceExtent> extents, const ReadAhead& settings) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// How an object is opened: by GETs of its first and last MiB, which bring its size and ETag
/// (one round trip; what every reader reads next), or by a HEAD alone (a cache_dir attached
/// next then serves the edges when it has them).
enum class Opening { edges, head };

/// Where an object's metadata lies: its first `head` and last `tail` bytes, fetched when it is
/// opened (one round trip) and kept for the metadata reads that follow. A manifest says it of
/// each shard it lists; unsaid, 1 MiB of each end, where HDF5 and h5pack put the metadata of a
/// file of any size (what lies beyond is fetched when read, 256 KiB at a time). Each is taken
/// as at least 1 byte and at most kMaxBytes: what an object keeps of its metadata.
struct MetadataEdges {
  static constexpr std::uint64_t kDefaultBytes = std::uint64_t{1} << 20;
  static constexpr std::uint64_t kMaxBytes = std::uint64_t{32} << 20;
  std::uint64_t head = kDefaultBytes;
  std::uint64_t tail = kDefaultBytes;
};

/// Opens `path`: an object for "s3://bucket/key", else a local file. Throws IoError naming it
/// when it cannot be opened (no such file or key, no permission), UsageError for a malformed URL.
/// An object opened shortly before (by this process, under the same endpoint) is shared: no
/// request. `edges` says how much of an object's ends its opening fetches (nothing for a file).
std::shared_ptr<const ByteSource> open_source(const std::string& path,
                                              Opening opening = Opening::edges,
                                              MetadataEdges edges = {});

/// Keeps every range read from the object `source` under `dir` (cache_dir; budget 0: half the
/// free space), for every reader of the object in this process; its first and last MiB too, so a
/// later open takes them from the disk. Nothing for a local file.
void attach_cache_dir(const ByteSource& source, const std::string& dir, std::uint64_t budget_bytes);

/// Reads `extent` of an object source through its small-read cache (the HDF5 driver's reads of
/// the file's metadata: the object's first and last MiB are fetched when it is opened, other
/// small reads in 256 KiB blocks). Reads of 1 MiB or more are not cached. `what` names the bytes
/// in a failure's message (by default: "bytes A-B (HDF5 metadata) of NAME").
void read_metadata(const ByteSource& source, std::span<std::uint8_t> out, std::uint64_t offset,
                   const Describe& what = {});

}  // namespace gpufeed::storage
