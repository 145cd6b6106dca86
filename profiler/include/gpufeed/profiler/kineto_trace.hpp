#pragma once
// Reading PyTorch profiler (Kineto) Chrome traces into a Timeline.
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpufeed/profiler/timeline.hpp"

namespace gpufeed::profiler {

/// How host events of a PyTorch trace map onto the analysis' range names. Matching is by
/// substring of the event name.
struct KinetoOptions {
  /// The training loop blocked on its DataLoader -> "wait".
  std::vector<std::string> wait_names = {"enumerate(DataLoader)", "DataLoader.__next__"};
  /// One training iteration -> "step".
  std::vector<std::string> step_names = {"ProfilerStep#"};
  /// Operators that copy a device value to the host and wait for it -> "sync".
  std::vector<std::string> sync_ops = {"aten::item", "aten::_local_scalar_dense"};
  /// Collectives of torch.distributed (NCCL, gloo) -> "collective".
  std::vector<std::string> collective_names = {
      "nccl:", "gloo:", "c10d::", "record_param_comms", "ProcessGroupNCCL", "ProcessGroupGloo"};
};

/// What the reader saw, by kind; `unknown_kinds` counts categories it does not interpret.
struct KinetoCounts {
  std::size_t events = 0;
  std::size_t kernels = 0;
  std::size_t memcpys = 0;
  std::size_t memsets = 0;
  std::size_t syncs = 0;          ///< cuda_sync events (host-blocking ones become device syncs)
  std::size_t runtime_calls = 0;  ///< cuda_runtime and cuda_driver
  std::size_t cpu_ops = 0;
  std::size_t annotations = 0;
  std::size_t flows = 0;
  std::size_t metadata = 0;
  std::size_t malformed = 0;  ///< events missing a timestamp, duration or name
  /// Steps taken as the time from one input wait to the next on a thread: a trace without
  /// device activity or step ranges whose loop reads a DataLoader (as gpufeed.profile does).
  std::size_t implicit_steps = 0;
  std::map<std::string, std::size_t> unknown_kinds;
};

/// A Kineto trace as a Timeline (timestamps converted from microseconds to nanoseconds):
/// kernel, gpu_memcpy, gpu_memset -> device activity per stream; cuda_sync -> device sync
/// records; cuda_runtime / cuda_driver -> "launch" or "sync" host ranges with their correlation
/// ids (ac2g flows fill in missing ones); user_annotation / cpu_op -> "wait", "step", "sync",
/// "collective" or "cpu_op" per KinetoOptions, other annotations keep their names. The
/// trace's distributedInfo (rank, world_size) goes to the timeline.
///
/// Damaged input degrades instead of failing: a truncated or malformed JSON document yields
/// the complete events before the damage, unknown kinds are counted and skipped, and every such
/// problem is a line in timeline.warnings. Only input with no readable event array throws.
struct KinetoTrace {
  Timeline timeline;
  KinetoCounts counts;
  bool truncated = false;  ///< the JSON was cut off or damaged; events are a prefix

  /// Reads `path` (.json or .json.gz, detected by content). Throws TraceError.
  static KinetoTrace read(const std::string& path, const KinetoOptions& options = {});
  /// Parses trace JSON text; `source` names it in messages. Throws TraceError.
  static KinetoTrace parse(std::string_view json_text, const std::string& source = "trace",
                           const KinetoOptions& options = {});
};

}  // namespace gpufeed::profiler
