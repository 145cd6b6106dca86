// CuptiCollector must never take the host program down: without a GPU (or with a failing CUPTI)
// it reports itself unavailable once and every call stays harmless.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "collect/cupti_api.hpp"
#include "gpufeed/profiler/clock.hpp"
#include "gpufeed/profiler/clock_alignment.hpp"
#include "gpufeed/profiler/cupti_collector.hpp"
#include "occurrences.hpp"

namespace gpufeed::profiler {
namespace {

TEST(CuptiLibrary, IsLookedForWhereTheUserAndTheToolkitsPutIt) {
  ::setenv("GPUFEED_CUPTI", "/opt/cupti/libcupti.so.13", 1);
  CuptiCollector::add_library_directory("/venv/site-packages/nvidia/cu13/lib");
  const std::vector<std::string> places = detail::cupti_candidates();
  ::unsetenv("GPUFEED_CUPTI");
  const std::string name = "libcupti.so." + std::to_string(CUDART_VERSION / 1000);
  ASSERT_GE(places.size(), 6u);
  EXPECT_EQ(places[0], "/opt/cupti/libcupti.so.13");
  EXPECT_EQ(places[1], "/venv/site-packages/nvidia/cu13/lib/" + name);
  EXPECT_EQ(places[2], name);  // the system's own search
  EXPECT_NE(std::find(places.begin(), places.end(), "/usr/local/cuda/extras/CUPTI/lib64/" + name),
            places.end());
}

TEST(CuptiLibrary, AnythingButCuptiIsRefusedWithOneLineThatSaysWhatToInstall) {
  std::string why;
  EXPECT_FALSE(detail::load_cupti({"/nonexistent/libcupti.so"}, why));
  EXPECT_NE(why.find("not found in 1 places; set GPUFEED_CUPTI"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos);
  why.clear();
  EXPECT_FALSE(detail::load_cupti({"libm.so.6"}, why));  // loads, but is no CUPTI
  EXPECT_NE(why.find("libm.so.6 is not a CUPTI of CUDA"), std::string::npos) << why;
}

TEST(CuptiLibrary, TheToolkitsCuptiLoadsAtRunTimeAndNothingLinksIt) {
  // Nothing in this process linked libcupti: before a load, it is not there.
  const std::string name = "libcupti.so." + std::to_string(CUDART_VERSION / 1000);
  if (CuptiCollector::instance().library_path().empty()) {
    EXPECT_EQ(::dlopen(name.c_str(), RTLD_NOW | RTLD_NOLOAD), nullptr);
  }
  std::string why;
  const auto api = detail::load_cupti(detail::cupti_candidates(), why);
  if (!api) GTEST_SKIP() << "no CUPTI on this machine: " << why;
  EXPECT_NE(api->activity_enable, nullptr);
  EXPECT_NE(api->get_callback_name, nullptr);
  const char* text = nullptr;
  ASSERT_EQ(api->get_result_string(CUPTI_ERROR_NOT_INITIALIZED, &text), CUPTI_SUCCESS);
  EXPECT_NE(std::string(text).find("INITIALIZED"), std::string::npos) << text;
}

TEST(CuptiCollector, WithoutDeviceStartFailsOnceQuietlyAfterwards) {
  CuptiCollector& c = CuptiCollector::instance();
  ::testing::internal::CaptureStderr();
  const bool started = c.start();
  const bool again = c.start();
  const std::string err = ::testing::internal::GetCapturedStderr();
  if (started) {
    c.stop();
    GTEST_SKIP() << "a CUDA device is present; the unavailable path is not reachable here";
  }
  EXPECT_FALSE(again);
  EXPECT_FALSE(c.available());
  EXPECT_FALSE(c.active());
  EXPECT_FALSE(c.unavailable_reason().empty());
  EXPECT_EQ(gpufeed::testing::occurrences(err, "gpufeed profiler: CUPTI unavailable"), 1u) << err;
  EXPECT_EQ(gpufeed::testing::occurrences(err, "\n"), 1u) << err;
}

TEST(CuptiCollector, CallsAreHarmlessWhenNotStarted) {
  CuptiCollector& c = CuptiCollector::instance();
  c.stop();
  c.stop();
  Timeline t;
  t.host.push_back({"step", 10, 20, 1, kNoArg, 0, {}});
  c.append_to(t);
  if (!c.available()) {
    EXPECT_TRUE(t.device.empty());
    ASSERT_EQ(t.host.size(), 1u);
    EXPECT_EQ(c.stats().records, 0u);
  }
}

bool cuda_device_present() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return count > 0;
}

const DeviceActivity* find_activity(const Timeline& t, ActivityKind kind, std::uint64_t bytes) {
  const auto it = std::find_if(t.device.begin(), t.device.end(), [&](const DeviceActivity& a) {
    return a.kind == kind && a.bytes == bytes;
  });
  return it == t.device.end() ? nullptr : &*it;
}

const HostRange* find_call(const Timeline& t, std::uint64_t correlation) {
  const auto it = std::find_if(t.host.begin(), t.host.end(),
                               [&](const HostRange& r) { return r.correlation == correlation; });
  return it == t.host.end() ? nullptr : &*it;
}

TEST(CuptiCollector, WithDeviceRecordsCopiesAndMemsetOnTheHostClock) {
  if (!cuda_device_present()) GTEST_SKIP() << "no CUDA device: nothing for CUPTI to record";
  CuptiCollector& c = CuptiCollector::instance();
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  void* dev = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, kBytes), cudaSuccess);  // creates the context outside the window
  std::vector<unsigned char> up(kBytes, 0x11);
  std::vector<unsigned char> down(kBytes, 0);
  Timeline stale;
  c.append_to(stale);  // whatever earlier tests left behind

  ASSERT_TRUE(c.start()) << c.unavailable_reason();
  const std::int64_t host_begin = now_ns();
  const bool ok = cudaMemcpy(dev, up.data(), kBytes, cudaMemcpyHostToDevice) == cudaSuccess &&
                  cudaMemset(dev, 0x5a, kBytes) == cudaSuccess &&
                  cudaMemcpy(down.data(), dev, kBytes, cudaMemcpyDeviceToHost) == cudaSuccess &&
                  cudaDeviceSynchronize() == cudaSuccess;
  const std::int64_t host_end = now_ns();
  c.stop();
  cudaFree(dev);
  ASSERT_TRUE(ok);
  ASSERT_EQ(down[0], 0x5a);
  ASSERT_EQ(down[kBytes - 1], 0x5a);

  Timeline t;
  c.append_to(t);
  EXPECT_GE(c.stats().records, 3u);
  const DeviceActivity* h2d = find_activity(t, ActivityKind::memcpy_h2d, kBytes);
  const DeviceActivity* memset = find_activity(t, ActivityKind::memset, kBytes);
  const DeviceActivity* d2h = find_activity(t, ActivityKind::memcpy_d2h, kBytes);
  ASSERT_NE(h2d, nullptr);
  ASSERT_NE(memset, nullptr);
  ASSERT_NE(d2h, nullptr);
  EXPECT_TRUE(h2d->pageable);
  EXPECT_TRUE(d2h->pageable);
  // On the host monotonic clock, inside the calls' window; the slack covers the clock alignment.
  constexpr std::int64_t kSlackNs = 1'000'000;
  for (const DeviceActivity* a : {h2d, memset, d2h}) {
    SCOPED_TRACE(a->name);
    EXPECT_GE(a->end_ns, a->begin_ns);
    EXPECT_GE(a->begin_ns, host_begin - kSlackNs);
    EXPECT_LE(a->end_ns, host_end + kSlackNs);
    EXPECT_NE(a->correlation, 0u);
  }
  // One stream: the device ran them in the order they were issued.
  EXPECT_LE(h2d->begin_ns, memset->begin_ns);
  EXPECT_LE(memset->begin_ns, d2h->begin_ns);
  // The runtime calls behind the copies: a device-to-host copy blocks the host, so it is a sync.
  const HostRange* d2h_call = find_call(t, d2h->correlation);
  ASSERT_NE(d2h_call, nullptr);
  EXPECT_EQ(d2h_call->name, "sync");
  EXPECT_EQ(d2h_call->detail, "cudaMemcpy");
  const HostRange* h2d_call = find_call(t, h2d->correlation);
  ASSERT_NE(h2d_call, nullptr);
  EXPECT_EQ(h2d_call->name, "launch");
  EXPECT_EQ(h2d_call->detail, "cudaMemcpy");
}

TEST(ClockAlignment, InterpolatesDriftBetweenStartAndStop) {
  ClockAlignment a({1'000, 500, 0});
  EXPECT_EQ(a.to_host(1'000), 1'500);
  a.set_stop({11'000, 600, 0});  // the host clock gained 100 ns over 10 us of the other clock
  EXPECT_EQ(a.to_host(1'000), 1'500);
  EXPECT_EQ(a.to_host(6'000), 6'550);
  EXPECT_EQ(a.to_host(11'000), 11'600);
}

TEST(ClockAlignment, MeasureKeepsTightestBracketAndReportsFailure) {
  ClockPair p;
  std::int64_t fake = 0;
  ASSERT_TRUE(measure_clock_pair(
      [&](std::int64_t& t) {
        t = now_ns() - 1'000'000;  // the other clock runs 1 ms behind
        return ++fake > 0;
      },
      p));
  EXPECT_NEAR(static_cast<double>(p.offset_ns), 1e6, 1e5);
  EXPECT_GE(p.uncertainty_ns, 0);
  ClockPair untouched{7, 7, 7};
  EXPECT_FALSE(measure_clock_pair([](std::int64_t&) { return false; }, untouched));
  EXPECT_EQ(untouched.offset_ns, 7);
}

}  // namespace
}  // namespace gpufeed::profiler
