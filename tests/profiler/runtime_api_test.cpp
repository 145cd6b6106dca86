// How runtime calls are read: blocking ones are "sync", the rest "launch".
#include <gtest/gtest.h>

#include "collect/runtime_api.hpp"
#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler::detail {
namespace {

TEST(RuntimeApi, ClassifiesBlockingCallsAsSync) {
  for (const char* api : {"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize",
                          "cudaMemcpy", "cudaMemcpy2D", "cuCtxSynchronize", "cudaFree"}) {
    EXPECT_STREQ(classify_runtime_call(api), "sync") << api;
  }
  for (const char* api : {"cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemsetAsync",
                          "cudaEventRecord", "cudaMalloc", "cudaMemcpyPeer"}) {
    EXPECT_STREQ(classify_runtime_call(api), "launch") << api;
  }
}

TEST(RuntimeApi, StripsCuptiVersionSuffix) {
  EXPECT_EQ(strip_api_version("cudaLaunchKernel_v7000"), "cudaLaunchKernel");
  EXPECT_EQ(strip_api_version("cudaMemcpy_v3020"), "cudaMemcpy");
  EXPECT_EQ(strip_api_version("cudaFree"), "cudaFree");
  EXPECT_EQ(strip_api_version("my_vfunc"), "my_vfunc");
}

TEST(RuntimeApi, SynchronousHostToDeviceCopyIsALaunchNotASync) {
  Timeline t;
  t.host.push_back({"sync", 0, 10, 1, kNoArg, 7, "cudaMemcpy"});
  t.host.push_back({"sync", 20, 30, 1, kNoArg, 8, "cudaMemcpy"});
  t.device.push_back({ActivityKind::memcpy_h2d, 0, 7, 2, 8, 64, 7, true, "copy"});
  t.device.push_back({ActivityKind::memcpy_d2h, 0, 7, 22, 28, 4, 8, true, "copy"});
  refine_copy_calls(t);
  EXPECT_EQ(t.host[0].name, "launch");
  EXPECT_EQ(t.host[1].name, "sync");
}

}  // namespace
}  // namespace gpufeed::profiler::detail
