// A DataLoader pool as a trace shows it, and its bottleneck in the DataLoader's terms.
#include "gpufeed/diagnosis/input_pool.hpp"

#include <cstdio>
#include <string_view>
#include <vector>

namespace gpufeed::diagnosis {

using profiler::HostRange;
namespace range_names = profiler::range_names;

std::optional<InputPoolFacts> single_process_dataloader(const profiler::Timeline& timeline) {
  constexpr std::string_view kSingle = "_SingleProcessDataLoaderIter.__next__";
  std::vector<const HostRange*> fetches;
  for (const HostRange& r : timeline.host) {
    if (r.name != range_names::wait) continue;
    if (r.detail.find(kSingle) == std::string::npos) return std::nullopt;  // workers, or other
    fetches.push_back(&r);
  }
  if (fetches.empty()) return std::nullopt;
  InputPoolFacts pool;
  for (const HostRange* f : fetches) {
    ++pool.batches;
    pool.fetch_ns += f->end_ns - f->begin_ns;
    for (const HostRange& op : timeline.host) {
      if (op.name == range_names::cpu_op && op.detail == "aten::stack" && op.thread == f->thread &&
          op.begin_ns >= f->begin_ns && op.end_ns <= f->end_ns) {
        pool.collate_ns += op.end_ns - op.begin_ns;
      }
    }
  }
  return pool;
}

void name_pool_bottleneck(profiler::GapReport& report, const InputPoolFacts& p) {
  if (!report.bottleneck_stage.empty() || p.batches == 0 || p.fetch_ns <= 0) return;
  const double items_ns = static_cast<double>(p.fetch_ns - p.collate_ns);
  char basis[160];
  if (static_cast<double>(p.collate_ns) > items_ns) {
    report.bottleneck_stage = "collate";
    std::snprintf(basis, sizeof basis, "the DataLoader's collate_fn, %.2f ms a batch",
                  1e-6 * static_cast<double>(p.collate_ns) / static_cast<double>(p.batches));
  } else {
    report.bottleneck_stage = "dataset";
    if (p.samples > 0) {
      std::snprintf(basis, sizeof basis, "the dataset's __getitem__, %.2f ms a sample",
                    1e-6 * items_ns / static_cast<double>(p.samples));
    } else {  // a trace: the samples in a batch are not in it
      std::snprintf(basis, sizeof basis, "the dataset's __getitem__, %.2f ms a batch",
                    1e-6 * items_ns / static_cast<double>(p.batches));
    }
  }
  report.bottleneck_basis = basis;
}

}  // namespace gpufeed::diagnosis
