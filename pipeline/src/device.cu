#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/device.hpp"

namespace gpufeed::pipeline {

int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" / "insufficient driver" error
    return 0;
  }
  return count;
}

namespace {

/// LOCAL_RANK under torchrun (one process per GPU), else 0.
int local_rank_device() {
  const char* local_rank = std::getenv("LOCAL_RANK");
  if (local_rank == nullptr || *local_rank == '\0') return 0;
  const std::string text = local_rank;
  if (text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos) {
    throw UsageError("LOCAL_RANK='" + text + "' is not a device number; fix the launcher");
  }
  return std::stoi(text);
}

}  // namespace

Device resolve_device(const Device& requested) {
  if (requested.is_cpu()) return requested;
  const int count = cuda_device_count();
  const bool automatic = requested.kind == Device::Kind::automatic;
  if (automatic && count == 0) return Device::cpu();
  const int index = requested.index >= 0 ? requested.index : local_rank_device();
  if (count == 0) {
    throw OptionError("device", "{device}=" + requested.str() +
                                    ": no CUDA device is usable on this machine; use {device}=cpu "
                                    "or auto");
  }
  if (index >= count) {
    throw OptionError("device", "{device}=" + requested.str() + ": this machine has " +
                                    std::to_string(count) +
                                    " CUDA device(s), cuda:0 to cuda:" + std::to_string(count - 1));
  }
  return Device::cuda(index);
}

std::string describe_device(const Device& device) {
  if (!device.is_cuda() || device.index < 0) return device.str();
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device.index) != cudaSuccess) {
    cudaGetLastError();
    return device.str();
  }
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB",
                static_cast<double>(prop.totalGlobalMem) / (1ull << 30));
  return std::string(prop.name) + " (" + device.str() + ", sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ", " + memory + ")";
}

}  // namespace gpufeed::pipeline
