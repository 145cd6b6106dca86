#include "loader_binding.hpp"

#include <chrono>
#include <memory>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include "batch_arrays.hpp"
#include "errors.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/diagnosis/diagnosis.hpp"
#include "gpufeed/formats/pack_file.hpp"
#include "gpufeed/formats/synthetic.hpp"
#include "gpufeed/pipeline/decode.hpp"
#include "native_loader.hpp"
#include "options.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

/// How long a wait for a batch runs without the GIL before Python's signal handlers get a
/// chance (Ctrl-C raises KeyboardInterrupt within this time).
constexpr auto kSignalPoll = std::chrono::milliseconds(50);

/// One delivered batch: its arrays and where it came from. Holding it holds the batch.
struct Delivery {
  std::shared_ptr<HeldBatch> held;
  bool has_labels = true;

  [[nodiscard]] const Batch& batch() const { return held->batch(); }
};

}  // namespace

NativeLoader::NativeLoader(const std::string& path, const nb::dict& keywords) {
  LoaderOptions options = options_from_keywords(path, keywords);
  nb::gil_scoped_release release;  // opening the file and allocating slots can take a while
  loader_ = std::make_unique<Loader>(std::move(options));
}

NativeLoader::~NativeLoader() {
  if (!nb::is_alive()) return;  // interpreter shutdown: the process is going away
  nb::gil_scoped_release release;
  loader_.reset();
}

Loader& NativeLoader::get() {
  if (!loader_) throw_usage("the loader was closed; create a new gpufeed.Loader");
  return *loader_;
}

void NativeLoader::start_epoch(std::uint64_t epoch) {
  Loader& loader = get();
  nb::gil_scoped_release release;
  loader.start_epoch(epoch);
}

nb::object NativeLoader::next() {
  Loader& loader = get();
  for (;;) {
    std::optional<Batch> batch;
    {
      nb::gil_scoped_release release;
      batch = loader.try_next(kSignalPoll);
    }
    if (batch) {
      if (!*batch) return nb::none();
      return nb::cast(Delivery{std::make_shared<HeldBatch>(std::move(*batch)),
                               !loader.options().source.labels.empty()});
    }
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  }
}

void NativeLoader::close() {
  nb::gil_scoped_release release;
  loader_.reset();
}

void bind_loader(nb::module_& m) {
  m.def("add_nvjpeg_library", &add_nvjpeg_library, nb::arg("file_or_directory"),
        "Where to look for libnvjpeg before the library search path (decode='gpu'/'auto').");
  m.def(
      "nvjpeg_library",
      [] {
        const NvjpegLibrary l = nvjpeg_library();
        nb::dict d;
        d["loaded"] = l.loaded;
        d["path"] = l.path;
        d["version"] = l.version;
        d["why"] = l.why;
        return d;
      },
      "Loads libnvjpeg if no loader has yet; what was found, or why none could be used.");
  nb::class_<Delivery>(m, "Delivery", "One batch as the loader delivered it.")
      .def_prop_ro("images",
                   [](const Delivery& d) { return BatchArray(d.held, BatchArray::Part::images); })
      .def_prop_ro("labels",
                   [](const Delivery& d) {
                     return d.has_labels ? std::optional<BatchArray>(
                                               BatchArray(d.held, BatchArray::Part::labels))
                                         : std::nullopt;
                   })
      .def_prop_ro("indices",
                   [](const Delivery& d) {
                     nb::list out;
                     for (const std::uint64_t i : d.batch().sample_indices()) out.append(i);
                     return out;
                   })
      .def_prop_ro("echoed", [](const Delivery& d) { return d.batch().echoed(); })
      .def_prop_ro("epoch", [](const Delivery& d) { return d.batch().epoch(); })
      .def_prop_ro("index", [](const Delivery& d) { return d.batch().index(); })
      .def_prop_ro("size", [](const Delivery& d) { return d.batch().size(); });

  nb::class_<NativeLoader>(m, "Loader")
      .def(nb::init<const std::string&, const nb::dict&>(), nb::arg("path"), nb::arg("keywords"))
      .def("start_epoch", &NativeLoader::start_epoch, nb::arg("epoch"))
      .def("next", &NativeLoader::next)
      .def("close", &NativeLoader::close)
      .def_prop_ro("closed", [](const NativeLoader& l) { return !l.open(); })
      .def("stats_json",
           [](NativeLoader& l) { return diagnosis::stats_json(l.get().stats()).dump(); })
      .def("reset_stats", [](NativeLoader& l) { l.get().reset_stats(); })
      .def(
          "add_transform_work",
          [](NativeLoader& l, std::int64_t busy_ns, std::uint64_t items) {
            l.get().add_stage_work(Stage::transform, busy_ns, items);
          },
          nb::arg("busy_ns"), nb::arg("items"),
          "Counts a transform's ops on a delivered batch as the loader's `transform` stage.")
      .def_prop_ro("batches_per_epoch", [](NativeLoader& l) { return l.get().batches_per_epoch(); })
      .def_prop_ro("samples_per_epoch", [](NativeLoader& l) { return l.get().samples_per_epoch(); })
      .def_prop_ro("batches_in_epoch", [](NativeLoader& l) { return l.get().batches_in_epoch(); })
      .def("state_json", [](NativeLoader& l) { return l.get().state().to_json(); })
      .def(
          "restore_json",
          [](NativeLoader& l, const std::string& text) {
            l.get().restore(LoaderState::from_json(text));
          },
          nb::arg("text"))
      .def_prop_ro("workers", [](NativeLoader& l) { return l.get().workers(); })
      .def_prop_ro("notices",
                   [](NativeLoader& l) {
                     std::vector<std::string> out;
                     for (const std::string& n : l.get().notices()) {
                       out.push_back(render_option_names(n, field_keyword));
                     }
                     return out;
                   })
      .def_prop_ro("encoded", [](NativeLoader& l) { return l.get().jpeg_dataset() != nullptr; })
      .def_prop_ro("device", [](NativeLoader& l) { return l.get().options().output.device.str(); })
      .def_prop_ro("sample_shape", [](NativeLoader& l) {
        const formats::SampleShape s = l.get().sample_shape();
        return std::make_tuple(s.height, s.width, s.channels);
      });

  m.def(
      "loader_fields",
      [] {
        nb::list out;
        for (const FieldName& f : kLoaderFields) {
          out.append(nb::make_tuple(std::string(f.field), field_keyword(f.field)));
        }
        return out;
      },
      "The table of LoaderOptions fields: (field, Python keyword).");
  m.def(
      "geometry_draws",
      [](const nb::dict& keywords, std::uint32_t width, std::uint32_t height, std::uint64_t seed,
         std::uint64_t epoch, std::uint64_t samples) {
        const LoaderOptions o = options_from_keywords("", keywords);
        check_options(o);
        const Geometry g = loader_geometry(o, false);
        const formats::SampleShape out = g.output({height, width, 3, formats::Layout::nhwc});
        nb::list draws;
        for (std::uint64_t s = 0; s < samples; ++s) {
          const pipeline::Placement p =
              pipeline::place(g, width, height, out.width, out.height, seed, epoch, s);
          draws.append(nb::make_tuple(p.box.left, p.box.top, p.box.width(), p.box.height(),
                                      p.inner_x, p.inner_y, p.hflip, p.vflip));
        }
        return draws;
      },
      nb::arg("keywords"), nb::arg("width"), nb::arg("height"), nb::arg("seed"), nb::arg("epoch"),
      nb::arg("samples"),
      "The fused geometry's placements of samples 0..samples-1 of a width x height image: "
      "(left, top, width, height) of the box in stored pixels, the inner offset (x, y) and the "
      "flips. For tests against torchvision's own draws.");
  m.def("default_keywords", &default_keywords,
        "The keywords of gpufeed.Loader with LoaderOptions' defaults.");

  m.def(
      "write_synthetic",
      [](const std::string& path, std::uint64_t samples, std::uint32_t height, std::uint32_t width,
         std::uint32_t channels, std::uint64_t chunk, std::uint64_t seed, std::uint32_t classes) {
        formats::SyntheticSpec spec;
        spec.samples = samples;
        spec.shape = {height, width, channels, formats::Layout::nhwc};
        const formats::PackInput input = formats::synthetic_input(spec, seed, classes);
        formats::PackSettings settings;
        settings.writer.samples_per_chunk = chunk;
        nb::gil_scoped_release release;
        formats::pack_file(path, input, settings);
      },
      nb::arg("path"), nb::arg("samples"), nb::arg("height"), nb::arg("width"), nb::arg("channels"),
      nb::arg("chunk"), nb::arg("seed"), nb::arg("classes"));
}

}  // namespace gpufeed::python
