#include "dataset_source.hpp"

#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/storage/object_store.hpp"

namespace gpufeed::pipeline::detail {

namespace {

constexpr std::uint32_t kDefaultJpegSide = 224;

formats::ReaderOptions raw_options(const LoaderOptions& o) {
  formats::ReaderOptions r;
  r.images = o.source.images;
  r.labels = o.source.labels;
  r.layout = o.source.layout;
  r.use_index = o.source.use_index;
  return r;
}

void check_raw_options(const LoaderOptions& o, const formats::SampleShape& stored) {
  if (o.image.geometry.active()) {
    const formats::SampleShape out = loader_geometry(o, false).output(stored);
    if (o.image.height != 0 && o.image.geometry.crop == Geometry::Crop::none &&
        (o.image.height != out.height || o.image.width != out.width)) {
      throw OptionError(
          "size", "{size}=" + std::to_string(o.image.height) + "x" + std::to_string(o.image.width) +
                      " without a crop: " + o.source.path + " stores " +
                      formats::to_string(stored) + " images; set {resize} to change their size");
    }
    return;
  }
  if (o.image.augment == Augment::crop_flip || o.image.augment == Augment::center) {
    throw OptionError("augment",
                      "{augment}=" + to_string(o.image.augment) +
                          " is the short spelling for jpeg-layout files; on a raw file say the "
                          "crop itself: {crop}=random-resized (or {resize} and "
                          "{crop}=center) with {size}, and {hflip}");
  }
  if ((o.image.height != 0 && o.image.height != stored.height) ||
      (o.image.width != 0 && o.image.width != stored.width)) {
    throw OptionError("size", "{size}=" + std::to_string(o.image.height) + "x" +
                                  std::to_string(o.image.width) + ": " + o.source.path +
                                  " stores " + formats::to_string(stored) +
                                  " images, delivered at that size unless {resize} or {crop} "
                                  "changes it: drop {size}, or set {resize}");
  }
}

}  // namespace

DatasetSource DatasetSource::open(const LoaderOptions& options) {
  DatasetSource s;
  const std::vector<std::string> specs = options.source.paths.empty()
                                             ? std::vector<std::string>{options.source.path}
                                             : options.source.paths;
  formats::ShardList list = formats::resolve_shards(specs);
  if (!options.source.path.empty()) list.name = options.source.path;
  formats::ShardOpening opening;
  opening.cache_dir = options.storage.cache_dir;
  opening.cache_dir_bytes = options.storage.cache_dir_bytes;
  const std::string& first = list.files.front().path;
  if (!options.storage.cache_dir.empty() && storage::is_object_url(first)) {
    storage::use_cache_dir(first, options.storage.cache_dir, options.storage.cache_dir_bytes);
  }
  // A manifest says the layout; else the first shard does (a shard of another layout is named
  // by the reader that cannot read it).
  s.layout = list.layout == "jpeg"  ? formats::FileLayout::jpeg
             : list.layout == "raw" ? formats::FileLayout::raw
                                    : formats::probe_layout(first, options.source.images);
  if (s.layout == formats::FileLayout::jpeg) {
    formats::JpegReaderOptions j;
    j.labels = options.source.labels;
    s.jpeg = std::make_unique<formats::JpegShards>(list, j, opening);
    if (options.image.height > 4096 || options.image.width > 4096) {
      throw OptionError("size", "{size}=" + std::to_string(options.image.height) + "x" +
                                    std::to_string(options.image.width) +
                                    " is too large; use at most 4096x4096");
    }
  } else {
    s.raw = std::make_unique<formats::RawShards>(list, raw_options(options), opening);
    check_raw_options(options, s.raw->sample_shape());
  }
  return s;
}

std::uint64_t DatasetSource::num_samples() const {
  return dataset().num_samples();
}

std::uint64_t DatasetSource::samples_per_chunk() const {
  return dataset().samples_per_chunk();
}

const std::vector<std::int64_t>& DatasetSource::labels() const {
  return dataset().labels();
}

const std::optional<formats::ChannelStats>& DatasetSource::channel_stats() const {
  return dataset().channel_stats();
}

formats::SampleShape DatasetSource::slot_shape(const LoaderOptions& options) const {
  if (options.image.geometry.active()) {
    const formats::SampleShape stored =
        raw ? raw->sample_shape() : formats::SampleShape{0, 0, 3, formats::Layout::nhwc};
    return loader_geometry(options, !raw).output(stored);
  }
  if (raw) return raw->sample_shape();
  const std::uint32_t h = options.image.height != 0 ? options.image.height : kDefaultJpegSide;
  const std::uint32_t w = options.image.width != 0 ? options.image.width : kDefaultJpegSide;
  return {h, w, 3, formats::Layout::nhwc};
}

}  // namespace gpufeed::pipeline::detail
