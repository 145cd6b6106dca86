#include "read_ahead.hpp"

#include <algorithm>

namespace gpufeed::storage {

void Planner::close() noexcept {
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

void Planner::plan(std::vector<ObjectExtent> extents, const ReadAhead& settings) {
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

std::optional<Planner::Served> Planner::serve(const RemoteObject& object, const Extent& extent,
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

std::shared_ptr<Planner::Block> Planner::find_locked(const RemoteObject& object,
                                                     std::uint64_t offset,
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

void Planner::drop_locked(const std::shared_ptr<Block>& block) {
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

bool Planner::drop_stale_locked() {
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

void Planner::pump_locked(Started& started) {
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

void Planner::issue_locked(const std::shared_ptr<Block>& block, Started& started) {
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

void Planner::send(const Started& started) {
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

void Planner::landed(const std::shared_ptr<Block>& block, std::exception_ptr error) {
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

}  // namespace gpufeed::storage
