#include "gpufeed/formats/shards.hpp"

#include <algorithm>
#include <cmath>
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

void ShardedDataset::plan_each(std::span<const std::uint64_t> planned, bool samples,
                               const storage::ReadAhead& settings) const {
  if (shards_.size() == 1) {
    return samples ? shards_[0]->plan_sample_reads(planned, settings)
                   : shards_[0]->plan_reads(planned, settings);
  }
  std::vector<std::vector<std::uint64_t>> local(shards_.size());
  std::vector<std::uint64_t> first(shards_.size(), 0);  // of the first batch's ranges
  for (std::size_t i = 0; i < planned.size(); ++i) {
    const bool in_dataset =
        samples ? planned[i] < map_.num_samples() : planned[i] < map_.num_chunks();
    if (!in_dataset) continue;
    const ShardMap::Place p =
        samples ? map_.sample_place(planned[i]) : map_.chunk_place(planned[i]);
    local[p.shard].push_back(p.local);
    if (i < settings.first_ranges) ++first[p.shard];
  }
  for (std::size_t s = 0; s < shards_.size(); ++s) {
    if (!shards_[s]->remote()) continue;
    // A shard's share of the requests and of the budget is its share of the plan.
    const double share = planned.empty() ? 0.0 : double(local[s].size()) / double(planned.size());
    storage::ReadAhead mine = settings;
    mine.requests = std::max(1u, static_cast<unsigned>(std::ceil(settings.requests * share)));
    // (A shard's planner still keeps one GET in flight under a share smaller than a GET.)
    mine.budget_bytes = static_cast<std::uint64_t>(double(settings.budget_bytes) * share);
    mine.first_ranges = first[s];
    if (samples) {
      shards_[s]->plan_sample_reads(local[s], mine);
    } else {
      shards_[s]->plan_reads(local[s], mine);
    }
  }
}

}  // namespace gpufeed::formats
