// The practice checks: what a run does that costs it time (pageable copies, syncs inside the
// step, float transfers, worker counts), found from its facts and worded in a front end's
// language. Pure functions: no device, no files.
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_run.hpp"
#include "gpufeed/diagnosis/practices.hpp"

namespace gpufeed::diagnosis {
namespace {

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const PracticeCheck& check(const std::vector<PracticeCheck>& checks, const std::string& name) {
  const auto it = std::find_if(checks.begin(), checks.end(),
                               [&](const PracticeCheck& c) { return c.name == name; });
  if (it == checks.end()) throw std::runtime_error("no check " + name);
  return *it;
}

/// The check warns, and its finding holds `text`.
::testing::AssertionResult warns(const PracticeCheck& c, const std::string& text) {
  if (c.status == "warn" && contains(c.finding, text)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << c.name << " is " << c.status << ": " << c.finding;
}

/// The check `name` of the practices of `in`, in the library's own words (field_language()).
PracticeCheck practice(const PracticeInputs& in, const std::string& name) {
  return check(check_practices(in), name);
}

TEST(Practices, AWellBehavedCudaRunPassesEveryCheck) {
  const auto checks = check_practices(cuda_run());
  ASSERT_EQ(checks.size(), 8u);
  for (const char* name : {"pinned_memory", "host_sync", "device_tensors", "transfer_dtype",
                           "workers", "training_loop"}) {
    EXPECT_EQ(check(checks, name).status, "ok") << name << ": " << check(checks, name).finding;
    EXPECT_TRUE(check(checks, name).advice.empty()) << name;
  }
  EXPECT_TRUE(contains(check(checks, "pinned_memory").finding,
                       "50.0 GB/s vs 10.0 GB/s pageable (pinned/pageable 5.00x)"))
      << check(checks, "pinned_memory").finding;
  EXPECT_EQ(check(checks, "determinism").status, "info");
  EXPECT_TRUE(contains(check(checks, "determinism").finding, "seed=7"));
}

TEST(Practices, PageableSlotsAndPageableCopiesAreWarnings) {
  PracticeInputs in = cuda_run();
  in.pinned = false;
  EXPECT_EQ(practice(in, "pinned_memory").status, "warn");
  EXPECT_TRUE(contains(practice(in, "pinned_memory").advice, "ulimit -l"));
  in = cuda_run();
  in.pageable_h2d_copies = 100;
  in.pageable_h2d_bytes = 4'000'000;
  const PracticeCheck c = practice(in, "pinned_memory");
  EXPECT_TRUE(warns(c, "100 other copies (4.0 MB)"));
}

TEST(Practices, SyncsInsideTheStepAreCountedPerStep) {
  PracticeInputs in = cuda_run();
  in.step_syncs = 100;
  in.step_sync_ns = 250'000'000;
  in.host_sync_idle_share = 0.12;
  const PracticeCheck c = practice(in, "host_sync");
  EXPECT_TRUE(warns(c, "100 host syncs inside the steps (1.00 per step, 250.0 ms"));
  EXPECT_TRUE(contains(c.advice, "read it every few hundred steps instead of every step"))
      << c.advice;
  in.host_sync_idle_share = 0.001;  // cheap syncs: worth knowing, not a warning
  EXPECT_EQ(practice(in, "host_sync").status, "info");
}

TEST(Practices, CopiesBeyondTheLoadersBatchesAreFlagged) {
  PracticeInputs in = cuda_run();
  in.h2d_copies = 200 + 300;  // three extra copies per step
  const PracticeCheck c = practice(in, "device_tensors");
  EXPECT_TRUE(warns(c, "300 host-to-device copies that are not batches (3.00 per step)"));
  in.device_records = false;
  EXPECT_EQ(practice(in, "device_tensors").status, "n/a");
}

TEST(Practices, FloatTransfersAreFlagged) {
  PracticeInputs in = cuda_run();
  in.h2d_bytes = 25600ull * 12288 * 4;  // float32 samples crossed the bus
  const PracticeCheck c = practice(in, "transfer_dtype");
  EXPECT_TRUE(warns(c, "4.00x the uint8 sample"));
}

TEST(Practices, WorkerCountsAgainstCores) {
  PracticeInputs in = cuda_run();
  in.workers = 32;
  EXPECT_EQ(practice(in, "workers").status, "warn");
  EXPECT_TRUE(contains(practice(in, "workers").advice, "workers=16"));

  in = cuda_run();  // CPU training: LibTorch's threads compete with the loader's
  in.cuda = false;
  in.training_on_cpu = true;
  in.cores = 2;
  in.workers = 2;
  in.torch_threads = 2;
  in.loader_busy_threads = 1.5;
  const PracticeCheck over = practice(in, "workers");
  EXPECT_EQ(over.status, "warn");
  EXPECT_TRUE(contains(over.advice, "oversubscribed: 3.50 busy threads on 2 cores")) << over.advice;

  in = cuda_run();  // input-bound with the bottleneck saturated: more workers
  in.input_bound = true;
  in.bottleneck_stage = "decode";
  in.bottleneck_busy = 0.97;
  in.workers = 4;
  in.loader_busy_threads = 3.9;
  const PracticeCheck under = practice(in, "workers");
  EXPECT_EQ(under.status, "warn");
  EXPECT_TRUE(contains(under.advice, "decode saturated at 4 workers: use workers=16"))
      << under.advice;
  in.workers = 16;
  in.loader_busy_threads = 15.5;
  EXPECT_TRUE(contains(practice(in, "workers").advice, "echo, smaller"))
      << practice(in, "workers").advice;
}

TEST(Practices, CpuRunsHaveNoBusChecksAndDeterministicRunsSayOk) {
  PracticeInputs in = cuda_run();
  in.cuda = false;
  in.device_records = false;
  in.deterministic = true;
  const auto checks = check_practices(in);
  for (const char* name : {"pinned_memory", "device_tensors", "transfer_dtype"}) {
    EXPECT_EQ(check(checks, name).status, "n/a") << name;
  }
  EXPECT_EQ(check(checks, "determinism").status, "ok");
  in.profiled = false;
  EXPECT_EQ(practice(in, "host_sync").status, "n/a");
}

TEST(Practices, APythonLoopsDeviceHabitsComeWithWhatToWriteInstead) {
  PracticeInputs in = cuda_run();
  LoopHabits& h = in.habits;
  h.forwards = h.training_forwards = h.cuda_forwards = h.convolutions = true;
  h.bf16_supported = true;
  // float32 training with cuDNN's benchmark off: advice worth trying, not a fault.
  PracticeCheck c = check(check_practices(in), "training_loop");
  EXPECT_EQ(c.status, "info") << c.finding;
  EXPECT_TRUE(contains(c.finding, "training forwards run in float32 (no torch.autocast)"))
      << c.finding;
  EXPECT_TRUE(contains(c.advice,
                       "dtype=torch.bfloat16):` to use the tensor cores (bfloat16 "
                       "needs no GradScaler)"))
      << c.advice;
  EXPECT_TRUE(contains(c.advice, "torch.backends.cudnn.benchmark = True")) << c.advice;
  h.autocast_dtype = "float16";
  h.cudnn_benchmark = true;
  c = check(check_practices(in), "training_loop");
  EXPECT_TRUE(contains(c.finding, "autocast to float16 on a device that computes in bfloat16"))
      << c.finding;
  EXPECT_FALSE(contains(c.advice, "cudnn")) << c.advice;
  h.autocast_dtype = "bfloat16";
  c = check(check_practices(in), "training_loop");
  EXPECT_EQ(c.status, "ok") << c.finding;
  EXPECT_TRUE(contains(c.finding, "autocast to bfloat16")) << c.finding;
  // Evaluation with autograd on is a fault on any device.
  h.eval_grad_forwards = 12;
  h.eval_grad_site = "eval.py:9";
  c = check(check_practices(in), "training_loop");
  EXPECT_TRUE(warns(c,
                    "12 forwards of modules in eval() with autograd on (first at "
                    "eval.py:9)"));
  // Host tensors moved every step, seen where they are written, CUPTI or not.
  in.device_records = false;
  h.host_tensor_moves = 400;
  h.host_tensor_site = "train.py:40 .to()";
  c = check(check_practices(in), "device_tensors");
  EXPECT_TRUE(warns(c, "(4.00 per step; most at train.py:40 .to())"));
  // None of it on the CPU, where there are no tensor cores or cuDNN.
  in = cuda_run();
  in.habits.forwards = in.habits.training_forwards = in.habits.convolutions = true;
  EXPECT_EQ(check(check_practices(in), "training_loop").status, "ok");
}

TEST(Practices, JsonHasOneObjectPerCheck) {
  const auto json = practices_json(check_practices(cuda_run()));
  ASSERT_EQ(json.size(), 8u);
  EXPECT_EQ(json[0]["name"], "pinned_memory");
  EXPECT_TRUE(json[0]["advice"].is_null());
  EXPECT_EQ(json[5]["status"], "info");
}

}  // namespace
}  // namespace gpufeed::diagnosis
