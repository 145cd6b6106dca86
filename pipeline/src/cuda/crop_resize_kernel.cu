// The crop-resize kernel after the JPEG engines: each image's decoded region is resampled
// horizontally into scratch rows, then vertically into its sample, with the arithmetic of
// crop_resize.hpp (Pillow's fixed point, the CPU path's filter). Two launches a batch; a block
// row per image, blocks striding over that image's pixels.
#include <cuda_runtime_api.h>

#include <algorithm>

#include "cuda/crop_resize.hpp"
#include "cuda/cuda_check.hpp"

namespace gpufeed::pipeline::detail {
namespace {

constexpr unsigned kThreads = 256;
constexpr unsigned kBlocksPerImage = 24;  // 256 images x 24 blocks: ~46 per SM on 132 SMs

__global__ void __launch_bounds__(kThreads)
    horizontal_kernel(const CropResizeImage* __restrict__ images,
                      const std::int32_t* __restrict__ taps,
                      const std::uint8_t* __restrict__ regions,
                      std::uint8_t* __restrict__ scratch) {
  const CropResizeImage im = images[blockIdx.y];
  const std::uint32_t pixels = im.rows * im.inner_width;
  for (std::uint32_t p = blockIdx.x * kThreads + threadIdx.x; p < pixels;
       p += gridDim.x * kThreads) {
    const std::uint32_t row = p / im.inner_width;
    crop_resize_horizontal(im, taps, regions, scratch, row, p - row * im.inner_width);
  }
}

__global__ void __launch_bounds__(kThreads)
    vertical_kernel(const CropResizeImage* __restrict__ images,
                    const std::int32_t* __restrict__ taps, const std::uint8_t* __restrict__ scratch,
                    std::uint8_t* __restrict__ out, std::uint32_t out_width,
                    std::uint32_t out_height) {
  const CropResizeImage im = images[blockIdx.y];
  const std::uint32_t pixels = out_width * out_height;
  std::uint8_t* sample = out + std::uint64_t(im.position) * pixels * 3;
  for (std::uint32_t p = blockIdx.x * kThreads + threadIdx.x; p < pixels;
       p += gridDim.x * kThreads) {
    const std::uint32_t y = p / out_width;
    crop_resize_output(im, taps, scratch, sample, out_width, out_height, y, p - y * out_width);
  }
}

}  // namespace

void launch_crop_resize(const CropResizeImage* images, std::uint32_t count,
                        const std::int32_t* taps, const std::uint8_t* regions,
                        std::uint8_t* scratch, std::uint8_t* out, std::uint32_t out_width,
                        std::uint32_t out_height, void* stream) {
  if (count == 0) return;
  const auto s = static_cast<cudaStream_t>(stream);
  // gridDim.y is at most 65535 images a launch.
  for (std::uint32_t first = 0; first < count; first += 65535) {
    const dim3 grid(kBlocksPerImage, std::min<std::uint32_t>(65535, count - first));
    horizontal_kernel<<<grid, kThreads, 0, s>>>(images + first, taps, regions, scratch);
    GPUFEED_CUDA_CHECK(cudaGetLastError());
    vertical_kernel<<<grid, kThreads, 0, s>>>(images + first, taps, scratch, out, out_width,
                                              out_height);
    GPUFEED_CUDA_CHECK(cudaGetLastError());
  }
}

}  // namespace gpufeed::pipeline::detail
