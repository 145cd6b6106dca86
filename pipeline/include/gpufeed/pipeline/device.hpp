#pragma once
// Which device the pipeline runs on. CUDA code always compiles and links; whether a GPU is
// used is decided at run time.
#include <string>

#include "gpufeed/base/device.hpp"

namespace gpufeed::pipeline {

/// Number of usable CUDA devices: 0 when there is no driver, no device, or CUDA fails.
/// Never throws.
int cuda_device_count() noexcept;

/// The device a loader runs on: "auto" becomes a CUDA device when one is usable, else the CPU;
/// "cuda" alone becomes LOCAL_RANK's device (0 outside torchrun). Throws OptionError for a
/// device index out of range or a CUDA device on a machine without one, UsageError for a
/// LOCAL_RANK that is not a number. The result is the CPU or a CUDA device with its index.
Device resolve_device(const Device& requested);

/// "cpu" or e.g. "NVIDIA H100 80GB HBM3 (cuda:0, sm_90, 79.1 GiB)".
std::string describe_device(const Device& device);

}  // namespace gpufeed::pipeline
