// gpufeed._native.Profile: pipebench's recording and diagnosis around a Python training loop.
#include "profile_binding.hpp"

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "errors.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/recorder.hpp"
#include "native_loader.hpp"
#include "pipebench/diagnosis.hpp"
#include "pipebench/practice_inputs.hpp"
#include "pipebench/practices.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

using tools::pipebench::Diagnosis;
using tools::pipebench::PracticeCheck;
using tools::pipebench::RunFacts;

/// What the loop told the profile, beyond the loader's own facts.
struct LoopFacts {
  std::uint64_t steps = 0;
  std::uint64_t epochs = 0;
  unsigned torch_threads = 0;
  bool deterministic = false;
  std::int32_t rank = -1;  ///< torch.distributed's, when the loop is one rank of a job
  std::int32_t world_size = 0;
};

/// The loader's settings and its counters since `baseline` (when it was first seen).
RunFacts loader_facts(Loader& loader, const std::optional<LoaderStats>& baseline) {
  RunFacts f;
  const LoaderOptions& o = loader.options();
  const LoaderStats now = loader.stats();
  f.stats = baseline ? now.since(*baseline) : now;
  f.workers = loader.workers();
  f.prefetch = now.prefetch;
  f.echo = o.echo;
  f.cuda = o.device != "cpu";
  f.sample = loader.sample_shape();
  f.batch_size = o.batch_size;
  if (loader.jpeg_dataset() == nullptr) {
    f.samples_per_chunk = loader.dataset().samples_per_chunk();
    f.chunks = loader.dataset().num_chunks();
  } else {
    f.samples_per_chunk = 1;
  }
  f.seed = o.seed;
  f.order = to_string(o.order);
  f.cache_bytes = o.cache_bytes;
  f.augment = to_string(o.augment);
  return f;
}

double input_wait_share(const LoaderStats& s) {
  return s.wall_ns > 0
             ? static_cast<double>(s[Stage::wait].busy_ns) / static_cast<double>(s.wall_ns)
             : 0.0;
}

/// One finished profile: the diagnosis, the practice checks, and the facts they came from.
class ProfileReport {
 public:
  ProfileReport(Diagnosis diagnosis, RunFacts facts, bool has_loader)
      : diagnosis_(std::move(diagnosis)), facts_(std::move(facts)), has_loader_(has_loader) {
    practices_ =
        tools::pipebench::check_practices(tools::pipebench::practice_inputs(facts_, diagnosis_));
  }

  [[nodiscard]] std::string summary() const {
    std::string out = tools::pipebench::format_diagnosis(diagnosis_, input_wait_share(facts_.stats),
                                                         keyword_spelling);
    if (!has_loader_)
      out += "note: no gpufeed.Loader ran inside the profile; input stages unknown\n";
    return out + tools::pipebench::format_practices(practices_);
  }

  /// pipebench's --json keys for this loop.
  [[nodiscard]] std::string json() const {
    const LoaderStats& s = facts_.stats;
    const double wall_s = static_cast<double>(s.wall_ns) * 1e-9;
    const double wait = input_wait_share(s);
    nlohmann::json j;
    j["samples_per_s"] = wall_s > 0 ? static_cast<double>(s.samples) / wall_s : 0.0;
    j["device_util"] = nullptr;
    j["idle_by_cause"] = {
        {"input_wait", wait}, {"host_sync", nullptr}, {"launch", nullptr}, {"other", nullptr}};
    const auto bottleneck = s.bottleneck();
    j["bottleneck_stage"] = bottleneck ? nlohmann::json(stage_name(*bottleneck)) : nullptr;
    nlohmann::json stages = nlohmann::json::object();
    for (std::size_t i = 0; i < kStageCount; ++i) {
      const auto stage = static_cast<Stage>(i);
      if (s[stage].items == 0 && s[stage].busy_ns == 0) continue;
      stages[stage_name(stage)] = {
          {"busy_frac", stage == Stage::wait ? wait : s.busy_fraction(stage)},
          {"items", s[stage].items},
          {"busy_ns", s[stage].busy_ns}};
    }
    j["stages"] = stages;
    j["echo"] = {{"fresh_batches", s.fresh_batches},
                 {"echoed_batches", s.echoed_batches},
                 {"reaugmented_batches", s.reaugmented_batches}};
    j["device"] = facts_.cuda ? "cuda" : "cpu";
    j["steps"] = facts_.steps;
    j["epochs"] = facts_.epochs;
    j["wall_s"] = wall_s;
    j["samples"] = s.samples;
    tools::pipebench::add_diagnosis_json(j, diagnosis_, keyword_spelling);
    j["practices"] = tools::pipebench::practices_json(practices_);
    return j.dump(2) + "\n";
  }

  void write_trace(const std::string& path) const {
    tools::pipebench::write_trace(path, diagnosis_);
  }
  void write_report(const std::string& path) const {
    tools::pipebench::write_report(path, diagnosis_, keyword_spelling);
  }

 private:
  Diagnosis diagnosis_;
  RunFacts facts_;
  bool has_loader_;
  std::vector<PracticeCheck> practices_;
};

/// Recording around the loop; steps and syncs are marked from Python.
class NativeProfile {
 public:
  explicit NativeProfile(bool cuda)
      : recording_(std::make_unique<tools::pipebench::Recording>(true, cuda)) {}

  void record(profiler::NameId name, std::int64_t begin_ns, std::int64_t end_ns,
              std::int64_t index) const {
    profiler::record_range(name, begin_ns, end_ns, index);
  }

  ProfileReport finish(NativeLoader* loader, const std::optional<LoaderStats>& baseline,
                       const LoopFacts& loop) {
    if (!recording_) throw std::runtime_error("the profile has already finished");
    RunFacts facts;
    if (loader != nullptr) facts = loader_facts(loader->get(), baseline);
    facts.steps = loop.steps;
    facts.epochs = loop.epochs;
    facts.training = loop.steps > 0;
    facts.torch_threads = loop.torch_threads;
    facts.deterministic = loop.deterministic;
    facts.rank = loop.rank;
    facts.world_size = loop.world_size;
    Diagnosis d;
    {
      nb::gil_scoped_release release;
      d = recording_->finish(facts);
      recording_.reset();
    }
    return ProfileReport(std::move(d), std::move(facts), loader != nullptr);
  }

 private:
  std::unique_ptr<tools::pipebench::Recording> recording_;
};

}  // namespace

void bind_profile(nb::module_& m) {
  nb::class_<LoaderStats>(m, "LoaderStats", "A snapshot of a loader's counters.");
  m.def(
      "stats_snapshot", [](NativeLoader& l) { return l.get().stats(); }, nb::arg("loader"));
  m.def("now_ns", &profiler::now_ns, "The recorder's clock (monotonic, ns).");
  m.def(
      "range_name",
      [](const std::string& name) { return profiler::Recorder::global().register_name(name); },
      nb::arg("name"), "The recorder's id of a range name (\"step\", \"sync\", ...).");
  m.def("cuda_device_count", &cuda_device_count);
  m.def("check_writable", &tools::pipebench::check_writable, nb::arg("what"), nb::arg("path"),
        "Raises when `path` cannot be written (a directory, or in one that is missing).");

  nb::class_<LoopFacts>(m, "LoopFacts")
      .def(nb::init<>())
      .def_rw("steps", &LoopFacts::steps)
      .def_rw("epochs", &LoopFacts::epochs)
      .def_rw("torch_threads", &LoopFacts::torch_threads)
      .def_rw("deterministic", &LoopFacts::deterministic)
      .def_rw("rank", &LoopFacts::rank)
      .def_rw("world_size", &LoopFacts::world_size);
  m.def("per_rank_path", &tools::pipebench::per_rank_path, nb::arg("path"), nb::arg("rank"),
        nb::arg("world_size"));

  nb::class_<ProfileReport>(m, "ProfileReport")
      .def("summary", &ProfileReport::summary)
      .def("json", &ProfileReport::json)
      .def("write_trace", &ProfileReport::write_trace, nb::arg("path"))
      .def("write_report", &ProfileReport::write_report, nb::arg("path"));

  nb::class_<NativeProfile>(m, "Profile")
      .def(nb::init<bool>(), nb::arg("cuda"))
      .def("record", &NativeProfile::record, nb::arg("name"), nb::arg("begin_ns"),
           nb::arg("end_ns"), nb::arg("index"))
      .def("finish", &NativeProfile::finish, nb::arg("loader").none(), nb::arg("baseline").none(),
           nb::arg("loop"));
}

}  // namespace gpufeed::python
