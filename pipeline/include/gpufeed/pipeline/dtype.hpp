#pragma once
#include <array>
#include <cstddef>
#include <string>

namespace gpufeed::pipeline {

/// Element type of normalized batches.
/// uint8: the un-normalized pixels (PILToTensor's), in the output layout.
enum class DType { float32, float16, bfloat16, uint8 };
inline constexpr std::array<const char*, 4> kDTypeNames{"float32", "float16", "bfloat16", "uint8"};

std::string to_string(DType dtype);
/// Parses "float32" | "float16" | "bfloat16" | "uint8" (also "fp32", "fp16", "half", "bf16");
/// throws UsageError otherwise.
DType parse_dtype(const std::string& text);
std::size_t dtype_size(DType dtype);

}  // namespace gpufeed::pipeline

// The names a trainer writes, also as gpufeed::X (docs/layout.md).
namespace gpufeed {
using pipeline::DType;
using pipeline::dtype_size;
using pipeline::kDTypeNames;
using pipeline::parse_dtype;
using pipeline::to_string;
}  // namespace gpufeed
