#pragma once
// LoaderStats as the plain dict loader.stats() returns.
#include <nanobind/nanobind.h>

#include "gpufeed/pipeline/stats.hpp"

namespace gpufeed::python {

/// {"wall_s", "workers", "batches", "samples", "fresh_batches", "echoed_batches",
///  "reaugmented_batches", "skipped_samples", "stages": {name: {"busy_s", "busy_frac",
///  "items"}}, "bottleneck", "queue": {...}, "cache": {...}, "memory": {...}, "h2d": {...}}
nanobind::dict stats_dict(const LoaderStats& s);

}  // namespace gpufeed::python
