#pragma once
// The cores one rank of a node takes when the loader's settings leave the count open
// (workers=0; workers=auto with cpu_budget=0): the ranks of a node take its cores once between
// them, not once each.

namespace gpufeed::pipeline::detail {

/// One rank's share of the cores, and what it was computed from (stats().cpu_share).
struct CpuShare {
  unsigned mask_cores = 1;      ///< cores in the process's affinity mask
  unsigned launcher_cores = 1;  ///< cores in its launcher's (parent's) mask
  unsigned local_ranks = 1;     ///< LOCAL_WORLD_SIZE; 1 when unset
  unsigned sharing_ranks = 1;   ///< ranks taken to run on the mask's cores
  unsigned cores = 1;           ///< the share: mask_cores / sharing_ranks, at least 1
};

/// The share of one of `local_ranks` ranks whose affinity mask holds `mask_cores` cores, started
/// by a launcher whose mask holds `launcher_cores` (0: unknown, taken as the rank's own).
///
/// Ranks that run with their launcher's mask (torchrun's default) share it: the mask divided by
/// `local_ranks`. A rank whose mask is smaller than its launcher's was pinned (taskset or
/// numactl per rank, srun --cpu-bind, a launcher's NUMA binding); the ranks taken to share its
/// mask are as many as the launcher's cores hold masks that size, local_ranks x mask_cores /
/// launcher_cores rounded down, at least 1: a rank pinned to cores of its own keeps them all,
/// the mask is already its share; ranks pinned several to a NUMA node share that node's cores.
/// The share rounds down (3 cores, 2 ranks: 1 each), so what is left goes to the trainers' own
/// threads. Pure.
[[nodiscard]] CpuShare share_cores(unsigned mask_cores, unsigned launcher_cores,
                                   unsigned local_ranks);

/// This process's share: its affinity mask and its parent's (sched_getaffinity), and
/// LOCAL_WORLD_SIZE. A mask that cannot be read counts as the one oneTBB sees; a parent's that
/// cannot be read as this process's. Throws UsageError for a LOCAL_WORLD_SIZE that is not a
/// positive number.
[[nodiscard]] CpuShare this_process_share();

}  // namespace gpufeed::pipeline::detail
