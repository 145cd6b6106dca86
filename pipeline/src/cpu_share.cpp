#include "cpu_share.hpp"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>

#include <oneapi/tbb/info.h>

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline::detail {

namespace {

struct FreeCpuSet {
  void operator()(cpu_set_t* set) const noexcept { CPU_FREE(set); }
};

/// The cores in `pid`'s affinity mask (0: this thread); nullopt when it cannot be read. The set
/// grows until it holds every CPU the kernel knows (EINVAL: too small).
std::optional<unsigned> affinity_cores(pid_t pid) {
  for (int cpus = 1024; cpus <= (1 << 20); cpus *= 2) {
    const std::unique_ptr<cpu_set_t, FreeCpuSet> set(CPU_ALLOC(cpus));
    if (!set) return std::nullopt;
    const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(bytes, set.get());
    if (sched_getaffinity(pid, bytes, set.get()) == 0) {
      const int count = CPU_COUNT_S(bytes, set.get());
      return count > 0 ? std::optional<unsigned>(static_cast<unsigned>(count)) : std::nullopt;
    }
    if (errno != EINVAL) return std::nullopt;
  }
  return std::nullopt;
}

/// LOCAL_WORLD_SIZE (torchrun's ranks on this node); 1 when unset.
unsigned local_world_size() {
  const char* text = std::getenv("LOCAL_WORLD_SIZE");
  if (text == nullptr || *text == '\0') return 1;
  char* end = nullptr;
  const unsigned long value = std::strtoul(text, &end, 10);
  if (*end != '\0' || text[0] == '-' || value == 0 || value > (1u << 20)) {
    throw UsageError(std::string("environment variable LOCAL_WORLD_SIZE='") + text +
                     "' is not a number of ranks; unset it or fix the launcher");
  }
  return static_cast<unsigned>(value);
}

}  // namespace

CpuShare share_cores(unsigned mask_cores, unsigned launcher_cores, unsigned local_ranks) {
  CpuShare s;
  s.mask_cores = std::max(1u, mask_cores);
  s.launcher_cores = std::max(s.mask_cores, launcher_cores);
  s.local_ranks = std::max(1u, local_ranks);
  // Masks of this size the launcher's cores hold, each one shared by the ranks it holds.
  const std::uint64_t sharing = std::uint64_t{s.local_ranks} * s.mask_cores / s.launcher_cores;
  s.sharing_ranks = static_cast<unsigned>(std::clamp<std::uint64_t>(sharing, 1, s.local_ranks));
  s.cores = std::max(1u, s.mask_cores / s.sharing_ranks);
  return s;
}

CpuShare this_process_share() {
  const unsigned tbb_cores =
      static_cast<unsigned>(std::max(1, oneapi::tbb::info::default_concurrency()));
  const unsigned mask = affinity_cores(0).value_or(tbb_cores);
  const unsigned launcher = affinity_cores(getppid()).value_or(mask);
  return share_cores(mask, launcher, local_world_size());
}

}  // namespace gpufeed::pipeline::detail
