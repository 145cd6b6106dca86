// gpufeed._native.PackWriter and JpegPackWriter: schema v1 files written from Python
// (gpufeed.pack), atomically: nothing is at the destination until commit(). The raw writer takes
// chunks of pixels; the jpeg writer takes images (files, encoded bytes or pixels) and does the
// per-image work (check, decode, sum, keep or encode) on its threads, as h5pack convert does.
#include "pack_binding.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <oneapi/tbb/enumerable_thread_specific.h>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/image_work.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/ordered_map.hpp"
#include "gpufeed/formats/pack_file.hpp"
#include "gpufeed/formats/probe.hpp"
#include "gpufeed/formats/shards.hpp"
#include "gpufeed/storage/object_store.hpp"
#include "gpufeed/storage/pending_files.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

using Pixels = nb::ndarray<const std::uint8_t, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
using Labels = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using Image = nb::ndarray<const std::uint8_t, nb::ndim<3>, nb::c_contig, nb::device::cpu>;

class PackWriter {
 public:
  PackWriter(const std::string& path, std::uint64_t samples, std::uint32_t height,
             std::uint32_t width, std::uint32_t channels, std::uint64_t chunk) {
    formats::WriterOptions options;
    options.samples_per_chunk = chunk;
    writer_ = std::make_unique<formats::DatasetWriter>(
        path, samples, formats::SampleShape{height, width, channels, formats::Layout::nhwc},
        options);
  }

  [[nodiscard]] std::uint64_t num_chunks() const { return writer().num_chunks(); }
  [[nodiscard]] std::uint64_t samples_per_chunk() const { return writer().samples_per_chunk(); }

  /// Chunk `index`: its samples as one [n, H, W, C] uint8 array.
  void write_chunk(std::uint64_t index, const Pixels& pixels) {
    formats::DatasetWriter& w = writer();
    const formats::SampleShape shape = w.sample_shape();
    if (index >= w.num_chunks() || pixels.shape(0) != w.chunk_sample_count(index) ||
        pixels.shape(1) != shape.height || pixels.shape(2) != shape.width ||
        pixels.shape(3) != shape.channels) {
      throw UsageError("chunk " + std::to_string(index) + ": expected " +
                       std::to_string(index < w.num_chunks() ? w.chunk_sample_count(index) : 0) +
                       " samples of " + formats::to_string(shape));
    }
    const std::span<const std::uint8_t> raw(pixels.data(), pixels.size());
    nb::gil_scoped_release release;
    w.write(w.encode(index, raw));
  }

  void write_labels(const Labels& labels) {
    writer().write_labels(std::span<const std::int64_t>(labels.data(), labels.size()));
  }

  void write_source_index(const std::vector<std::uint64_t>& index) {
    writer().write_source_index(index);
  }

  /// Writes the index and the channel statistics and renames the file into place.
  void commit() {
    {
      nb::gil_scoped_release release;
      writer().commit();
    }
    writer_.reset();
  }

  /// Gives up: the temporary file is removed and nothing appears at the destination.
  void abort() noexcept { writer_.reset(); }

 private:
  [[nodiscard]] formats::DatasetWriter& writer() const {
    if (!writer_) throw UsageError("the pack writer has finished");
    return *writer_;
  }

  std::unique_ptr<formats::DatasetWriter> writer_;
};

/// An image as Python handed it over: a file's path, its encoded bytes, or HWC pixels.
struct PixelsCopy {
  std::vector<std::uint8_t> pixels;
  std::uint32_t height = 0, width = 0, channels = 0;
};
using ImageSource = std::variant<std::string, std::vector<std::uint8_t>, PixelsCopy>;

/// The first image of a batch that cannot be packed: its index and why.
using BadItem = std::optional<std::pair<std::uint64_t, std::string>>;

class JpegPackWriter {
 public:
  JpegPackWriter(const std::string& path, int quality, std::uint32_t max_side, unsigned threads)
      : writer_(std::make_unique<formats::JpegDatasetWriter>(path)), threads_(threads) {
    settings_.quality = quality;
    settings_.max_side = max_side;
  }

  /// Packs `images` (str: a file, bytes: an encoded image, a uint8 HWC array of 1 or 3
  /// channels: pixels to encode) with their labels, as samples `first`, `first` + 1, ...
  /// Returns the first bad one (its index and why), after which nothing more is appended.
  BadItem add(const nb::list& images, const std::vector<std::int64_t>& labels,
              std::uint64_t first) {
    if (labels.size() != images.size()) {
      throw UsageError(std::to_string(images.size()) + " images and " +
                       std::to_string(labels.size()) + " labels");
    }
    std::vector<ImageSource> sources;
    sources.reserve(images.size());
    for (std::size_t i = 0; i < images.size(); ++i) sources.push_back(source(images[i], first + i));
    formats::JpegDatasetWriter& w = writer();
    BadItem bad;
    nb::gil_scoped_release release;
    struct Stop {};
    try {
      formats::ordered_parallel_map(
          sources.size(), threads_,
          [&](std::uint64_t i) { return work(workers_.local(), std::move(sources[i])); },
          [&](std::uint64_t i, formats::ImageResult r) {
            if (r.bad) {
              bad.emplace(first + i, r.bad->message);
              throw Stop{};
            }
            w.append(r.bytes, r.shape, labels[i]);
            sums_.add(r.sums);
          });
    } catch (const Stop&) {
    }
    return bad;
  }

  [[nodiscard]] std::uint64_t samples() const { return writer().num_samples(); }

  /// Writes the index, the class names (if any) and the channel statistics, and renames the
  /// file into place.
  void commit(const std::vector<std::string>& class_names,
              const std::vector<std::uint64_t>& source_index) {
    formats::JpegDatasetWriter& w = writer();
    if (!class_names.empty()) w.set_class_names(class_names);
    if (!source_index.empty()) w.set_source_index(source_index);
    w.set_channel_stats(sums_.stats(3));
    {
      nb::gil_scoped_release release;
      w.commit();
    }
    writer_.reset();
  }

  void abort() noexcept { writer_.reset(); }

 private:
  static ImageSource source(nb::handle image, std::uint64_t index) {
    if (nb::isinstance<nb::str>(image)) return nb::cast<std::string>(image);
    if (nb::isinstance<nb::bytes>(image)) {
      const nb::bytes bytes = nb::borrow<nb::bytes>(image);
      const auto* data = static_cast<const std::uint8_t*>(bytes.data());
      return std::vector<std::uint8_t>(data, data + bytes.size());
    }
    Image pixels;
    if (nb::try_cast(image, pixels) && (pixels.shape(2) == 1 || pixels.shape(2) == 3)) {
      PixelsCopy copy{std::vector<std::uint8_t>(pixels.data(), pixels.data() + pixels.size()),
                      static_cast<std::uint32_t>(pixels.shape(0)),
                      static_cast<std::uint32_t>(pixels.shape(1)),
                      static_cast<std::uint32_t>(pixels.shape(2))};
      return copy;
    }
    throw UsageError("image " + std::to_string(index) +
                     ": expected a path, encoded bytes or uint8 HWC pixels of 1 or 3 channels");
  }

  formats::ImageResult work(formats::ImageWorker& worker, ImageSource source) const {
    if (auto* path = std::get_if<std::string>(&source)) return worker.to_jpeg(*path, settings_);
    if (auto* bytes = std::get_if<std::vector<std::uint8_t>>(&source)) {
      return worker.to_jpeg(std::move(*bytes), "it", settings_);
    }
    const auto& p = std::get<PixelsCopy>(source);
    return worker.encode(formats::ConstImageView(p.pixels.data(), p.width, p.height, p.channels),
                         settings_);
  }

  [[nodiscard]] formats::JpegDatasetWriter& writer() const {
    if (!writer_) throw UsageError("the pack writer has finished");
    return *writer_;
  }

  std::unique_ptr<formats::JpegDatasetWriter> writer_;
  formats::JpegSettings settings_;
  unsigned threads_;
  oneapi::tbb::enumerable_thread_specific<formats::ImageWorker> workers_;
  formats::ChannelSums sums_;
};

}  // namespace

void bind_pack(nb::module_& m) {
  nb::class_<PackWriter>(m, "PackWriter",
                         "A raw-layout file written chunk by chunk (gpufeed.pack uses it).")
      .def(nb::init<const std::string&, std::uint64_t, std::uint32_t, std::uint32_t, std::uint32_t,
                    std::uint64_t>(),
           nb::arg("path"), nb::arg("samples"), nb::arg("height"), nb::arg("width"),
           nb::arg("channels"), nb::arg("chunk"))
      .def_prop_ro("num_chunks", &PackWriter::num_chunks)
      .def_prop_ro("samples_per_chunk", &PackWriter::samples_per_chunk)
      .def("write_chunk", &PackWriter::write_chunk, nb::arg("index"), nb::arg("pixels"))
      .def("write_labels", &PackWriter::write_labels, nb::arg("labels"))
      .def("write_source_index", &PackWriter::write_source_index, nb::arg("index"))
      .def("commit", &PackWriter::commit)
      .def("abort", &PackWriter::abort);
  nb::class_<JpegPackWriter>(
      m, "JpegPackWriter",
      "A jpeg-layout file written image by image (gpufeed.pack(store=\"jpeg\")).")
      .def(nb::init<const std::string&, int, std::uint32_t, unsigned>(), nb::arg("path"),
           nb::arg("quality") = 0, nb::arg("max_side") = 0, nb::arg("threads") = 0)
      .def("add", &JpegPackWriter::add, nb::arg("images"), nb::arg("labels"), nb::arg("first"))
      .def_prop_ro("samples", &JpegPackWriter::samples)
      .def("commit", &JpegPackWriter::commit, nb::arg("class_names") = std::vector<std::string>{},
           nb::arg("source_index") = std::vector<std::uint64_t>{})
      .def("abort", &JpegPackWriter::abort);
  m.def(
      "shard_samples",
      [](const std::string& path) {
        const nb::gil_scoped_release unlocked;
        const formats::ShardList list = formats::resolve_shards(std::vector<std::string>{path});
        if (formats::probe_layout(path) == formats::FileLayout::jpeg) {
          const formats::JpegShards shards(list);
          return std::pair<std::string, std::uint64_t>("jpeg", shards.num_samples());
        }
        const formats::RawShards shards(list);
        return std::pair<std::string, std::uint64_t>("raw", shards.num_samples());
      },
      nb::arg("path"),
      "(layout, samples) of a schema file, opened and checked by its layout's reader.");
  m.def(
      "remove_stale_temporaries",
      [](const std::string& path) { return storage::remove_stale_temporaries(path).size(); },
      nb::arg("path"),
      "Removes the temporaries (PATH.tmp.PID) that writers killed while writing PATH left; "
      "returns how many.");
  m.def(
      "manifest_text",
      [](const std::string& dir, const std::vector<std::string>& names) {
        const nb::gil_scoped_release unlocked;
        return formats::manifest_text(formats::describe_shards(dir, names));
      },
      nb::arg("dir"), nb::arg("names"),
      "The manifest.json text of the shards `names` under `dir`, in order: each opened and "
      "checked, with its samples, size and where its metadata lies.");
  m.def("keep_pack_plan", &formats::keep_pack_plan, nb::arg("dir"), nb::arg("plan"),
        "Keeps `plan` (JSON text: what decides each shard's samples) as DIR/.pack-plan.json, or "
        "raises UsageError naming what changed when DIR holds another.");
  m.def("stored_order", &formats::stored_order, nb::arg("samples"), nb::arg("seed"),
        "The order writers store samples in: a permutation of range(samples) drawn from seed.");
  m.def(
      "s3_settings",
      [] {
        const storage::S3Settings s = storage::s3_settings();
        nb::dict d;
        d["endpoint"] = s.endpoint;
        d["region"] = s.region;
        d["ca_bundle"] = s.ca_bundle;
        d["credentials"] = s.credentials;
        return d;
      },
      "The S3 settings s3:// reads use now (endpoint, region, CA bundle, where the credentials "
      "come from), from the environment and the AWS files.");
  m.def(
      "upload_file",
      [](const std::string& path, const std::string& url) {
        const nb::gil_scoped_release unlocked;
        storage::upload_file(path, url);
      },
      nb::arg("path"), nb::arg("url"),
      "Uploads a local file to s3://bucket/key (one PUT, or a multipart upload: nothing appears "
      "at the key unless the whole file arrived).");
}

}  // namespace gpufeed::python
