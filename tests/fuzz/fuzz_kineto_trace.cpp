// libFuzzer target: any bytes as a PyTorch profiler (Kineto) trace. Damaged JSON degrades to the
// events before the damage or a TraceError; never a crash, a sanitizer report or a hang.
#include <cstdint>
#include <string_view>

#include "gpufeed/profiler/error.hpp"
#include "gpufeed/profiler/kineto_trace.hpp"
#include "gpufeed/profiler/timeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    const auto trace = gpufeed::profiler::KinetoTrace::parse(
        std::string_view(reinterpret_cast<const char*>(data), size), "fuzz.json");
    (void)trace;
  } catch (const gpufeed::profiler::TraceError&) {
  }
  return 0;
}
