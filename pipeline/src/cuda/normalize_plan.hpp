#pragma once
// Which normalize kernel one launch runs, with which arguments, grid and shared memory. Host
// code shared by the CUDA launches (normalize_kernel.cu) and by the CPU tests that run the
// kernels' threads on the host (tests/gpu/normalize_emulation_test.cpp), so both see one plan.
#include <cstdint>
#include <type_traits>

#include "cuda/normalize_elementwise.cuh"
#include "cuda/normalize_kernel.hpp"
#include "cuda/normalize_row_emit.cuh"

namespace gpufeed::pipeline::normalize_device {

struct LaunchPlan {
  bool elementwise = false;  ///< the plain map; else the row-tile kernel
  ElementwiseArgs map;
  RowArgs rows;
  DType dtype = DType::float32;
  bool in_nchw = false, out_nchw = false;  ///< of the row-tile kernel
  unsigned blocks = 1;
  unsigned shared_bytes = 0;  ///< dynamic shared memory of the row-tile kernel
};

/// The plan for `count` samples at `in` (fewer than 2^31 elements in and out) to `out`, with
/// at most `max_blocks` blocks; `augment` as for launch_normalize().
LaunchPlan plan_launch(const NormalizeKernelArgs& args, const std::uint8_t* in, std::uint32_t count,
                       const SampleAugment* augment, void* out, unsigned max_blocks);

template <typename T>
struct TypeTag {
  using type = T;
};

/// Calls f(TypeTag<T>{}, in_nchw, out_nchw) with T the plan's output element type and the
/// layouts as std::bool_constant: one place that maps a plan to kernel template arguments.
template <typename F>
void with_kernel_types(const LaunchPlan& p, F&& f) {
  auto layouts = [&](auto type) {
    if (p.in_nchw && p.out_nchw) return f(type, std::true_type{}, std::true_type{});
    if (p.in_nchw) return f(type, std::true_type{}, std::false_type{});
    if (p.out_nchw) return f(type, std::false_type{}, std::true_type{});
    return f(type, std::false_type{}, std::false_type{});
  };
  switch (p.dtype) {
    case DType::float32:
      return layouts(TypeTag<float>{});
    case DType::float16:
      return layouts(TypeTag<__half>{});
    case DType::bfloat16:
      return layouts(TypeTag<__nv_bfloat16>{});
    case DType::uint8:
      return layouts(TypeTag<std::uint8_t>{});
  }
}

}  // namespace gpufeed::pipeline::normalize_device
