#pragma once
// The exception every gpufeed module throws for a failed CUDA runtime call.
#include <string>

#include "gpufeed/base/errors.hpp"

namespace gpufeed {

/// A CUDA runtime call failed. `code()` is the cudaError_t value.
class CudaError : public Error {
 public:
  CudaError(const std::string& message, int code) : Error(message), code_(code) {}
  [[nodiscard]] int code() const noexcept { return code_; }

 private:
  int code_;
};

}  // namespace gpufeed
