// gpufeed._native.Profile: the recording and diagnosis of a run around a Python training loop.
#include "profile_binding.hpp"

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "errors.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/diagnosis/diagnosis.hpp"
#include "gpufeed/diagnosis/input_pool.hpp"
#include "gpufeed/diagnosis/practice_inputs.hpp"
#include "gpufeed/diagnosis/practices.hpp"
#include "gpufeed/pipeline/device.hpp"
#include "gpufeed/pipeline/in_flight.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/cupti_collector.hpp"
#include "gpufeed/profiler/recorder.hpp"
#include "gpufeed/storage/requests_in_flight.hpp"
#include "native_loader.hpp"
#include "options.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

/// What the loop told the profile, beyond the loader's own facts.
struct LoopFacts {
  std::uint64_t steps = 0;
  std::uint64_t epochs = 0;
  unsigned torch_threads = 0;
  bool deterministic = false;
  std::int32_t rank = -1;  ///< torch.distributed's, when the loop is one rank of a job
  std::int32_t world_size = 0;
  /// The DataLoader worker pool that fed the loop, when no gpufeed.Loader did.
  std::optional<diagnosis::InputPoolFacts> input_pool;
  diagnosis::LoopHabits habits;  ///< what the loop did inside its steps
};

/// The diagnosis in a Python user's words: Loader keywords (workers=8) and torch's calls.
const diagnosis::Language& keyword_language() {
  static const diagnosis::Language language{
      keyword_spelling,
      field_keyword,
      "=",
      {"`with prof.step():` around each training step", "", "",
       "torch.use_deterministic_algorithms(True)", "torch.backends.cudnn.benchmark = True"}};
  return language;
}

/// One finished profile: the diagnosis, the practice checks, and the facts they came from.
class ProfileReport {
 public:
  ProfileReport(diagnosis::Diagnosis diagnosis, diagnosis::RunFacts facts, bool has_loader)
      : diagnosis_(std::move(diagnosis)), facts_(std::move(facts)), has_loader_(has_loader) {
    practices_ = diagnosis::check_practices(diagnosis::practice_inputs(facts_, diagnosis_),
                                            keyword_language());
  }

  [[nodiscard]] std::string summary() const {
    std::string out = diagnosis::format_diagnosis(
        diagnosis_, diagnosis::input_wait_share(facts_.stats), keyword_language());
    if (!has_loader_)
      out += "note: no gpufeed.Loader ran inside the profile; input stages unknown\n";
    return out + diagnosis::format_practices(practices_);
  }

  /// pipebench's --json keys for this loop.
  [[nodiscard]] std::string json() const {
    nlohmann::json j = diagnosis::run_json(facts_);
    j["device"] = facts_.cuda ? "cuda" : "cpu";
    diagnosis::add_diagnosis_json(j, diagnosis_, keyword_language());
    j["practices"] = diagnosis::practices_json(practices_);
    return j.dump(2) + "\n";
  }

  void write_trace(const std::string& path) const { diagnosis::write_trace(path, diagnosis_); }
  void write_report(const std::string& path) const {
    diagnosis::write_report(path, diagnosis_, keyword_language());
  }

 private:
  diagnosis::Diagnosis diagnosis_;
  diagnosis::RunFacts facts_;
  bool has_loader_;
  std::vector<diagnosis::PracticeCheck> practices_;
};

/// Recording around the loop; steps and syncs are marked from Python.
class NativeProfile {
 public:
  explicit NativeProfile(bool cuda)
      : recording_(std::make_unique<diagnosis::Recording>(true, cuda)) {}

  void record(profiler::NameId name, std::int64_t begin_ns, std::int64_t end_ns,
              std::int64_t index) const {
    profiler::record_range(name, begin_ns, end_ns, index);
  }

  /// Ranges `name` another process recorded (`begins`, `ends` on the same monotonic clock),
  /// shown as thread `thread` of the run: a DataLoader worker's fetches.
  void add_ranges(const std::string& name, std::uint64_t thread,
                  const std::vector<std::int64_t>& begins, const std::vector<std::int64_t>& ends) {
    if (begins.size() != ends.size()) {
      throw UsageError("add_ranges: " + std::to_string(begins.size()) + " begins and " +
                       std::to_string(ends.size()) + " ends");
    }
    for (std::size_t i = 0; i < begins.size(); ++i) {
      process_ranges_.push_back({name, begins[i], ends[i], thread, profiler::kNoArg, 0, {}});
    }
  }

  /// Ends the recording: what follows (gpufeed measuring a remedy) is not part of the run.
  void stop() {
    if (!recording_) throw UsageError("the profile has already finished");
    nb::gil_scoped_release release;
    recording_->stop();
  }

  /// `input`: the facts of the loader that fed the loop (Loader.profile_facts), if any.
  ProfileReport finish(const std::optional<diagnosis::RunFacts>& input, const LoopFacts& loop) {
    if (!recording_) throw UsageError("the profile has already finished");
    diagnosis::RunFacts facts = input.value_or(diagnosis::RunFacts{});
    facts.gpufeed_input = input.has_value();
    if (!facts.gpufeed_input) facts.input_pool = loop.input_pool;
    facts.habits = loop.habits;
    facts.steps = loop.steps;
    facts.epochs = loop.epochs;
    facts.training = loop.steps > 0;
    facts.torch_threads = loop.torch_threads;
    facts.deterministic = loop.deterministic;
    facts.rank = loop.rank;  // torch.distributed's view of the job
    facts.world_size = loop.world_size;
    facts.process_ranges = std::move(process_ranges_);
    diagnosis::Diagnosis d;
    {
      nb::gil_scoped_release release;
      d = recording_->finish(facts, keyword_language());
      recording_.reset();
    }
    return ProfileReport(std::move(d), std::move(facts), input.has_value());
  }

 private:
  std::unique_ptr<diagnosis::Recording> recording_;
  std::vector<profiler::HostRange> process_ranges_;
};

}  // namespace

void bind_profile(nb::module_& m) {
  nb::class_<LoaderStats>(m, "LoaderStats", "A snapshot of a loader's counters.");
  nb::class_<diagnosis::RunFacts>(m, "RunFacts",
                                  "What a loader's run tells the diagnosis: its settings and "
                                  "its counters over the run.");
  m.def(
      "stats_snapshot", [](NativeLoader& l) { return l.get().stats(); }, nb::arg("loader"));
  m.def(
      "run_facts",
      [](NativeLoader& l, const std::optional<LoaderStats>& since) {
        const LoaderStats now = l.get().stats();
        return diagnosis::run_facts(l.get(), since ? now.since(*since) : now);
      },
      nb::arg("loader"), nb::arg("since").none());
  m.def("now_ns", &profiler::now_ns, "The recorder's clock (monotonic, ns).");
  m.def(
      "work_in_flight",
      [] {
        nb::list out;
        for (const pipeline::WorkInFlight& w : pipeline::work_in_flight()) {
          nb::dict d;
          d["path"] = w.path;
          d["stage"] = w.stage;
          d["epoch"] = w.epoch;
          d["batch"] = w.batch;
          d["sample"] = w.sample;
          d["since_ns"] = w.since_ns;
          out.append(d);
        }
        return out;
      },
      "Each loader worker thread's work now: path, stage, epoch, batch, sample (-1: the "
      "batch), since_ns; the oldest first.");
  m.def(
      "requests_in_flight",
      [] {
        nb::list out;
        for (const storage::RequestInFlight& r : storage::requests_in_flight()) {
          nb::dict d;
          d["what"] = r.what;
          d["sent_ns"] = r.sent_ns;
          d["attempt"] = r.attempt;
          out.append(d);
        }
        return out;
      },
      "The object-store requests on the wire now: what, sent_ns, attempt; the oldest first.");
  m.def(
      "range_name",
      [](const std::string& name) { return profiler::Recorder::global().register_name(name); },
      nb::arg("name"), "The recorder's id of a range name (\"step\", \"sync\", ...).");
  m.def("cuda_device_count", &pipeline::cuda_device_count);
  m.def(
      "add_cupti_directory",
      [](const std::string& directory) {
        profiler::CuptiCollector::add_library_directory(directory);
      },
      nb::arg("directory"), "A directory to look for CUPTI in (loaded when a profile starts).");
  m.def(
      "cupti_library", [] { return profiler::CuptiCollector::instance().library_path(); },
      "Where CUPTI was loaded from; empty before a CUDA profile loaded it.");
  m.def("check_writable", &diagnosis::check_writable, nb::arg("what"), nb::arg("path"),
        "Raises when `path` cannot be written (a directory, or in one that is missing).");

  nb::class_<LoopFacts>(m, "LoopFacts")
      .def(nb::init<>())
      .def_rw("steps", &LoopFacts::steps)
      .def_rw("epochs", &LoopFacts::epochs)
      .def_rw("torch_threads", &LoopFacts::torch_threads)
      .def_rw("deterministic", &LoopFacts::deterministic)
      .def_rw("rank", &LoopFacts::rank)
      .def_rw("world_size", &LoopFacts::world_size)
      .def_rw("input_pool", &LoopFacts::input_pool)
      .def_rw("habits", &LoopFacts::habits);
  nb::class_<diagnosis::LoopHabits>(m, "LoopHabits",
                                    "What the loop did inside its steps (gpufeed.profile fills "
                                    "it).")
      .def(nb::init<>())
      .def_rw("host_reads", &diagnosis::LoopHabits::host_reads)
      .def_rw("host_read_site", &diagnosis::LoopHabits::host_read_site)
      .def_rw("data_parallel", &diagnosis::LoopHabits::data_parallel)
      .def_rw("empty_cache_calls", &diagnosis::LoopHabits::empty_cache_calls)
      .def_rw("host_tensor_moves", &diagnosis::LoopHabits::host_tensor_moves)
      .def_rw("host_tensor_site", &diagnosis::LoopHabits::host_tensor_site)
      .def_rw("eval_grad_forwards", &diagnosis::LoopHabits::eval_grad_forwards)
      .def_rw("eval_grad_site", &diagnosis::LoopHabits::eval_grad_site)
      .def_rw("forwards", &diagnosis::LoopHabits::forwards)
      .def_rw("training_forwards", &diagnosis::LoopHabits::training_forwards)
      .def_rw("cuda_forwards", &diagnosis::LoopHabits::cuda_forwards)
      .def_rw("autocast_dtype", &diagnosis::LoopHabits::autocast_dtype)
      .def_rw("bf16_supported", &diagnosis::LoopHabits::bf16_supported)
      .def_rw("convolutions", &diagnosis::LoopHabits::convolutions)
      .def_rw("cudnn_benchmark", &diagnosis::LoopHabits::cudnn_benchmark);
  nb::class_<diagnosis::InputPoolFacts>(m, "InputPoolFacts",
                                        "A DataLoader's worker pool as the loop's process measured "
                                        "it (gpufeed.profile fills it).")
      .def(nb::init<>())
      .def_rw("workers", &diagnosis::InputPoolFacts::workers)
      .def_rw("batches", &diagnosis::InputPoolFacts::batches)
      .def_rw("samples", &diagnosis::InputPoolFacts::samples)
      .def_rw("fetch_ns", &diagnosis::InputPoolFacts::fetch_ns)
      .def_rw("collate_ns", &diagnosis::InputPoolFacts::collate_ns)
      .def_rw("startup_ns", &diagnosis::InputPoolFacts::startup_ns)
      .def_rw("starts", &diagnosis::InputPoolFacts::starts)
      .def_rw("persistent_workers", &diagnosis::InputPoolFacts::persistent_workers)
      .def_rw("pin_memory", &diagnosis::InputPoolFacts::pin_memory)
      .def_rw("prefetch_factor", &diagnosis::InputPoolFacts::prefetch_factor)
      .def_rw("cuda", &diagnosis::InputPoolFacts::cuda)
      .def_rw("cores", &diagnosis::InputPoolFacts::cores)
      .def_rw("packed_samples_per_s", &diagnosis::InputPoolFacts::packed_samples_per_s)
      .def_rw("packed_core_ns_per_sample", &diagnosis::InputPoolFacts::packed_core_ns_per_sample)
      .def_rw("packed_consumer_ns_per_sample",
              &diagnosis::InputPoolFacts::packed_consumer_ns_per_sample)
      .def_rw("packed_items", &diagnosis::InputPoolFacts::packed_items)
      .def_rw("packed_store", &diagnosis::InputPoolFacts::packed_store)
      .def_rw("pack_note", &diagnosis::InputPoolFacts::pack_note)
      .def_rw("pack_loader_keywords", &diagnosis::InputPoolFacts::pack_loader_keywords)
      .def_rw("pack_transform_note", &diagnosis::InputPoolFacts::pack_transform_note)
      .def_rw("step_cores", &diagnosis::InputPoolFacts::step_cores)
      .def_rw("warm_step_ns", &diagnosis::InputPoolFacts::warm_step_ns)
      .def_rw("run_wall_ns", &diagnosis::InputPoolFacts::run_wall_ns)
      .def_rw("run_samples", &diagnosis::InputPoolFacts::run_samples)
      .def_rw("other_cores", &diagnosis::InputPoolFacts::other_cores);
  m.def("per_rank_path", &diagnosis::per_rank_path, nb::arg("path"), nb::arg("rank"),
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
      .def("add_ranges", &NativeProfile::add_ranges, nb::arg("name"), nb::arg("thread"),
           nb::arg("begins"), nb::arg("ends"))
      .def("stop", &NativeProfile::stop)
      .def("finish", &NativeProfile::finish, nb::arg("input").none(), nb::arg("loop"));
}

}  // namespace gpufeed::python
