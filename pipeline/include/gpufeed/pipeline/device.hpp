#pragma once
// Which device the pipeline runs on. CUDA code always compiles and links; whether a GPU is
// used is decided at run time.
#include <string>

namespace gpufeed {

/// Number of usable CUDA devices: 0 when there is no driver, no device, or CUDA fails.
/// Never throws.
int cuda_device_count() noexcept;

/// Resolves a --device value: "auto" becomes "cuda:0" when a GPU is usable, else "cpu";
/// "cpu", "cuda" and "cuda:N" are checked. Throws UsageError for an unknown value, a device
/// index out of range, or a CUDA device on a machine without one.
std::string resolve_device(const std::string& requested);

/// "cpu" or e.g. "NVIDIA H100 80GB HBM3 (cuda:0, sm_90, 79.1 GiB)".
std::string describe_device(const std::string& device);

}  // namespace gpufeed
