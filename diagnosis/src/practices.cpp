#include "gpufeed/diagnosis/practices.hpp"
#include "gpufeed/base/text.hpp"

#include <cstdio>
#include <string>
#include <vector>

namespace gpufeed::diagnosis {

namespace {

/// A copy is "not a batch" beyond the loader's two per fresh batch (images and labels).
constexpr std::uint64_t kLoaderCopiesPerBatch = 2;
/// A host-sync idle share above this is worth a warning.
constexpr double kSyncShareWarn = 0.01;
/// A stage this busy per worker is saturated.
constexpr double kSaturated = 0.85;

double per(double x, std::uint64_t n) {
  return n == 0 ? 0.0 : x / static_cast<double>(n);
}

/// " (how)" when the front end has a way to do `term`, else nothing.
std::string aside(const Language& lang, Term term) {
  const std::string how = lang.term(term);
  return how.empty() ? std::string() : " (" + how + ")";
}

PracticeCheck pinned_memory(const PracticeInputs& in, const Language& /*language*/) {
  PracticeCheck c{"pinned_memory", "n/a", "", ""};
  if (!in.cuda) {
    c.finding = "cpu device: batches stay in host memory, nothing is copied to a device";
    return c;
  }
  const double pinned = in.pinned_h2d_bytes_per_s * 1e-9;
  const double pageable = in.pageable_h2d_bytes_per_s * 1e-9;
  if (!in.pinned) {
    c.status = "warn";
    c.finding = format(
        "batch slots are pageable (pinning failed): host-to-device %.1f GB/s instead of %.1f "
        "GB/s pinned",
        pageable, pinned);
    c.advice =
        "free host memory or raise the locked-memory limit (ulimit -l) so cudaHostAlloc succeeds";
    return c;
  }
  c.status = "ok";
  c.finding = format("batch slots pinned (%.1f MB): host-to-device %.1f GB/s vs %.1f GB/s pageable",
                     static_cast<double>(in.pinned_bytes) * 1e-6, pinned, pageable);
  if (pageable > 0) c.finding += format(" (pinned/pageable %.2fx)", pinned / pageable);
  if (in.device_records && in.pageable_h2d_copies > 0) {
    c.status = "warn";
    c.finding += format("; %llu other copies (%.1f MB) came from pageable memory",
                        static_cast<unsigned long long>(in.pageable_h2d_copies),
                        static_cast<double>(in.pageable_h2d_bytes) * 1e-6);
    c.advice =
        "pin the host tensors the step copies (pin_memory(), cudaHostAlloc) or create "
        "them on the device";
  }
  return c;
}

PracticeCheck host_sync(const PracticeInputs& in, const Language& lang) {
  PracticeCheck c{"host_sync", "n/a", "", ""};
  if (!in.profiled) {
    c.finding = "not measured" + aside(lang, Term::profiling_off);
    return c;
  }
  if (!in.training) {
    c.finding = "no training stage: no steps to look for syncs in";
    return c;
  }
  // Reads of tensors on the host, counted where they are written (a GPU would sync on each).
  const std::string reads =
      in.habits.host_reads == 0
          ? std::string()
          : format("%llu host reads of tensors inside the steps (%.2f per step; most at %s)",
                   static_cast<unsigned long long>(in.habits.host_reads),
                   per(static_cast<double>(in.habits.host_reads), in.steps),
                   in.habits.host_read_site.c_str());
  if (in.step_syncs == 0 && in.habits.host_reads == 0) {
    c.status = "ok";
    c.finding = "no host syncs inside the steps (no .item(), .cpu() or synchronize)";
    return c;
  }
  if (in.step_syncs == 0) {
    c.status = in.cuda ? "warn" : "info";
    c.finding = reads;
    c.advice = in.cuda ? "each one waits for the device; keep the value on the device "
                         "(.detach()) and read it every few hundred steps" +
                             aside(lang, Term::read_less_often)
                       : "on the CPU they cost little; on a GPU each one would wait for the "
                         "device: read values every few hundred steps";
    return c;
  }
  c.finding = format(
      "%llu host syncs inside the steps (%.2f per step, %.1f ms in all); host_sync "
      "idle %.1f%% of the window",
      static_cast<unsigned long long>(in.step_syncs),
      per(static_cast<double>(in.step_syncs), in.steps),
      static_cast<double>(in.step_sync_ns) * 1e-6, 100.0 * in.host_sync_idle_share);
  if (!reads.empty()) c.finding += "; " + reads;
  c.status = in.cuda && in.host_sync_idle_share >= kSyncShareWarn ? "warn" : "info";
  c.advice = in.cuda ? "keep the loss on the device (.detach()) and read it every few hundred "
                       "steps instead of every step" +
                           aside(lang, Term::read_less_often)
                     : "on the CPU a sync costs little; on a GPU each one drains the queue";
  return c;
}

PracticeCheck device_tensors(const PracticeInputs& in, const Language& /*language*/) {
  PracticeCheck c{"device_tensors", "n/a", "", ""};
  if (in.habits.host_tensor_moves > 0) {
    // Seen where the loop moves them (any device, CUPTI or not).
    c.status = "warn";
    c.finding = format(
        "%llu tensors made on the host were moved to the device inside the steps (%.2f per "
        "step; most at %s)",
        static_cast<unsigned long long>(in.habits.host_tensor_moves),
        per(static_cast<double>(in.habits.host_tensor_moves), in.steps),
        in.habits.host_tensor_site.c_str());
    c.advice =
        "make them on the device (torch.zeros(..., device=device), torch.arange(..., "
        "device=device)) or once before the loop: each move is a copy the step waits for";
    return c;
  }
  if (!in.cuda) {
    c.finding = "cpu device: no host-to-device copies to look for";
    return c;
  }
  if (!in.device_records) {
    c.finding = "no CUPTI copy records: copies per step not measured";
    return c;
  }
  const std::uint64_t loader = kLoaderCopiesPerBatch * in.fresh_batches;
  const std::uint64_t extra = in.h2d_copies > loader ? in.h2d_copies - loader : 0;
  if (extra == 0) {
    c.status = "ok";
    c.finding = format("host-to-device copies are the loader's batches only (%llu copies)",
                       static_cast<unsigned long long>(in.h2d_copies));
    return c;
  }
  c.status = "warn";
  c.finding =
      format("%llu host-to-device copies that are not batches (%.2f per step)",
             static_cast<unsigned long long>(extra), per(static_cast<double>(extra), in.steps));
  c.advice = "create tensors on the device instead of on the CPU and copying them each step";
  return c;
}

PracticeCheck transfer_dtype(const PracticeInputs& in, const Language& /*language*/) {
  PracticeCheck c{"transfer_dtype", "n/a", "", ""};
  const double uint8 = static_cast<double>(in.uint8_bytes_per_sample);
  if (!in.cuda) {
    c.finding = "cpu device: samples are normalized to float on the host; nothing crosses a bus";
    return c;
  }
  c.status = "ok";
  c.finding = format("batches cross the bus as uint8: %.0f B per sample (float32 would be %.0f B)",
                     uint8, 4 * uint8);
  if (in.device_records && in.fresh_samples > 0) {
    const double moved = per(static_cast<double>(in.h2d_bytes), in.fresh_samples);
    c.finding = format("host-to-device %.0f B per sample, %.2fx the uint8 sample (%.0f B)", moved,
                       uint8 > 0 ? moved / uint8 : 0.0, uint8);
    if (moved > 1.5 * uint8) {
      c.status = "warn";
      c.advice = "copy uint8 and convert on the device; float32 copies move 4x the bytes";
    }
  }
  return c;
}

PracticeCheck workers(const PracticeInputs& in, const Language& lang) {
  PracticeCheck c{"workers", "ok", "", ""};
  if (!in.gpufeed_input) {
    c.status = "n/a";
    c.finding = "the input is not a gpufeed Loader: its workers are not seen";
    return c;
  }
  const double compute = in.training_on_cpu ? static_cast<double>(in.torch_threads) : 0.0;
  const double demand = in.loader_busy_threads + compute;
  c.finding = format("%u loader workers, %.2f busy on average", in.workers, in.loader_busy_threads);
  if (in.training_on_cpu) {
    c.finding +=
        format(", plus %u LibTorch thread%s", in.torch_threads, in.torch_threads == 1 ? "" : "s");
  }
  c.finding += format(", on %u cores", in.cores);
  if (in.cores == 0) {
    c.status = "n/a";
    return c;
  }
  if (in.workers > in.cores) {
    c.status = "warn";
    c.advice = "more workers than cores steal time from each other; use " +
               lang.setting(Setting::of(Knob::workers, in.cores));
  } else if (demand > static_cast<double>(in.cores) + 0.25) {
    c.status = "warn";
    c.advice = format(
                   "oversubscribed: %.2f busy threads on %u cores; the loader and the training "
                   "stage take turns; fewer ",
                   demand, in.cores) +
               lang.field("workers") + " or fewer LibTorch threads";
  } else if (in.input_bound && !in.bottleneck_stage.empty() && in.bottleneck_busy >= kSaturated) {
    c.status = "warn";
    if (in.workers < in.cores) {
      c.advice = format("input-bound with %s saturated at %u worker%s: use ",
                        in.bottleneck_stage.c_str(), in.workers, in.workers == 1 ? "" : "s") +
                 lang.setting(Setting::of(Knob::workers, in.cores));
    } else {
      c.advice = format(
                     "input-bound with %s saturated on every core: more workers will not help; "
                     "use ",
                     in.bottleneck_stage.c_str()) +
                 lang.field("echo") + ", smaller or uncompressed samples, or more cores";
    }
  }
  return c;
}

PracticeCheck determinism(const PracticeInputs& in, const Language& lang) {
  PracticeCheck c{"determinism", "ok", "", ""};
  if (in.gpufeed_input) {
    c.finding = format("sample order (%s) is a function of ", order_name(in.order)) +
                lang.with_value("seed", std::to_string(in.seed)) + ", the epoch and the rank";
    if (in.augment != Augment::none) c.finding += "; augmentation is seeded per sample";
  } else {
    c.finding = "the input is not a gpufeed Loader: its sample order is its own";
  }
  if (!in.training) return c;
  if (in.deterministic) {
    c.finding += "; the training stage uses deterministic algorithms only";
  } else {
    c.status = "info";
    c.finding += "; the training stage may use non-deterministic algorithms";
    const std::string autotuner = lang.term(Term::autotuner);
    c.advice = lang.term(Term::deterministic) + " for repeatable training (may be slower" +
               (autotuner.empty() ? ")" : "; not with " + autotuner + ")");
  }
  return c;
}

/// Batches as mixed in their labels as a random order's: a class-sorted file read in chunk (or
/// sequential) order trains on batches of few classes.
PracticeCheck shuffle(const PracticeInputs& in, const Language& lang) {
  PracticeCheck c{"shuffle", "ok", "", ""};
  if (!in.gpufeed_input) {
    c.status = "n/a";
    c.finding = "the input is not a gpufeed Loader: its batches' labels are not counted";
    return c;
  }
  const LabelMix& m = in.label_mix;
  if (m.batches == 0) {
    c.status = "n/a";
    c.finding = "no labels to count (the file has none, or fewer samples than a batch)";
    return c;
  }
  c.finding = format(
      "batches in %s order hold %.0f distinct labels (median) against %.0f in a "
      "random order (%.2fx)",
      order_name(in.order), m.median_distinct, m.random_distinct, m.ratio());
  if (m.poor()) {
    c.status = "warn";
    c.finding += ": the file's labels run in sorted stretches";
    c.advice =
        "repack it shuffled (h5pack convert and gpufeed.pack shuffle unless told to keep "
        "the order), or " +
        lang.with_value("order", "random");
  }
  return c;
}

PracticeCheck training_loop(const PracticeInputs& in, const Language& /*language*/) {
  PracticeCheck c{"training_loop", "ok", "", ""};
  std::vector<std::string> findings;
  std::vector<std::string> advice;
  if (in.habits.data_parallel) {
    findings.push_back("torch.nn.DataParallel runs the model");
    advice.push_back(
        "use DistributedDataParallel, one process per GPU (torchrun): "
        "DataParallel scatters every batch and gathers every output from one "
        "process and one Python thread");
  }
  if (in.habits.empty_cache_calls > 0) {
    // Counted inside the steps, from the user's code: a framework's own call when it starts
    // or tears down (Lightning's) is not the loop's.
    findings.push_back(format("torch.cuda.empty_cache() called %llu times inside the steps",
                              static_cast<unsigned long long>(in.habits.empty_cache_calls)));
    advice.push_back(
        "remove torch.cuda.empty_cache() from the loop: it hands the caching "
        "allocator's memory back, and the next steps allocate it again, slowly");
  }
  const LoopHabits& h = in.habits;
  if (h.eval_grad_forwards > 0) {
    findings.push_back(format("%llu forwards of modules in eval() with autograd on (first at %s)",
                              static_cast<unsigned long long>(h.eval_grad_forwards),
                              h.eval_grad_site.c_str()));
    advice.push_back(
        "evaluate inside `with torch.no_grad():` (or torch.inference_mode()): without it "
        "every forward records a graph for a backward that never comes");
  }
  const bool warn = !findings.empty();
  // Device habits, on a CUDA device only: advice worth trying, not a fault.
  if (h.cuda_forwards && h.training_forwards) {
    if (h.autocast_dtype.empty()) {
      findings.push_back("training forwards run in float32 (no torch.autocast)");
      advice.push_back(
          std::string("run the forward under `with torch.autocast(\"cuda\", dtype=") +
          (h.bf16_supported ? "torch.bfloat16" : "torch.float16") + "):` to use the tensor cores" +
          (h.bf16_supported ? " (bfloat16 needs no GradScaler)" : " with a GradScaler"));
    } else if (h.autocast_dtype == "float16" && h.bf16_supported) {
      findings.push_back("autocast to float16 on a device that computes in bfloat16");
      advice.push_back(
          "use torch.autocast(\"cuda\", dtype=torch.bfloat16): as fast, float32's range, and "
          "no GradScaler");
    }
  }
  if (h.cuda_forwards && h.convolutions && !h.cudnn_benchmark && !in.deterministic) {
    findings.push_back("convolutions with torch.backends.cudnn.benchmark off");
    advice.push_back(
        "set torch.backends.cudnn.benchmark = True when the input shapes stay the same: cuDNN "
        "times its algorithms once and keeps the fastest");
  }
  if (findings.empty()) {
    c.finding = h.forwards ? "no DataParallel, no torch.cuda.empty_cache(), evaluation without "
                             "autograd"
                           : "no DataParallel and no torch.cuda.empty_cache() in the loop";
    if (h.forwards && h.cuda_forwards && !h.autocast_dtype.empty()) {
      c.finding += "; autocast to " + h.autocast_dtype;
    }
    return c;
  }
  c.status = warn ? "warn" : "info";
  for (std::size_t i = 0; i < findings.size(); ++i) {
    c.finding += (i > 0 ? "; " : "") + findings[i];
    c.advice += (i > 0 ? "; " : "") + advice[i];
  }
  return c;
}

}  // namespace

std::vector<PracticeCheck> check_practices(const PracticeInputs& in, const Language& lang) {
  return {pinned_memory(in, lang),  host_sync(in, lang),    device_tensors(in, lang),
          transfer_dtype(in, lang), workers(in, lang),      determinism(in, lang),
          shuffle(in, lang),        training_loop(in, lang)};
}

std::string format_practices(const std::vector<PracticeCheck>& checks) {
  std::string out = "practices\n";
  for (const PracticeCheck& c : checks) {
    out += format("  %-5s %-15s ", c.status.c_str(), c.name.c_str()) + c.finding + "\n";
    if (!c.advice.empty()) out += format("  %-5s %-15s -> ", "", "") + c.advice + "\n";
  }
  return out;
}

nlohmann::json practices_json(const std::vector<PracticeCheck>& checks) {
  nlohmann::json out = nlohmann::json::array();
  for (const PracticeCheck& c : checks) {
    out.push_back(
        {{"name", c.name},
         {"status", c.status},
         {"finding", c.finding},
         {"advice", c.advice.empty() ? nlohmann::json(nullptr) : nlohmann::json(c.advice)}});
  }
  return out;
}

}  // namespace gpufeed::diagnosis
