#include "cuda/cuda_check.hpp"

#include <cstdio>
#include <string>

namespace gpufeed::pipeline::detail {

namespace {
std::string describe(cudaError_t status, const char* call, const char* file, int line) {
  return std::string(file) + ":" + std::to_string(line) + ": " + call +
         " failed: " + cudaGetErrorName(status) + " (" + cudaGetErrorString(status) + ")";
}
}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // clear a non-sticky error so later calls are not blamed for it
  std::string message = describe(status, call, file, line);
  if (status == cudaErrorMemoryAllocation) {
    message += "; the device is out of memory: lower the batch size or prefetch";
  }
  throw CudaError(message, static_cast<int>(status));
}

void log_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept {
  cudaGetLastError();
  std::fprintf(stderr, "gpufeed: warning: %s\n", describe(status, call, file, line).c_str());
}

}  // namespace gpufeed::pipeline::detail

namespace gpufeed::pipeline {

CudaStream make_stream() {
  cudaStream_t s = nullptr;
  GPUFEED_CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  return CudaStream(s);
}

CudaEvent make_event() {
  cudaEvent_t e = nullptr;
  GPUFEED_CUDA_CHECK(cudaEventCreate(&e));
  return CudaEvent(e);
}

DeviceMemory device_alloc(std::uint64_t bytes) {
  void* p = nullptr;
  GPUFEED_CUDA_CHECK(cudaMalloc(&p, bytes == 0 ? 1 : bytes));
  return DeviceMemory(p);
}

}  // namespace gpufeed::pipeline
