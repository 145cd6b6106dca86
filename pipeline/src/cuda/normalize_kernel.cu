// uint8 samples to normalized float / half / bfloat16 / uint8 tensors: (x - mean[c]) * inv_std[c]
// in float, then rounded to nearest even. Two kernels (normalize_plan.cpp picks one): a plain
// map over contiguous bytes when output element i reads input byte i, and a row-tile kernel
// that stages each tile's window in shared memory for crops, flips and layout changes. Both
// store 16-byte vectors; their threads' work is in the .cuh files, shared with the CPU tests.
#include <cuda_runtime_api.h>

#include "cuda/cuda_check.hpp"
#include "cuda/normalize_kernel.hpp"
#include "cuda/normalize_plan.hpp"

namespace gpufeed::pipeline {
namespace {

using namespace normalize_device;  // NOLINT(google-build-using-namespace): the kernels' own

template <typename T>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) elementwise_kernel(ElementwiseArgs a) {
  __shared__ ChannelEntry table[kTableEntries];
  fill_table(a.k, a.channels, threadIdx.x, table);
  __syncthreads();
  elementwise_thread<T>(a, table, blockIdx.x, gridDim.x, threadIdx.x);
}

template <typename T, bool kInNchw, bool kOutNchw>
__global__ void __launch_bounds__(kThreads, kMinBlocksPerSm) row_kernel(RowArgs a) {
  extern __shared__ uint4 shared[];
  const RowShared sh = row_shared(a, shared);
  fill_table(a.k, a.channels, threadIdx.x, sh.table);
  for (std::uint32_t t = blockIdx.x; t < a.tiles; t += gridDim.x) {
    const Tile tile = tile_at(a, t);
    stage_tile<kInNchw>(a, tile, threadIdx.x, sh);
    __syncthreads();
    emit_tile<T, kInNchw, kOutNchw>(a, tile, threadIdx.x, sh);
    __syncthreads();  // the next tile's staging overwrites these bytes
  }
}

}  // namespace

namespace detail {

void launch_normalize_chunk(const NormalizeKernelArgs& args, const std::uint8_t* in_device,
                            std::uint32_t count, const SampleAugment* augment_device,
                            void* out_device, void* stream, unsigned max_blocks) {
  const LaunchPlan p = plan_launch(args, in_device, count, augment_device, out_device, max_blocks);
  const auto s = static_cast<cudaStream_t>(stream);
  with_kernel_types(p, [&](auto type, auto in_nchw, auto out_nchw) {
    using T = typename decltype(type)::type;
    if (p.elementwise) {
      elementwise_kernel<T><<<p.blocks, kThreads, 0, s>>>(p.map);
    } else {
      row_kernel<T, decltype(in_nchw)::value, decltype(out_nchw)::value>
          <<<p.blocks, kThreads, p.shared_bytes, s>>>(p.rows);
    }
  });
  GPUFEED_CUDA_CHECK(cudaGetLastError());
}

}  // namespace detail
}  // namespace gpufeed::pipeline
