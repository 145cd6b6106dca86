#include "gpufeed/formats/shards.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>

#include "gpufeed/formats/error.hpp"

namespace gpufeed::formats {

namespace {

/// Channel statistics of the whole dataset from its shards', each weighted by its samples (a
/// shard's pixel count is not stored; shards of one pack hold images of alike sizes). None
/// unless every shard has them, with as many channels.
std::optional<ChannelStats> combined_stats(const std::vector<const Dataset*>& shards) {
  const auto& first = shards.front()->channel_stats();
  if (!first) return std::nullopt;
  const std::size_t channels = first->mean.size();
  std::vector<double> sum(channels, 0.0), squares(channels, 0.0);
  double samples = 0;
  for (const Dataset* d : shards) {
    const auto& s = d->channel_stats();
    if (!s || s->mean.size() != channels || s->stddev.size() != channels) return std::nullopt;
    const auto n = static_cast<double>(d->num_samples());
    for (std::size_t c = 0; c < channels; ++c) {
      sum[c] += n * s->mean[c];
      squares[c] += n * (double(s->stddev[c]) * s->stddev[c] + double(s->mean[c]) * s->mean[c]);
    }
    samples += n;
  }
  if (samples == 0) return first;
  ChannelStats out;
  for (std::size_t c = 0; c < channels; ++c) {
    const double mean = sum[c] / samples;
    out.mean.push_back(static_cast<float>(mean));
    out.stddev.push_back(
        static_cast<float>(std::sqrt(std::max(0.0, squares[c] / samples - mean * mean))));
  }
  return out;
}

}  // namespace

void ShardedDataset::join(std::vector<const Dataset*> shards, const ShardList& list) {
  shards_ = std::move(shards);
  name_ = list.name;
  const std::vector<std::string>& names = shards_.front()->class_names();
  for (std::size_t i = 0; i < shards_.size(); ++i) {
    const Dataset& d = *shards_[i];
    const ShardFile& file = list.files[i];
    if (file.samples && *file.samples != d.num_samples()) {
      throw FormatError(describe(i) + " has " + std::to_string(d.num_samples()) +
                        " samples, the manifest says " + std::to_string(*file.samples) +
                        ": it was replaced since the manifest was written; pack it again, or "
                        "write the manifest again (h5pack manifest)");
    }
    if (!d.class_names().empty() && !names.empty() && d.class_names() != names) {
      throw FormatError(describe(i) + " names its classes otherwise than " + describe(0) +
                        ": its labels would mean other classes; pack the shards from one source");
    }
    map_.add(d.num_samples(), d.samples_per_chunk());
    meta_.labels.insert(meta_.labels.end(), d.labels().begin(), d.labels().end());
  }
  meta_.class_names = names;
  meta_.channel_stats = combined_stats(shards_);
  meta_.schema_version = shards_.front()->schema_version();
  if (shards_.size() > 1 && remote()) {
    std::vector<std::shared_ptr<const storage::ByteSource>> sources;
    for (const Dataset* d : shards_) sources.push_back(d->byte_source());
    group_ = std::make_unique<storage::ReadGroup>(sources);
  }
}

std::string ShardedDataset::describe(std::size_t shard) const {
  return "shard " + std::to_string(shard) + " of " + std::to_string(shards_.size()) + " (" +
         shards_[shard]->path() + ")";
}

std::uint64_t ShardedDataset::samples_per_chunk() const {
  return shards_.front()->samples_per_chunk();
}

std::string ShardedDataset::compression() const {
  return shards_.front()->compression();
}

std::string ShardedDataset::read_path_name() const {
  std::vector<std::string> names;
  for (const Dataset* d : shards_) {
    std::string name = d->read_path_name();
    if (std::find(names.begin(), names.end(), name) == names.end())
      names.push_back(std::move(name));
  }
  std::string text;
  for (const std::string& n : names) text += (text.empty() ? "" : ", ") + n;
  return text;
}

bool ShardedDataset::remote() const {
  return std::any_of(shards_.begin(), shards_.end(), [](const Dataset* d) { return d->remote(); });
}

storage::ObjectStoreStats ShardedDataset::network() const {
  // The shards in object storage read through one client (one configuration): its counters.
  for (const Dataset* d : shards_) {
    if (d->remote()) return d->network();
  }
  return {};
}

void ShardedDataset::plan_reads(std::span<const std::uint64_t> units,
                                const storage::ReadAhead& settings) const {
  plan_each(units, false, settings);
}

void ShardedDataset::plan_sample_reads(std::span<const std::uint64_t> samples,
                                       const storage::ReadAhead& settings) const {
  plan_each(samples, true, settings);
}

std::vector<storage::Extent> ShardedDataset::unit_extents(
    std::span<const std::uint64_t> units) const {
  return shards_.size() == 1 ? shards_[0]->unit_extents(units) : std::vector<storage::Extent>{};
}

std::shared_ptr<const storage::ByteSource> ShardedDataset::byte_source() const {
  return shards_.size() == 1 ? shards_[0]->byte_source() : nullptr;
}

void ShardedDataset::plan_each(std::span<const std::uint64_t> planned, bool samples,
                               const storage::ReadAhead& settings) const {
  if (shards_.size() == 1) {
    return samples ? shards_[0]->plan_sample_reads(planned, settings)
                   : shards_[0]->plan_reads(planned, settings);
  }
  if (!group_) return;  // every shard local: nothing to fetch ahead
  // Samples of a layout read a unit at a time (raw chunks) are planned as their units, each once.
  const bool by_sample = samples && layout() == FileLayout::jpeg;
  std::vector<std::uint64_t> units;
  if (samples && !by_sample) {
    std::vector<bool> seen(map_.num_chunks(), false);
    for (const std::uint64_t s : planned) {
      if (s >= map_.num_samples()) continue;
      const std::uint64_t chunk = map_.chunk_of(s);
      if (!seen[chunk]) units.push_back(chunk);
      seen[chunk] = true;
    }
    planned = units;
  }
  std::vector<storage::SourceExtent> extents;
  extents.reserve(planned.size());
  for (const std::uint64_t unit : planned) {
    if (unit >= (by_sample ? map_.num_samples() : map_.num_chunks())) continue;
    const ShardMap::Place p = by_sample ? map_.sample_place(unit) : map_.chunk_place(unit);
    const std::span<const std::uint64_t> local(&p.local, 1);
    for (const storage::Extent& e : by_sample ? shards_[p.shard]->sample_extents(local)
                                              : shards_[p.shard]->unit_extents(local)) {
      extents.push_back({p.shard, e});
    }
  }
  group_->plan(std::move(extents), settings);
}

}  // namespace gpufeed::formats
