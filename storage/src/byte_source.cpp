#include "gpufeed/storage/byte_source.hpp"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <utility>

#include "disk_cache.hpp"
#include "gpufeed/base/spare_buffers.hpp"
#include "gpufeed/storage/error.hpp"
#include "gpufeed/storage/file_io.hpp"
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
// An object: what every reader of one URL shares (size, ETag, the client, the metadata reads).

// What a reader of an object fetches first: its first and last bytes, where HDF5's metadata
// and h5pack's small datasets (labels, index, offsets) are.
constexpr std::uint64_t kMetadataEdgeBytes = std::uint64_t{1} << 20;  // fetched at open
constexpr std::uint64_t kMetadataBlockBytes = std::uint64_t{256} << 10;
constexpr std::uint64_t kMetadataGapBytes = std::uint64_t{4} << 20;  // see read_metadata()
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

  std::once_flag edges_once;  // the first and last MiB, fetched at the first metadata read
  std::shared_ptr<DiskCache> disk;
  std::string disk_dir;
  std::uint64_t disk_budget = 0;
};

void rethrow_as_read(const std::exception_ptr& error, const Describe& what) {
  try {
    std::rethrow_exception(error);
  } catch (const IoError& e) {
    throw IoError("cannot read " + what() + ": " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Reads ahead of a plan: the planned ranges (of one object, or of the objects of a ReadGroup),
// coalesced into GETs (neighbours in one object), fetched in order with at most `requests` in
// flight and `budget_bytes` fetched and not yet read. A read served by a fetched
// block copies from it; the block is freed once every planned byte in it was read. A block the
// reads passed long ago without reading (its chunk came from the loader's cache) is dropped
// when the budget needs room. Owned by its source, which closes it: the GETs still in flight
// are cancelled and their callbacks waited for, so that none runs (or sends more) after it.

/// A planned range of an object.
struct ObjectExtent {
  std::shared_ptr<RemoteObject> object;
  Extent extent;
};

class Planner {
 public:
  Planner() = default;
  Planner(const Planner&) = delete;
  Planner& operator=(const Planner&) = delete;

  /// Drops the plan and cancels its GETs in flight; returns once none is left. No method but
  /// the destructor may be called after it.
  void close() noexcept {
    std::unique_lock lock(mutex_);
    closed_ = true;
    queue_.clear();
    while (!blocks_.empty()) drop_locked(std::shared_ptr<Block>(blocks_.begin()->second));
    if (in_flight_ == 0) return;
    const std::vector<std::shared_ptr<s3::Client>> clients = clients_;
    lock.unlock();
    for (const std::shared_ptr<s3::Client>& client : clients) client->cancel(this);
    lock.lock();
    done_.wait(lock, [&] { return in_flight_ == 0; });
  }

  void plan(std::vector<ObjectExtent> extents, const ReadAhead& settings) {
    Started started;
    std::unique_lock lock(mutex_);
    while (!blocks_.empty()) drop_locked(std::shared_ptr<Block>(blocks_.begin()->second));
    queue_.clear();
    settings_ = settings;
    settings_.requests = std::max(1u, settings_.requests);
    frontier_ = 0;
    std::uint64_t seq = 0;
    std::uint64_t ranges = 0;
    unsigned first_gets = 0;  // the GETs of the first batch's ranges
    std::shared_ptr<Block> open;
    for (const auto& [object, e] : extents) {
      const bool first = ranges++ < settings_.first_ranges;
      if (e.length == 0) continue;
      if (open && open->object == object.get() && e.offset >= open->extent.end() &&
          e.offset - open->extent.end() <= settings_.coalesce_gap_bytes &&
          e.end() - open->extent.offset <= settings_.max_request_bytes) {
        open->extent.length = e.end() - open->extent.offset;
        open->remaining += e.length;
        continue;
      }
      if (std::find(objects_.begin(), objects_.end(), object) == objects_.end()) {
        objects_.push_back(object);
      }
      open = std::make_shared<Block>();
      open->object = object.get();
      open->extent = e;
      open->remaining = e.length;
      open->seq = seq++;
      blocks_.emplace(Key{object.get(), e.offset}, open);
      queue_.push_back(open);
      if (first) ++first_gets;
    }
    window_ = std::min(settings_.requests, std::max(kFirstWindow, first_gets));
    pump_locked(started);
    lock.unlock();
    send(started);
  }

  /// Where served bytes lie in the block's own buffer (which `owner` keeps alive).
  struct Served {
    std::shared_ptr<const std::uint8_t[]> owner;
    std::uint64_t owner_bytes = 0;
    std::span<const std::uint8_t> bytes;
  };

  /// Where `extent` lies in a planned block, once the block landed; nothing when no block of
  /// the plan holds it. The caller copies from it or keeps `owner`.
  std::optional<Served> serve(const RemoteObject& object, const Extent& extent,
                              const Describe& what) {
    Started started;
    std::unique_lock lock(mutex_);
    const std::shared_ptr<Block> block = find_locked(object, extent.offset, extent.length);
    if (!block) return std::nullopt;
    if (block->state == State::queued) {  // the reads caught up with the plan: fetch it now
      std::erase(queue_, block);
      issue_locked(block, started);
      lock.unlock();
      send(started);
      started.clear();
      lock.lock();
    }
    done_.wait(lock, [&] { return block->state == State::done || block->state == State::failed; });
    if (block->state == State::failed) {
      const std::exception_ptr error = block->error;
      lock.unlock();
      rethrow_as_read(error, what);
    }
    const std::uint8_t* from = block->bytes.get() + (extent.offset - block->extent.offset);
    Served served{block->bytes, block->extent.length, {from, extent.length}};
    frontier_ = std::max(frontier_, block->seq);
    block->remaining -= std::min<std::uint64_t>(block->remaining, extent.length);
    const bool read_through = block->remaining == 0;
    if (read_through) drop_locked(block);
    pump_locked(started);
    lock.unlock();
    send(started);
    // The reader of a block's last range maps in the memory of a GET to come: the I/O thread's
    // callbacks then write into buffers whose pages are there.
    if (read_through) spares_->stock(block->extent.length, kStockBytes);
    return served;
  }

 private:
  enum class State { queued, fetching, done, failed };
  struct Block;
  /// Blocks marked fetching under the lock, whose GETs are sent after it is released (a client
  /// that is shutting down completes a GET at once, on the caller's thread).
  using Started = std::vector<std::shared_ptr<Block>>;
  struct Block {
    /// Owned by the planner (objects_): a GET's callback, on the client's I/O thread, may hold
    /// the last reference to a block, and must never hold the last to its client.
    const RemoteObject* object = nullptr;
    Extent extent;
    std::uint64_t remaining = 0;  ///< planned bytes not yet read
    std::uint64_t seq = 0;        ///< position in the plan
    State state = State::queued;
    /// Out of the plan: read in full, skipped, or replaced by a new plan. Its bytes live on
    /// while a read still copies from it (the last reference frees them).
    bool dropped = false;
    std::shared_ptr<std::uint8_t[]> bytes;  // shared with the disk cache's writer
    std::exception_ptr error;
  };
  /// A fetched block this far behind the furthest block read is taken to be skipped.
  static constexpr std::uint64_t kStaleBlocks = 4096;
  /// GETs in flight when a plan starts, or the first batch's GETs if more; each one that lands
  /// allows one more, up to settings_.requests (slow start: the window doubles per round trip).
  /// All requests at once would share the link evenly, and the first batch would wait for the
  /// whole first wave; fewer than it needs, and it waits for two (a chunk window of 16 chunks
  /// in 8 GETs and then 8: a round trip more before the first batch).
  static constexpr unsigned kFirstWindow = 8;

  std::shared_ptr<Block> find_locked(const RemoteObject& object, std::uint64_t offset,
                                     std::uint64_t length) const {
    auto it = blocks_.upper_bound(Key{&object, offset});
    while (it != blocks_.begin()) {
      --it;
      if (it->first.first != &object) break;
      const Block& b = *it->second;
      if (offset + length <= b.extent.end()) return it->second;
      if (offset - b.extent.offset > settings_.max_request_bytes) break;
    }
    return nullptr;
  }

  void drop_locked(const std::shared_ptr<Block>& block) {
    if (block->dropped) return;
    block->dropped = true;
    for (auto [it, end] = blocks_.equal_range(Key{block->object, block->extent.offset}); it != end;
         ++it) {
      if (it->second == block) {
        blocks_.erase(it);
        break;
      }
    }
    // A queued block holds nothing yet; a fetching one gives its bytes back when it lands.
    if (block->state == State::done || block->state == State::failed) {
      held_ -= block->extent.length;
    }
  }

  /// Makes room by dropping fetched blocks the reads left behind; true when some were dropped.
  bool drop_stale_locked() {
    bool dropped = false;
    for (auto it = blocks_.begin(); it != blocks_.end();) {
      const std::shared_ptr<Block> b = it->second;
      ++it;
      if (b->state == State::done && b->seq + kStaleBlocks < frontier_) {
        drop_locked(b);
        dropped = true;
      }
    }
    return dropped;
  }

  void pump_locked(Started& started) {
    bool swept = false;
    while (!queue_.empty() && in_flight_ < window_) {
      const std::shared_ptr<Block>& next = queue_.front();
      if (held_ != 0 && held_ + next->extent.length > settings_.budget_bytes) {
        if (swept || !drop_stale_locked()) return;
        swept = true;
        continue;
      }
      const std::shared_ptr<Block> block = next;
      queue_.pop_front();
      issue_locked(block, started);
    }
  }

  void issue_locked(const std::shared_ptr<Block>& block, Started& started) {
    // close() cancels the GETs sent through every client the plan's objects read through.
    if (std::find(clients_.begin(), clients_.end(), block->object->client) == clients_.end()) {
      clients_.push_back(block->object->client);
    }
    block->state = State::fetching;
    block->bytes = spares_->take_shared(block->extent.length);  // not zeroed: a GET fills it
    held_ += block->extent.length;
    ++in_flight_;
    started.push_back(block);
  }

  void send(const Started& started) {
    for (const std::shared_ptr<Block>& block : started) {
      const std::span<std::uint8_t> out(block->bytes.get(), block->extent.length);
      const RemoteObject& object = *block->object;
      // The callback holds the planner by address: close() waits for it, and nothing it holds
      // owns the client, whose I/O thread runs it.
      object.client->get_async(
          object.url, {block->extent.offset, block->extent.length}, out, object.info.etag,
          [this, block](std::exception_ptr error) { landed(block, std::move(error)); }, this);
    }
  }

  void landed(const std::shared_ptr<Block>& block, std::exception_ptr error) {
    Started started;
    std::unique_lock lock(mutex_);
    --in_flight_;
    block->error = std::move(error);
    block->state = block->error ? State::failed : State::done;
    if (block->dropped) held_ -= block->extent.length;
    done_.notify_all();  // under the lock: close() may free the planner once it sees none left
    // Closed, nothing more is sent. Nor after a failure: a client that is stopping fails every
    // GET at once, on the sender's thread, which would recurse through the whole plan; the
    // reads fetch what they need on demand.
    if (closed_ || block->error) return;
    if (window_ < settings_.requests) ++window_;
    pump_locked(started);
    lock.unlock();
    send(started);
  }

  /// Bytes of GET buffers kept for the next GETs once every reader of them let go (the loader's
  /// chunk cache keeps chunks as views of them): in steady state a GET faults no page in.
  static constexpr std::uint64_t kSpareBytes = std::uint64_t{64} << 20;
  /// Spare bytes the readers keep mapped in for the GETs to come.
  static constexpr std::uint64_t kStockBytes = std::uint64_t{32} << 20;

  /// A block's place: its object, and its start there.
  using Key = std::pair<const RemoteObject*, std::uint64_t>;

  const std::shared_ptr<SpareBuffers> spares_ = std::make_shared<SpareBuffers>(kSpareBytes);
  std::mutex mutex_;
  std::condition_variable done_;
  ReadAhead settings_;
  std::multimap<Key, std::shared_ptr<Block>> blocks_;   // the plan's, by object and start
  std::vector<std::shared_ptr<s3::Client>> clients_;    // those GETs were sent through
  std::vector<std::shared_ptr<RemoteObject>> objects_;  // those the plans were of
  std::deque<std::shared_ptr<Block>> queue_;            // not yet fetched, in order
  std::uint64_t held_ = 0;  // bytes of blocks fetching, or fetched and not yet dropped
  unsigned in_flight_ = 0;
  bool closed_ = false;         // close() began: nothing more is sent
  unsigned window_ = 1;         // GETs allowed in flight now (slow start up to settings_.requests)
  std::uint64_t frontier_ = 0;  // the furthest block a read was served from
};

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
  std::vector<Extent> extents{{0, std::min(size, kMetadataEdgeBytes)}};
  if (size > kMetadataEdgeBytes) {
    const std::uint64_t tail = std::max(kMetadataEdgeBytes, size - kMetadataEdgeBytes);
    extents.push_back({tail, size - tail});
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

std::shared_ptr<const ByteSource> open_remote(const std::string& path, Opening opening) {
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
  if (object) return std::make_shared<RemoteSource>(std::move(object));
  object = std::make_shared<RemoteObject>();
  object->client = std::move(client);
  object->url = url;
  try {
    if (opening == Opening::edges) {
      // The first and last MiB with the size and ETag, in one round trip (a HEAD would be one
      // more): every open reads them next.
      s3::ObjectEdges edges = object->client->edges(url, kMetadataEdgeBytes);
      object->info = edges.info;
      const bool whole = edges.last_offset == 0;  // the object is no larger than an edge
      object->keep(0, std::move(edges.first));
      if (!whole) object->keep(edges.last_offset, std::move(edges.last));
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

std::shared_ptr<const ByteSource> open_source(const std::string& path, Opening opening) {
  if (is_object_url(path)) return open_remote(path, opening);
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

void read_metadata(const ByteSource& source, std::span<std::uint8_t> out, std::uint64_t offset) {
  const auto* remote = dynamic_cast<const RemoteSource*>(&source);
  const Describe what = [&] {
    return "bytes " + std::to_string(offset) + "-" + std::to_string(offset + out.size()) +
           " (HDF5 metadata) of " + source.name();
  };
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
