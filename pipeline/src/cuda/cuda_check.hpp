#pragma once
// One checked-call macro for the CUDA runtime: the throw is out of line and the message carries
// file:line, the call, the error name and its description. A no-throw variant for destructors.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "gpufeed/base/cuda_error.hpp"
#include "gpufeed/base/unique_handle.hpp"

namespace gpufeed::pipeline {

namespace detail {
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);
/// Logs (once per call site is not tracked; callers are destructors) and clears the error.
void log_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept;
}  // namespace detail

#define GPUFEED_CUDA_CHECK(call)                                                                 \
  do {                                                                                           \
    const cudaError_t gpufeed_status_ = (call);                                                  \
    if (gpufeed_status_ != cudaSuccess) {                                                        \
      ::gpufeed::pipeline::detail::throw_cuda_error(gpufeed_status_, #call, __FILE__, __LINE__); \
    }                                                                                            \
  } while (false)

#define GPUFEED_CUDA_CHECK_NOTHROW(call)                                                       \
  do {                                                                                         \
    const cudaError_t gpufeed_status_ = (call);                                                \
    if (gpufeed_status_ != cudaSuccess) {                                                      \
      ::gpufeed::pipeline::detail::log_cuda_error(gpufeed_status_, #call, __FILE__, __LINE__); \
    }                                                                                          \
  } while (false)

struct CudaStreamTraits {
  using handle_type = cudaStream_t;
  static constexpr cudaStream_t null() noexcept { return nullptr; }
  static void destroy(cudaStream_t s) noexcept { GPUFEED_CUDA_CHECK_NOTHROW(cudaStreamDestroy(s)); }
};
struct CudaEventTraits {
  using handle_type = cudaEvent_t;
  static constexpr cudaEvent_t null() noexcept { return nullptr; }
  static void destroy(cudaEvent_t e) noexcept { GPUFEED_CUDA_CHECK_NOTHROW(cudaEventDestroy(e)); }
};
struct CudaDeviceMemoryTraits {
  using handle_type = void*;
  static constexpr void* null() noexcept { return nullptr; }
  static void destroy(void* p) noexcept { GPUFEED_CUDA_CHECK_NOTHROW(cudaFree(p)); }
};
struct CudaHostMemoryTraits {
  using handle_type = void*;
  static constexpr void* null() noexcept { return nullptr; }
  static void destroy(void* p) noexcept { GPUFEED_CUDA_CHECK_NOTHROW(cudaFreeHost(p)); }
};
using CudaStream = UniqueHandle<CudaStreamTraits>;
using CudaEvent = UniqueHandle<CudaEventTraits>;
using DeviceMemory = UniqueHandle<CudaDeviceMemoryTraits>;
using PinnedMemory = UniqueHandle<CudaHostMemoryTraits>;

/// Owned CUDA objects on the current device; each throws CudaError when the call fails.
CudaStream make_stream();  ///< non-blocking: no implicit sync with the legacy default stream
CudaEvent make_event();
DeviceMemory device_alloc(std::uint64_t bytes);  ///< at least one byte

}  // namespace gpufeed::pipeline
