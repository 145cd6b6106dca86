// RawShards and JpegShards: each shard opened by its layout's reader, all of them at once.
#include <algorithm>
#include <atomic>
#include <exception>
#include <thread>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/shards.hpp"
#include "gpufeed/storage/object_store.hpp"

namespace gpufeed::formats {

namespace {

/// `error` again with `context` before its message, of the same kind.
[[noreturn]] void rethrow_in(const std::exception_ptr& error, const std::string& context) {
  try {
    std::rethrow_exception(error);
  } catch (const IoError& e) {
    throw IoError(context + ": " + e.what());
  } catch (const FormatError& e) {
    throw FormatError(context + ": " + e.what());
  } catch (const UsageError& e) {
    throw UsageError(context + ": " + e.what());
  }
}

/// Opens every shard of `list` with `open(path)`, `opening.parallel` at once (in object storage
/// an open is a round trip or two, HDF5's own work a small part of it). The first shard (in
/// order) that fails is thrown, named.
template <typename Reader, typename Open>
std::vector<std::unique_ptr<Reader>> open_all(const ShardList& list, const ShardOpening& opening,
                                              const Open& open) {
  const std::size_t n = list.files.size();
  std::vector<std::unique_ptr<Reader>> readers(n);
  std::vector<std::exception_ptr> errors(n);
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      const std::string& path = list.files[i].path;
      try {
        if (!opening.cache_dir.empty() && storage::is_object_url(path)) {
          storage::use_cache_dir(path, opening.cache_dir, opening.cache_dir_bytes);
        }
        readers[i] = open(path);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(opening.parallel, 1, n);
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (std::thread& t : pool) t.join();
  for (std::size_t i = 0; i < n; ++i) {
    if (errors[i]) {
      rethrow_in(errors[i], n == 1 ? std::string("cannot open ") + list.files[i].path
                                   : "shard " + std::to_string(i) + " of " + std::to_string(n) +
                                         " (" + list.files[i].path + ")");
    }
  }
  return readers;
}

template <typename Reader>
std::vector<const Dataset*> views(const std::vector<std::unique_ptr<Reader>>& readers) {
  std::vector<const Dataset*> out;
  for (const auto& r : readers) out.push_back(r.get());
  return out;
}

}  // namespace

RawShards::RawShards(const ShardList& list, ReaderOptions options, ShardOpening opening) {
  readers_ = open_all<DatasetReader>(list, opening, [&](const std::string& path) {
    return std::make_unique<DatasetReader>(path, options);
  });
  join(views(readers_), list);
  const SampleShape shape = readers_.front()->sample_shape();
  for (std::size_t i = 0; i < readers_.size(); ++i) {
    if (readers_[i]->sample_shape() != shape) {
      throw FormatError(describe(i) + " stores " + to_string(readers_[i]->sample_shape()) +
                        " images and " + describe(0) + " " + to_string(shape) +
                        ": the shards of a dataset store one shape; pack them with one --size");
    }
    chunk_buffer_bytes_ = std::max(chunk_buffer_bytes_, readers_[i]->chunk_buffer_bytes());
  }
}

RawShards::~RawShards() = default;

std::uint64_t RawShards::stored_bytes() const {
  std::uint64_t total = 0;
  for (const auto& r : readers_) total += r->stored_bytes();
  return total;
}

void RawShards::read_chunk(std::uint64_t chunk, std::span<std::uint8_t> out) const {
  const ShardMap::Place p = shard_map().chunk_place(chunk);
  readers_[p.shard]->read_chunk(p.local, out);
}

storage::SharedBytes RawShards::view_chunk(std::uint64_t chunk) const {
  const ShardMap::Place p = shard_map().chunk_place(chunk);
  return readers_[p.shard]->view_chunk(p.local);
}

JpegShards::JpegShards(const ShardList& list, JpegReaderOptions options, ShardOpening opening) {
  readers_ = open_all<JpegDatasetReader>(list, opening, [&](const std::string& path) {
    return std::make_unique<JpegDatasetReader>(path, options);
  });
  join(views(readers_), list);
}

JpegShards::~JpegShards() = default;

std::uint64_t JpegShards::total_bytes() const {
  std::uint64_t total = 0;
  for (const auto& r : readers_) total += r->total_bytes();
  return total;
}

JpegShape JpegShards::shape(std::uint64_t sample) const {
  const ShardMap::Place p = shard_map().sample_place(sample);
  return readers_[p.shard]->shape(p.local);
}

std::uint64_t JpegShards::sample_size(std::uint64_t sample) const {
  const ShardMap::Place p = shard_map().sample_place(sample);
  return readers_[p.shard]->sample_size(p.local);
}

void JpegShards::sample_bytes(std::uint64_t sample, std::vector<std::uint8_t>& out) const {
  const ShardMap::Place p = shard_map().sample_place(sample);
  readers_[p.shard]->sample_bytes(p.local, out);
}

void JpegShards::read_sample(std::uint64_t sample, std::span<std::uint8_t> out) const {
  const ShardMap::Place p = shard_map().sample_place(sample);
  readers_[p.shard]->read_sample(p.local, out);
}

ImageFormat JpegShards::sample_format(std::uint64_t sample) const {
  const ShardMap::Place p = shard_map().sample_place(sample);
  return readers_[p.shard]->sample_format(p.local);
}

bool JpegShards::has_checksums() const {
  return std::all_of(readers_.begin(), readers_.end(),
                     [](const auto& r) { return r->has_checksums(); });
}

bool JpegShards::verify_checksum(std::uint64_t sample) const {
  const ShardMap::Place p = shard_map().sample_place(sample);
  return readers_[p.shard]->verify_checksum(p.local);
}

}  // namespace gpufeed::formats
