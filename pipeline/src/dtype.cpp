#include "gpufeed/pipeline/dtype.hpp"
#include "gpufeed/base/names.hpp"

#include "gpufeed/base/errors.hpp"

namespace gpufeed::pipeline {

std::string to_string(DType dtype) {
  return name_of(kDTypeNames, dtype);
}

DType parse_dtype(const std::string& text) {
  if (text == "float32" || text == "fp32") return DType::float32;
  if (text == "float16" || text == "fp16" || text == "half") return DType::float16;
  if (text == "bfloat16" || text == "bf16") return DType::bfloat16;
  if (text == "uint8") return DType::uint8;
  throw OptionError("dtype", "unknown {dtype} '" + text +
                                 "'; use float32, float16, bfloat16 or uint8 (not normalized)");
}

std::size_t dtype_size(DType dtype) {
  if (dtype == DType::float32) return 4;
  return dtype == DType::uint8 ? 1 : 2;
}

}  // namespace gpufeed::pipeline
