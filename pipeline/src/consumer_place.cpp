#include "consumer_place.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <system_error>

#include "gpufeed/base/errors.hpp"
#include "random.hpp"

namespace gpufeed::pipeline::detail {

namespace {

/// A 64-bit digest of a stream of numbers (SplitMix64's finalizer over a running state).
class Digest {
 public:
  void add(std::uint64_t value) { state_ = mix_seed(state_, value); }
  void add(std::string_view text) {
    add(text.size());
    for (const char c : text) add(static_cast<unsigned char>(c));
  }
  [[nodiscard]] std::string hex() const {
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(state_));
    return text;
  }

 private:
  std::uint64_t state_ = 0x6770756665656431ull;  // "gpufeed1"
};

/// The shards of a dataset of several, in order, each by its file name and sample count: a
/// state of another list (a shard added, dropped or swapped) is refused, one moved to another
/// directory or bucket is not. (One file adds nothing: states taken before shards existed
/// still resume.)
void add_shard_list_of(const formats::ShardedDataset& dataset, Digest& d) {
  if (dataset.num_shards() < 2) return;
  d.add(dataset.num_shards());
  for (std::size_t i = 0; i < dataset.num_shards(); ++i) {
    const std::string& path = dataset.shard(i).path();
    d.add(std::string_view(path).substr(path.rfind('/') + 1));
    d.add(dataset.shard(i).num_samples());
  }
}

[[noreturn]] void refuse(const std::string& what) {
  throw UsageError("loader state: " + what);
}

/// A setting of the resume identity: the state and this loader must agree on it. The message
/// names it as a placeholder, so each front end shows its own name for it.
void expect_same(const char* field, const std::string& saved, const std::string& here) {
  if (saved == here) return;
  const std::string name = "{" + std::string(field) + "}";
  throw OptionError(field, "loader state: it was taken with " + name + "=" + saved +
                               " but this loader has " + name + "=" + here +
                               "; create the loader with the settings the state was taken with");
}

}  // namespace

ConsumerPlace::ConsumerPlace(const LoaderOptions& options, const DatasetSource& source,
                             const Sampler& sampler)
    : options_(options), source_(source), sampler_(sampler) {}

EpochPlan ConsumerPlace::start_epoch(std::uint64_t epoch) {
  EpochPlan plan;
  std::lock_guard lock(mutex_);
  if (pending_ && pending_->epoch == epoch) plan = plan_from(*pending_);
  pending_.reset();  // a restored state is for the start of its own epoch only
  place_ = Place{epoch, plan.closed, plan.consumed, plan.echoes_done, 0};
  return plan;
}

void ConsumerPlace::set_batches(std::uint64_t batches) {
  std::lock_guard lock(mutex_);
  place_.batches = batches;
}

void ConsumerPlace::advance(std::uint32_t samples, bool echoed) {
  std::lock_guard lock(mutex_);
  if (echoed) {
    ++place_.echo_repeats;
  } else {
    place_.consumed += samples;
    place_.echo_repeats = 0;
  }
}

std::uint64_t ConsumerPlace::batches() const {
  std::lock_guard lock(mutex_);
  return place_.batches;
}

const std::string& ConsumerPlace::fingerprint() const {
  std::call_once(fingerprint_once_, [this] {
    // What tells two datasets apart without reading their pixels: sizes, the sample shape,
    // how samples are stored, every label, and the bytes each sample or the images take.
    Digest d;
    d.add(source_.num_samples());
    d.add(source_.samples_per_chunk());
    d.add(static_cast<std::uint64_t>(source_.layout));
    for (const std::int64_t label : source_.labels()) d.add(static_cast<std::uint64_t>(label));
    if (source_.raw) {
      const formats::SampleShape s = source_.raw->sample_shape();
      d.add(s.height);
      d.add(s.width);
      d.add(s.channels);
      d.add(static_cast<std::uint64_t>(s.layout));
      d.add(source_.raw->stored_bytes());
    } else {
      for (std::uint64_t i = 0; i < source_.num_samples(); ++i) d.add(source_.jpeg->sample_size(i));
    }
    std::error_code ec;
    d.add(std::filesystem::file_size(options_.source.path, ec));
    add_shard_list_of(source_.dataset(), d);
    fingerprint_ = d.hex();
  });
  return fingerprint_;
}

std::string ConsumerPlace::next_samples(std::uint64_t epoch,
                                        std::span<const EpochSegment> segments) const {
  constexpr std::size_t kSamples = 256;
  const std::vector<std::uint64_t> next = sampler_.unconsumed(epoch, segments);
  const auto& labels = source_.labels();
  Digest d;
  for (std::size_t i = 0; i < std::min(kSamples, next.size()); ++i) {
    d.add(next[i]);
    d.add(static_cast<std::uint64_t>(labels[next[i]]));
  }
  return d.hex();
}

LoaderState ConsumerPlace::state() const {
  LoaderState s;
  {
    std::lock_guard lock(mutex_);
    s.epoch = place_.epoch;
    s.segments = place_.closed;
    s.segments.push_back({sampler_.options().shard.world_size, place_.consumed});
    s.echo_repeats = place_.echo_repeats;
  }
  s.dataset = options_.source.path;
  s.fingerprint = fingerprint();
  s.next_samples = next_samples(s.epoch, s.segments);
  s.samples = source_.num_samples();
  s.seed = options_.sampling.seed;
  s.order = options_.sampling.order;
  s.chunk_window = options_.sampling.chunk_window;
  s.batch_size = options_.sampling.batch_size;
  s.drop_tail = options_.sampling.drop_tail;
  s.drop_last = options_.sampling.drop_last;
  s.echo = options_.echo.to_string();
  s.rank = sampler_.options().shard.rank;
  return s;
}

void ConsumerPlace::restore(const LoaderState& s) {
  if (s.fingerprint != fingerprint() || s.samples != source_.num_samples()) {
    refuse("it belongs to another dataset: taken on " + s.dataset + " (" +
           std::to_string(s.samples) + " samples, fingerprint " + s.fingerprint + ") but " +
           options_.source.path + " has " + std::to_string(source_.num_samples()) +
           " samples, fingerprint " + fingerprint() + "; restore it into a loader of that file");
  }
  expect_same("seed", std::to_string(s.seed), std::to_string(options_.sampling.seed));
  expect_same("order", to_string(s.order), to_string(options_.sampling.order));
  expect_same("batch_size", std::to_string(s.batch_size),
              std::to_string(options_.sampling.batch_size));
  expect_same("drop_tail", s.drop_tail ? "true" : "false",
              options_.sampling.drop_tail ? "true" : "false");
  expect_same("drop_last", s.drop_last ? "true" : "false",
              options_.sampling.drop_last ? "true" : "false");
  if (s.order == Order::chunk) {
    expect_same("chunk_window", std::to_string(s.chunk_window),
                std::to_string(options_.sampling.chunk_window));
  }
  for (const EpochSegment& seg : s.segments) {
    if (seg.world_size == 0) refuse("a segment has world_size 0");
  }
  if (!s.next_samples.empty()) {
    if (const std::string here = next_samples(s.epoch, s.segments); here != s.next_samples) {
      refuse(
          "this loader would resume with other samples than the ones the state was taken "
          "before (digest " +
          here + ", the state's " + s.next_samples +
          "): the file's contents or the sample order changed since; restore it into a "
          "loader of the same file and version, or start the epoch over");
    }
  }
  std::lock_guard lock(mutex_);
  pending_ = s;
}

EpochPlan ConsumerPlace::plan_from(const LoaderState& s) const {
  EpochPlan plan;
  if (s.segments.empty()) return plan;
  const EpochSegment& last = s.segments.back();
  if (last.world_size != sampler_.options().shard.world_size) {
    // Another world size: what every old rank consumed is gone; the rest is dealt anew.
    plan.closed = s.segments;
    return plan;
  }
  // The same world size: this rank goes on in its share where the segment stopped.
  plan.closed.assign(s.segments.begin(), s.segments.end() - 1);
  plan.start = plan.consumed = last.samples_per_rank;
  const EchoOptions& echo = options_.echo;
  const bool fixed_echo = !echo.adaptive && echo.factor > 1 && s.echo == echo.to_string();
  if (fixed_echo && s.echo_repeats + 1 < echo.factor && plan.start > 0) {
    // Stopped between the echoes of a batch: read it again and deliver the echoes it lacks.
    const std::uint64_t b = options_.sampling.batch_size;
    plan.start -= (plan.start - 1) % b + 1;
    plan.replay = true;
    plan.echoes_done = s.echo_repeats;
  }
  return plan;
}

}  // namespace gpufeed::pipeline::detail
