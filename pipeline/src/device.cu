#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/device.hpp"

namespace gpufeed {

int cuda_device_count() noexcept {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" / "insufficient driver" error
    return 0;
  }
  return count;
}

namespace {

// "cuda" alone is the process's local rank under torchrun (one process per GPU), else 0.
int parse_cuda_index(const std::string& requested) {
  if (requested == "cuda" || requested == "auto") {
    const char* local_rank = std::getenv("LOCAL_RANK");
    if (local_rank == nullptr || *local_rank == '\0') return 0;
    const std::string text = local_rank;
    if (text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos) {
      throw UsageError("LOCAL_RANK='" + text + "' is not a device number; fix the launcher");
    }
    return std::stoi(text);
  }
  const std::string digits = requested.substr(5);
  if (digits.empty() || digits.size() > 3 ||
      digits.find_first_not_of("0123456789") != std::string::npos) {
    throw OptionError("device",
                      "{device}=" + requested + ": expected cuda:N with N a device number");
  }
  return std::stoi(digits);
}

}  // namespace

std::string resolve_device(const std::string& requested) {
  if (requested == "cpu") return "cpu";
  const int count = cuda_device_count();
  if (requested == "auto" && count == 0) return "cpu";
  if (requested != "auto" &&
      (requested.rfind("cuda", 0) != 0 || (requested.size() > 4 && requested[4] != ':'))) {
    throw OptionError("device",
                      "{device}=" + requested + ": unknown device; use auto, cpu, cuda or cuda:N");
  }
  const int index = parse_cuda_index(requested);
  if (count == 0) {
    throw OptionError("device", "{device}=" + requested +
                                    ": no CUDA device is usable on this machine; use {device}=cpu "
                                    "or auto");
  }
  if (index >= count) {
    throw OptionError("device", "{device}=" + requested + ": this machine has " +
                                    std::to_string(count) +
                                    " CUDA device(s), cuda:0 to cuda:" + std::to_string(count - 1));
  }
  return "cuda:" + std::to_string(index);
}

std::string describe_device(const std::string& device) {
  if (device.rfind("cuda:", 0) != 0) return device;
  cudaDeviceProp prop{};
  const int index = std::stoi(device.substr(5));
  if (cudaGetDeviceProperties(&prop, index) != cudaSuccess) {
    cudaGetLastError();
    return device;
  }
  char memory[32];
  std::snprintf(memory, sizeof memory, "%.1f GiB",
                static_cast<double>(prop.totalGlobalMem) / (1ull << 30));
  return std::string(prop.name) + " (" + device + ", sm_" + std::to_string(prop.major) +
         std::to_string(prop.minor) + ", " + memory + ")";
}

}  // namespace gpufeed
