#pragma once
// The exception every gpufeed module throws for a failed CUDA runtime call.
#include <stdexcept>
#include <string>

namespace gpufeed {

/// A CUDA runtime call failed. `code()` is the cudaError_t value.
class CudaError : public std::runtime_error {
 public:
  CudaError(const std::string& message, int code) : std::runtime_error(message), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace gpufeed
