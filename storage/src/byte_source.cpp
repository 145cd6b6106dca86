#include "gpufeed/storage/byte_source.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "disk_cache.hpp"
#include "gpufeed/storage/error.hpp"
#include "gpufeed/storage/file_io.hpp"
#include "read_ahead.hpp"
#include "remote_object.hpp"
#include "s3/client.hpp"

namespace gpufeed::storage {

namespace {

constexpr const char* kRecopy = "; copy it again or re-create it with h5pack convert";

[[noreturn]] void truncated(const ByteSource& source, std::uint64_t end, std::uint64_t ends_at,
                            const Describe& what) {
  throw FormatError(source.name() + " is truncated: " + what() + " ends at byte " +
                    std::to_string(end) + " but the file ends at byte " + std::to_string(ends_at) +
                    kRecopy);
}

// ---------------------------------------------------------------------------------------------
// A local file: pread, no lock, no state but the descriptor.

class LocalSource final : public ByteSource {
 public:
  LocalSource(const std::string& path, UniqueFd fd, std::uint64_t size)
      : ByteSource(path, size), fd_(std::move(fd)) {}

  [[nodiscard]] bool remote() const override { return false; }
  [[nodiscard]] std::uint64_t current_size() const override { return file_size(fd_.get(), name()); }

  void read(std::span<std::uint8_t> out, std::uint64_t offset,
            const Describe& what) const override {
    const ReadResult got = pread_full(fd_.get(), out, offset);
    if (got.error != 0) {
      throw IoError("cannot read " + what() + ": " + std::strerror(got.error) +
                    errno_advice(got.error));
    }
    if (got.bytes < out.size()) truncated(*this, offset + out.size(), offset + got.bytes, what);
  }

 private:
  UniqueFd fd_;
};

// ---------------------------------------------------------------------------------------------
// An object (remote_object.hpp), read ahead of a plan (read_ahead.hpp).

// What a reader of an object fetches first unless told otherwise (MetadataEdges): its first and
// last bytes, where HDF5's metadata and h5pack's small datasets (labels, index, offsets) are.
// Reads as large are not kept.
constexpr std::uint64_t kMetadataEdgeBytes = MetadataEdges::kDefaultBytes;
constexpr std::uint64_t kMetadataBlockBytes = std::uint64_t{256} << 10;
constexpr std::uint64_t kMetadataGapBytes = std::uint64_t{4} << 20;  // see read_metadata()

class RemoteSource final : public ByteSource {
 public:
  explicit RemoteSource(std::shared_ptr<RemoteObject> object)
      : ByteSource(object->url.text(), object->info.size), object_(std::move(object)) {}
  ~RemoteSource() override {
    if (own_planner_) own_planner_->close();  // a ReadGroup closes its own
    // What was read is in cache_dir once its reader is closed (at most the writer's queue).
    if (const std::shared_ptr<DiskCache> disk = object_->disk_cache()) disk->flush();
  }
  RemoteSource(const RemoteSource&) = delete;
  RemoteSource& operator=(const RemoteSource&) = delete;

  [[nodiscard]] bool remote() const override { return true; }
  [[nodiscard]] RemoteObject& object() const { return *object_; }
  [[nodiscard]] ObjectStoreStats network() const override { return object_->client->stats(); }

  void read(std::span<std::uint8_t> out, std::uint64_t offset,
            const Describe& what) const override {
    check_within(out.size(), offset, what);
    if (out.empty()) return;
    const Extent extent{offset, out.size()};
    const std::shared_ptr<DiskCache> disk = object_->disk_cache();
    if (disk && disk->read(extent, out)) return;
    if (const std::optional<Planner::Served> served = serve(extent, what)) {
      std::memcpy(out.data(), served->bytes.data(), out.size());
      return;
    }
    try {
      object_->client->get(object_->url, {offset, out.size()}, out, object_->info.etag);
    } catch (const IoError&) {
      rethrow_as_read(std::current_exception(), what);
    }
    if (disk) disk->write(extent, out);
  }

  [[nodiscard]] SharedBytes view(Extent extent, const Describe& what) const override {
    check_within(extent.length, extent.offset, what);
    if (extent.length == 0) return {};
    const std::shared_ptr<DiskCache> disk = object_->disk_cache();
    if (disk && disk->contains(extent)) return {};  // on the disk: read() copies it from there
    std::optional<Planner::Served> served = serve(extent, what);
    if (!served) return {};
    return {std::move(served->owner), served->bytes, served->owner_bytes};
  }

  void read_many(std::span<const Extent> extents, std::span<const std::span<std::uint8_t>> outs,
                 const Describe& what) const override {
    struct Wait {
      std::mutex mutex;
      std::condition_variable cv;
      std::size_t left = 0;
      std::exception_ptr error;
    };
    const auto wait = std::make_shared<Wait>();
    wait->left = extents.size();
    for (std::size_t i = 0; i < extents.size(); ++i) {
      check_within(extents[i].length, extents[i].offset, what);
      object_->client->get_async(object_->url, {extents[i].offset, extents[i].length}, outs[i],
                                 object_->info.etag, [wait](std::exception_ptr error) {
                                   std::lock_guard lock(wait->mutex);
                                   if (error && !wait->error) wait->error = error;
                                   if (--wait->left == 0) wait->cv.notify_all();
                                 });
    }
    std::unique_lock lock(wait->mutex);
    wait->cv.wait(lock, [&] { return wait->left == 0; });
    if (wait->error) rethrow_as_read(wait->error, what);
  }

  void plan(std::vector<Extent> extents, const ReadAhead& settings) const override {
    std::vector<ObjectExtent> planned;
    planned.reserve(extents.size());
    for (const Extent& e : extents) {
      if (!cached(e)) planned.push_back({object_, e});
    }
    planner()->plan(std::move(planned), settings);
  }

  /// True when cache_dir holds `extent`: the reads take it from there, a plan leaves it out.
  [[nodiscard]] bool cached(const Extent& extent) const {
    const std::shared_ptr<DiskCache> disk = object_->disk_cache();
    return disk && disk->contains(extent);
  }
  [[nodiscard]] const std::shared_ptr<RemoteObject>& shared_object() const { return object_; }

  /// Reads ahead through `planner` (a ReadGroup's, shared with other objects) from now on.
  void join(std::shared_ptr<Planner> planner) const {
    std::shared_ptr<Planner> own;
    {
      std::lock_guard lock(planner_mutex_);
      own = std::exchange(own_planner_, nullptr);
      planner_ = std::move(planner);
    }
    if (own) own->close();
  }

 private:
  /// The planner reads are served from: the source's own (made at the first plan) or a
  /// ReadGroup's.
  [[nodiscard]] std::shared_ptr<Planner> planner() const {
    std::lock_guard lock(planner_mutex_);
    if (!planner_) planner_ = own_planner_ = std::make_shared<Planner>();
    return planner_;
  }

  /// `extent` from a planned GET, handed to the disk cache's writer in the GET's own buffer
  /// (no copy for it either); nothing when the plan does not hold it.
  std::optional<Planner::Served> serve(const Extent& extent, const Describe& what) const {
    std::optional<Planner::Served> served = planner()->serve(*object_, extent, what);
    if (served) {
      if (const std::shared_ptr<DiskCache> disk = object_->disk_cache()) {
        disk->write_shared(extent, served->owner, served->owner_bytes, served->bytes);
      }
    }
    return served;
  }

  void check_within(std::uint64_t length, std::uint64_t offset, const Describe& what) const {
    if (offset > size() || length > size() - offset) {
      truncated(*this, offset + length, size(), what);
    }
  }

  const std::shared_ptr<RemoteObject> object_;
  mutable std::mutex planner_mutex_;
  mutable std::shared_ptr<Planner> planner_;      // guarded by planner_mutex_
  mutable std::shared_ptr<Planner> own_planner_;  // planner_ when it is this source's own
};

// One object is opened several times in a row (the layout probe, then the reader; each rank's
// loaders): the last few opened stay for a short while, so those opens share one opening and the
// metadata already fetched.
struct RecentObjects {
  static constexpr auto kKeep = std::chrono::seconds(30);
  std::mutex mutex;
  std::unordered_map<std::string, std::weak_ptr<RemoteObject>> open;
  std::shared_ptr<RemoteObject> last;
  std::chrono::steady_clock::time_point last_at;
};

RecentObjects& recent_objects() {
  static RecentObjects recent;
  return recent;
}

void fetch_edges(const RemoteSource& source) {
  RemoteObject& object = source.object();
  const std::uint64_t size = object.info.size;
  const std::uint64_t head = std::min(size, object.edge_head.load());
  std::vector<Extent> extents{{0, head}};
  if (size > head) {
    const std::uint64_t tail = std::max(head, size - std::min(size, object.edge_tail.load()));
    if (tail < size) extents.push_back({tail, size - tail});
  }
  // From cache_dir when it has them: an epoch served from there opens with one HEAD.
  const std::shared_ptr<DiskCache> disk = object.disk_cache();
  std::vector<Extent> fetch;
  std::vector<std::vector<std::uint8_t>> fetched;
  std::vector<std::span<std::uint8_t>> outs;
  for (const Extent& e : extents) {
    std::vector<std::uint8_t> bytes(e.length);
    if (disk && disk->read(e, bytes)) {
      object.keep(e.offset, std::move(bytes));
    } else {
      fetch.push_back(e);
      fetched.push_back(std::move(bytes));
    }
  }
  for (auto& bytes : fetched) outs.emplace_back(bytes);
  source.read_many(fetch, outs,
                   [&] { return std::string("the HDF5 metadata of ") + source.name(); });
  for (std::size_t i = 0; i < fetch.size(); ++i) {
    if (disk) disk->write(fetch[i], fetched[i]);
    object.keep(fetch[i].offset, std::move(fetched[i]));
  }
}

std::shared_ptr<const ByteSource> open_remote(const std::string& path, Opening opening,
                                              MetadataEdges sizes) {
  const s3::Url url = s3::Url::parse(path);
  std::shared_ptr<s3::Client> client = s3::Client::shared(url.scheme);
  RecentObjects& recent = recent_objects();
  std::shared_ptr<RemoteObject> object;
  {
    std::lock_guard lock(recent.mutex);
    if (auto it = recent.open.find(path); it != recent.open.end()) object = it->second.lock();
    if (!object && recent.last && recent.last->url.text() == path &&
        std::chrono::steady_clock::now() - recent.last_at < RecentObjects::kKeep) {
      object = recent.last;
    }
    if (object && object->client != client) object.reset();  // opened under another endpoint
  }
  const auto sized = [&](RemoteObject& o) {  // a manifest's edges, for a HEAD opening's fetch
    constexpr std::uint64_t kMax = MetadataEdges::kMaxBytes;
    if (sizes.head != MetadataEdges::kDefaultBytes)
      o.edge_head = std::clamp<std::uint64_t>(sizes.head, 1, kMax);
    if (sizes.tail != MetadataEdges::kDefaultBytes)
      o.edge_tail = std::clamp<std::uint64_t>(sizes.tail, 1, kMax);
  };
  if (object) {
    sized(*object);
    return std::make_shared<RemoteSource>(std::move(object));
  }
  object = std::make_shared<RemoteObject>();
  object->client = std::move(client);
  object->url = url;
  sized(*object);
  try {
    if (opening == Opening::edges) {
      // Its edges (the first and last MiB, or what a manifest says of the shard) with the size
      // and ETag, in one round trip (a HEAD would be one more): every open reads them next.
      s3::ObjectEdges edges =
          object->client->edges(url, object->edge_head.load(), object->edge_tail.load());
      object->info = edges.info;
      if (edges.first.size() >= edges.info.size) {  // the object is no larger than an edge
        object->keep(0, std::move(edges.first));
      } else if (edges.last_offset == 0) {
        object->keep(0, std::move(edges.last));
      } else {
        object->keep(0, std::move(edges.first));
        object->keep(edges.last_offset, std::move(edges.last));
      }
      std::call_once(object->edges_once, [] {});
    } else {
      object->info = object->client->head(url);
    }
  } catch (const IoError& e) {
    throw IoError(std::string("cannot open ") + path + ": " + e.what());
  }
  auto source = std::make_shared<RemoteSource>(object);
  std::lock_guard lock(recent.mutex);
  recent.open[path] = object;
  recent.last = object;
  recent.last_at = std::chrono::steady_clock::now();
  std::erase_if(recent.open, [](const auto& entry) { return entry.second.expired(); });
  return source;
}

}  // namespace

void ByteSource::read_many(std::span<const Extent> extents,
                           std::span<const std::span<std::uint8_t>> outs,
                           const Describe& what) const {
  for (std::size_t i = 0; i < extents.size(); ++i) read(outs[i], extents[i].offset, what);
}

void ByteSource::plan(std::vector<Extent> /*extents*/, const ReadAhead& /*settings*/) const {}

std::uint64_t OwnerCharges::hold(const void* owner, std::uint64_t owner_bytes) {
  Owner& o = owners_[owner];
  if (o.ranges++ != 0) return 0;
  o.bytes = owner_bytes;
  return owner_bytes;
}

std::uint64_t OwnerCharges::release(const void* owner) {
  const auto it = owners_.find(owner);
  if (it == owners_.end() || --it->second.ranges != 0) return 0;
  const std::uint64_t bytes = it->second.bytes;
  owners_.erase(it);
  return bytes;
}

SharedBytes ByteSource::view(Extent /*extent*/, const Describe& /*what*/) const {
  return {};
}

std::shared_ptr<const ByteSource> open_source(const std::string& path, Opening opening,
                                              MetadataEdges edges) {
  if (is_object_url(path)) return open_remote(path, opening, edges);
  UniqueFd fd = open_read_only(path);
  const std::uint64_t size = file_size(fd.get(), path);
  return std::make_shared<LocalSource>(path, std::move(fd), size);
}

struct ReadGroup::Impl {
  std::vector<const RemoteSource*> sources;  // null for a local source
  std::shared_ptr<Planner> planner = std::make_shared<Planner>();
};

ReadGroup::ReadGroup(std::span<const std::shared_ptr<const ByteSource>> sources)
    : impl_(std::make_unique<Impl>()) {
  for (const auto& source : sources) {
    const auto* remote = dynamic_cast<const RemoteSource*>(source.get());
    if (remote != nullptr) remote->join(impl_->planner);
    impl_->sources.push_back(remote);
  }
}

ReadGroup::~ReadGroup() {
  impl_->planner->close();
}

void ReadGroup::plan(std::vector<SourceExtent> extents, const ReadAhead& settings) const {
  std::vector<ObjectExtent> planned;
  planned.reserve(extents.size());
  for (const SourceExtent& e : extents) {
    const RemoteSource* source = impl_->sources.at(e.source);
    if (source != nullptr && !source->cached(e.extent)) {
      planned.push_back({source->shared_object(), e.extent});
    }
  }
  impl_->planner->plan(std::move(planned), settings);
}

void attach_cache_dir(const ByteSource& source, const std::string& dir,
                      std::uint64_t budget_bytes) {
  if (const auto* remote = dynamic_cast<const RemoteSource*>(&source)) {
    remote->object().attach(dir, budget_bytes);
  }
}

void read_metadata(const ByteSource& source, std::span<std::uint8_t> out, std::uint64_t offset,
                   const Describe& named) {
  const auto* remote = dynamic_cast<const RemoteSource*>(&source);
  const Describe what = named ? named : Describe([&] {
    return "bytes " + std::to_string(offset) + "-" + std::to_string(offset + out.size()) +
           " (HDF5 metadata) of " + source.name();
  });
  if (remote == nullptr) return source.read(out, offset, what);
  RemoteObject& object = remote->object();
  std::call_once(object.edges_once, [&] { fetch_edges(*remote); });
  if (object.copy_cached(out, offset)) return;
  if (out.size() >= kMetadataEdgeBytes) return source.read(out, offset, what);     // read as it is
  if (offset + out.size() > source.size()) return source.read(out, offset, what);  // says why
  const std::uint64_t start = offset / kMetadataBlockBytes * kMetadataBlockBytes;
  std::uint64_t end =
      std::min(source.size(), std::max(offset + out.size(), start + kMetadataBlockBytes));
  // A read a little before a block already kept (the last MiB) fetches the whole gap up to it:
  // h5pack writes the labels and the index after the images, just before the file's last MiB,
  // and HDF5 reads them a piece at a time; each piece would be a round trip of its own.
  if (const std::optional<std::uint64_t> next = object.kept_after(offset);
      next && *next - start <= kMetadataGapBytes) {
    end = *next;
  }
  std::vector<std::uint8_t> block(end - start);
  source.read(block, start, what);
  if (offset + out.size() <= end) {
    std::memcpy(out.data(), block.data() + (offset - start), out.size());
    object.keep(start, std::move(block));
    return;
  }
  object.keep(start, std::move(block));  // the read runs on into the block kept next
  if (!object.copy_cached(out, offset)) source.read(out, offset, what);  // not kept: fetched
}

}  // namespace gpufeed::storage
