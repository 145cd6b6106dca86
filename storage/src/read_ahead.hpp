#pragma once
// Reads ahead of a plan: the planned ranges (of one object, or of the objects of a ReadGroup),
// coalesced into GETs (neighbours in one object), fetched in order with at most `requests` in
// flight and `budget_bytes` fetched and not yet read. A read served by a fetched
// block copies from it; the block is freed once every planned byte in it was read. A block the
// reads passed long ago without reading (its chunk came from the loader's cache) is dropped
// when the budget needs room. Owned by its source, which closes it: the GETs still in flight
// are cancelled and their callbacks waited for, so that none runs (or sends more) after it.
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "gpufeed/base/spare_buffers.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "gpufeed/storage/object_store.hpp"
#include "remote_object.hpp"
#include "s3/client.hpp"

namespace gpufeed::storage {

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
  void close() noexcept;

  void plan(std::vector<ObjectExtent> extents, const ReadAhead& settings);

  /// Where served bytes lie in the block's own buffer (which `owner` keeps alive).
  struct Served {
    std::shared_ptr<const std::uint8_t[]> owner;
    std::uint64_t owner_bytes = 0;
    std::span<const std::uint8_t> bytes;
  };

  /// Where `extent` lies in a planned block, once the block landed; nothing when no block of
  /// the plan holds it. The caller copies from it or keeps `owner`.
  std::optional<Served> serve(const RemoteObject& object, const Extent& extent,
                              const Describe& what);

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
                                     std::uint64_t length) const;

  void drop_locked(const std::shared_ptr<Block>& block);

  /// Makes room by dropping fetched blocks the reads left behind; true when some were dropped.
  bool drop_stale_locked();

  void pump_locked(Started& started);

  void issue_locked(const std::shared_ptr<Block>& block, Started& started);

  void send(const Started& started);

  void landed(const std::shared_ptr<Block>& block, std::exception_ptr error);

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

}  // namespace gpufeed::storage
