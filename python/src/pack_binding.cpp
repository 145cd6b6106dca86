// gpufeed._native.PackWriter: a schema v1 raw-layout file written chunk by chunk from Python
// (gpufeed.pack), atomically: nothing is at the destination until commit().
#include "pack_binding.hpp"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/dataset_writer.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

using Pixels = nb::ndarray<const std::uint8_t, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
using Labels = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

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
      .def("commit", &PackWriter::commit)
      .def("abort", &PackWriter::abort);
}

}  // namespace gpufeed::python
