// RawShards and JpegShards: each shard opened by its layout's reader, the objects' round trips
// of all of them at once.
#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <optional>
#include <span>
#include <system_error>
#include <thread>
#include <utility>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/probe.hpp"
#include "gpufeed/formats/shards.hpp"
#include "gpufeed/storage/byte_source.hpp"
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
  } catch (const std::exception& e) {  // std::bad_alloc and the like: named, of gpufeed's kind
    throw IoError(context + ": " + e.what());
  }
}

/// The shards in object storage made ready to open, `opening.parallel` at once: each object's
/// metadata fetched (its head and tail as the manifest says, else its first and last MiB), from
/// cache_dir when it has them. What HDF5 does next runs under its library-wide lock, one call at
/// a time whatever the threads, and reads from what was fetched here. The objects are held
/// opened (open_source shares them with the readers); an error is kept in `errors` at its index.
std::vector<std::shared_ptr<const storage::ByteSource>> fetch_remote(
    const ShardList& list, const ShardOpening& opening, std::vector<std::exception_ptr>& errors) {
  const std::size_t n = list.files.size();
  std::vector<std::shared_ptr<const storage::ByteSource>> held(n);
  std::vector<std::size_t> remote;
  for (std::size_t i = 0; i < n; ++i) {
    if (storage::is_object_url(list.files[i].path)) remote.push_back(i);
  }
  if (remote.empty()) return held;
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t k = next++; k < remote.size(); k = next++) {
      const std::size_t i = remote[k];
      const std::string& path = list.files[i].path;
      try {
        const ShardFile& file = list.files[i];
        storage::MetadataEdges edges;
        edges.head = file.head_bytes.value_or(edges.head);
        edges.tail = file.tail_bytes.value_or(edges.tail);
        // With cache_dir: a HEAD, the directory attached to the object this thread holds, then
        // its edges from the disk when they are there. (The object must stay held from the HEAD
        // on: the other threads' opens soon push it out of the objects opened of late, and an
        // object opened again would have no cache.)
        const bool cached = !opening.cache_dir.empty();
        held[i] = storage::open_source(
            path, cached ? storage::Opening::head : storage::Opening::edges, edges);
        if (cached) storage::attach_cache_dir(*held[i], opening.cache_dir, opening.cache_dir_bytes);
        std::uint8_t first = 0;
        storage::read_metadata(*held[i], std::span<std::uint8_t>(&first, 1), 0);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    }
  };
  const std::size_t threads = std::clamp<std::size_t>(opening.parallel, 1, remote.size());
  {
    std::vector<std::jthread> pool;  // joined when the block ends
    for (std::size_t t = 1; t < threads; ++t) {
      try {
        pool.emplace_back(work);
      } catch (const std::system_error&) {  // no thread to be had: those started do the rest
        break;
      }
    }
    work();
  }
  return held;
}

/// Opens every shard of `list` with `open(path)`: the objects' round trips in parallel
/// (fetch_remote), then HDF5's part one shard after another, in one thread (HDF5 is serial
/// inside: eight threads on its lock cost twice one). The first shard (in order) that fails is
/// thrown, named.
template <typename Reader, typename Open>
std::vector<std::unique_ptr<Reader>> open_all(const ShardList& list, const ShardOpening& opening,
                                              const Open& open) {
  const std::size_t n = list.files.size();
  std::vector<std::unique_ptr<Reader>> readers(n);
  std::vector<std::exception_ptr> errors(n);
  const auto held = fetch_remote(list, opening, errors);
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& path = list.files[i].path;
    try {
      if (errors[i]) std::rethrow_exception(errors[i]);
      readers[i] = open(path);
    } catch (...) {
      rethrow_in(std::current_exception(), n == 1 ? std::string("cannot open ") + path
                                                  : "shard " + std::to_string(i) + " of " +
                                                        std::to_string(n) + " (" + path + ")");
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

namespace {

/// HDF5 reads an object header 512 bytes at a time, past its end: the head takes that much of
/// what follows it (and a little more).
constexpr std::uint64_t kHeadSlackBytes = 4096;

/// Where `d`'s metadata lies in its `file_bytes`: the bytes before its first image (and
/// kHeadSlackBytes) and after its last (none when its images are read through HDF5).
std::optional<std::pair<std::uint64_t, std::uint64_t>> metadata_edges(const Dataset& d,
                                                                      std::uint64_t file_bytes) {
  std::vector<std::uint64_t> units(d.num_chunks());
  for (std::uint64_t u = 0; u < units.size(); ++u) units[u] = u;
  const std::vector<storage::Extent> extents = d.unit_extents(units);
  if (extents.empty() || extents.size() != units.size()) return std::nullopt;
  std::uint64_t first = file_bytes, end = 0;
  for (const storage::Extent& e : extents) {
    first = std::min(first, e.offset);
    end = std::max(end, e.offset + e.length);
  }
  if (end > file_bytes || first > end) return std::nullopt;
  return std::pair{std::min(first + kHeadSlackBytes, file_bytes), file_bytes - end};
}

}  // namespace

Manifest describe_shards(const std::string& dir, const std::vector<std::string>& names) {
  Manifest manifest;
  for (const std::string& name : names) {
    const std::string path = (std::filesystem::path(dir) / name).string();
    const FileLayout layout = probe_layout(path);
    const std::string layout_name = layout == FileLayout::jpeg ? "jpeg" : "raw";
    if (!manifest.layout.empty() && layout_name != manifest.layout) {
      throw FormatError(path + " is a " + layout_name + "-layout file and the shards before it " +
                        manifest.layout + ": a dataset has one layout");
    }
    manifest.layout = layout_name;
    std::unique_ptr<Dataset> reader;
    if (layout == FileLayout::jpeg) {
      reader = std::make_unique<JpegDatasetReader>(path);
    } else {
      reader = std::make_unique<DatasetReader>(path);
    }
    ShardFile file{
        .path = name, .samples = reader->num_samples(), .bytes = std::filesystem::file_size(path)};
    if (const auto edges = metadata_edges(*reader, *file.bytes)) {
      file.head_bytes = edges->first;
      file.tail_bytes = edges->second;
    }
    manifest.shards.push_back(std::move(file));
  }
  return manifest;
}

}  // namespace gpufeed::formats
