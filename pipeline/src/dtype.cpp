#include "gpufeed/pipeline/dtype.hpp"
#include "gpufeed/base/names.hpp"

#include "gpufeed/base/errors.hpp"

namespace gpufeed {

std::string to_string(DType dtype) {
  return name_of(kDTypeNames, dtype);
}

DType parse_dtype(const std::string& text) {
  if (text == "float32" || text == "fp32") return DType::float32;
  if (text == "float16" || text == "fp16" || text == "half") return DType::float16;
  if (text == "bfloat16" || text == "bf16") return DType::bfloat16;
  throw OptionError("dtype", "unknown {dtype} '" + text + "'; use float32, float16 or bfloat16");
}

std::size_t dtype_size(DType dtype) {
  return dtype == DType::float32 ? 4 : 2;
}

}  // namespace gpufeed
