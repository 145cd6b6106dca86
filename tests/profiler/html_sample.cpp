// Writes a sample HTML report (and its Chrome trace) for the headless-browser render check:
// a GPU-style timeline with kernels, copies, launches, input stalls and a host sync.
#include <cstdio>
#include <exception>

#include "gpufeed/profiler/chrome_trace.hpp"
#include "gpufeed/profiler/html_report.hpp"
#include "synthetic_timeline.hpp"

namespace {

using namespace gpufeed::profiler;

Timeline sample_timeline() {
  testing::LoopSpec spec;
  spec.steps = 40;
  spec.stall_every = 4;
  spec.sync_every = 7;
  Timeline t = testing::training_loop(spec);
  std::uint64_t corr = 1;
  const std::size_t host_ranges = t.host.size();
  for (std::size_t i = 0; i < host_ranges; ++i) {
    const HostRange step = t.host[i];
    if (step.name != "step") continue;
    // Each step launches a copy and four kernels; the device runs them back to back.
    std::int64_t dev = step.begin_ns + testing::kMs / 5;
    t.device.push_back({ActivityKind::memcpy_h2d, 0, 9, dev, dev + testing::kMs, 3 << 20, corr,
                        false, "Memcpy HtoD"});
    t.host.push_back({"launch", step.begin_ns, step.begin_ns + 20'000, step.thread, kNoArg, corr++,
                      "cudaMemcpyAsync"});
    dev += testing::kMs;
    for (int k = 0; k < 4; ++k) {
      const std::int64_t launch = step.begin_ns + 40'000 + k * 30'000;
      t.device.push_back({ActivityKind::kernel, 0, 7, dev, dev + 2 * testing::kMs, 0, corr, false,
                          "conv_kernel_" + std::to_string(k)});
      t.host.push_back(
          {"launch", launch, launch + 20'000, step.thread, kNoArg, corr++, "cudaLaunchKernel"});
      dev += 2 * testing::kMs + 50'000;
    }
  }
  t.normalize();
  return t;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s REPORT.html [TRACE.json]\n", argv[0]);
    return 2;
  }
  try {
    const Timeline t = sample_timeline();
    PipelineFacts facts;
    facts.workers = 2;
    facts.cpu_cores = 8;
    GapReport r = analyze(t, {}, facts);
    testing::add_advice(r);
    HtmlReport::write_file(argv[1], t, r);
    if (argc > 2) ChromeTrace::write_file(argv[2], t, &r);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "html_sample: %s\n", e.what());
    return 1;
  }
  return 0;
}
