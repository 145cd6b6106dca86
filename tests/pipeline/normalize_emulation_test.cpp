// The CUDA normalize kernels' threads run on the CPU: each launch that launch_normalize() would
// make is planned as for a GPU (normalize_plan.cpp), then every block of its grid and every
// thread of a block run in turn, the block's shared memory a host array and __syncthreads() the
// boundary between two loops over the threads. Compared with normalize_reference() as
// tests/gpu compares the kernels on a device; here without one (and under ASan in CI, which
// sees every read and write outside the buffers).
#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "cuda/normalize_plan.hpp"
#include "normalize_expect.hpp"

namespace gpufeed::pipeline {
namespace {

using formats::Layout;
using normalize_device::kThreads;
using normalize_device::LaunchPlan;
using testing::augments_for;
using testing::expect_matches;
using testing::for_every_case;
using testing::make_normalize_spec;

constexpr unsigned kH200Blocks = 132 * 2048 / kThreads;  // launch_normalize's grid on an H200
constexpr std::size_t kGuard = 64;

/// Every thread of the plan's grid. Shared memory starts as poison (0xA5 bytes, a table of NaNs)
/// and the staged bytes are poisoned again before each tile: a thread that reads a byte no
/// thread staged gets a wrong value, not the last tile's.
template <typename T, bool kInNchw, bool kOutNchw>
void run_grid(const LaunchPlan& p) {
  using namespace normalize_device;  // NOLINT(google-build-using-namespace)
  if (p.elementwise) {
    for (unsigned b = 0; b < p.blocks; ++b) {
      ChannelEntry table[kTableEntries];
      for (ChannelEntry& k : table) k = {NAN, NAN, 1 << 30, 0};
      for (unsigned t = 0; t < kThreads; ++t) fill_table(p.map.k, p.map.channels, t, table);
      for (unsigned t = 0; t < kThreads; ++t) elementwise_thread<T>(p.map, table, b, p.blocks, t);
    }
    return;
  }
  std::vector<uint4> shared((p.shared_bytes + 15) / 16);
  auto* bytes = reinterpret_cast<unsigned char*>(shared.data());
  for (unsigned b = 0; b < p.blocks; ++b) {
    std::memset(bytes, 0xA5, p.shared_bytes);
    const RowShared sh = row_shared(p.rows, shared.data());
    for (ChannelEntry* k = sh.table; k != sh.table + kTableEntries; ++k)
      *k = {NAN, NAN, 1 << 30, 0};
    for (unsigned t = 0; t < kThreads; ++t) fill_table(p.rows.k, p.rows.channels, t, sh.table);
    for (std::uint32_t i = b; i < p.rows.tiles; i += p.blocks) {
      const Tile tile = tile_at(p.rows, i);
      std::memset(sh.bytes, 0xA5, p.shared_bytes - static_cast<std::size_t>(sh.bytes - bytes));
      for (unsigned t = 0; t < kThreads; ++t) stage_tile<kInNchw>(p.rows, tile, t, sh);
      for (unsigned t = 0; t < kThreads; ++t) emit_tile<T, kInNchw, kOutNchw>(p.rows, tile, t, sh);
    }
  }
}

/// launch_normalize() on the CPU; `change` may alter each launch's plan before it runs.
void emulate_normalize(const NormalizeKernelArgs& args, const std::uint8_t* in, std::uint32_t count,
                       const SampleAugment* augment, void* out, unsigned max_blocks,
                       const std::function<void(LaunchPlan&)>& change = {}) {
  detail::for_each_launch(
      args, in, count, augment, out,
      [&](const std::uint8_t* in_launch, std::uint32_t n, const SampleAugment* augment_launch,
          void* out_launch) {
        LaunchPlan p = normalize_device::plan_launch(args, in_launch, n, augment_launch, out_launch,
                                                     max_blocks);
        if (change) change(p);
        normalize_device::with_kernel_types(p, [&](auto type, auto i, auto o) {
          run_grid<typename decltype(type)::type, decltype(i)::value, decltype(o)::value>(p);
        });
      });
}

struct Emulation {
  std::size_t in_offset = 0;   ///< bytes before the input in its buffer: misaligns it
  std::size_t out_offset = 0;  ///< bytes before the output, a multiple of the element size
  std::uint32_t max_launch_elements = 0x7FFFFFFFu;
  unsigned max_blocks = kH200Blocks;
  std::function<void(LaunchPlan&)> change;
};

/// Emulates the kernels on random samples into a poisoned buffer; compares with the reference.
void emulate_and_compare(const NormalizeSpec& spec, std::uint32_t count,
                         const std::vector<SampleAugment>& augments, std::uint32_t seed,
                         const Emulation& e = {}) {
  const std::vector<std::uint8_t> in = testing::random_samples(spec, count, seed);
  std::vector<std::uint8_t> in_buffer(e.in_offset + in.size());  // ends where the samples end
  std::copy(in.begin(), in.end(), in_buffer.begin() + static_cast<std::ptrdiff_t>(e.in_offset));
  std::vector<unsigned char> got(e.out_offset + count * spec.out_bytes() + kGuard, 0xFF);
  NormalizeKernelArgs args = normalize_kernel_args(spec);
  args.max_launch_elements = e.max_launch_elements;
  const SampleAugment* augment = augments.empty() ? nullptr : augments.data();
  emulate_normalize(args, in_buffer.data() + e.in_offset, count, augment, got.data() + e.out_offset,
                    e.max_blocks, e.change);
  expect_matches(spec, count, in, augment, got, e.out_offset);
}

class NormalizeEmulation : public ::testing::TestWithParam<testing::NormalizeParam> {};

TEST_P(NormalizeEmulation, MatchesTheReference) {
  const NormalizeSpec spec = testing::normalize_param_spec(GetParam());
  const std::uint32_t count = 5, seed = spec.in.height * 31 + spec.in.width;
  emulate_and_compare(spec, count, augments_for(spec, count, std::get<4>(GetParam()), seed), seed);
}

INSTANTIATE_TEST_SUITE_P(All, NormalizeEmulation, testing::normalize_params(),
                         testing::normalize_param_name);

TEST(NormalizeEmulation, UnalignedBuffersAreConverted) {
  for_every_case({13, 11, 3}, 3, [](const NormalizeSpec& spec, const auto& augments) {
    for (const std::size_t in_offset : {1, 2, 3, 5, 8}) {
      for (const std::size_t out_elements : {0, 1, 3}) {
        Emulation e;
        e.in_offset = in_offset;
        e.out_offset = out_elements * dtype_size(spec.dtype);
        emulate_and_compare(spec, 3, augments, 7, e);
      }
    }
  });
}

TEST(NormalizeEmulation, LargeBatchesAreSplitIntoLaunches) {
  for_every_case({32, 32, 3}, 7, [](const NormalizeSpec& spec, const auto& augments) {
    Emulation e;
    e.max_launch_elements = static_cast<std::uint32_t>(3 * spec.in.bytes() + 5);
    emulate_and_compare(spec, 7, augments, 10, e);  // launches of 3, 3 and 1 samples
  });
}

TEST(NormalizeEmulation, FewBlocksLoopOverTheGrid) {
  for (const unsigned blocks : {1u, 3u}) {
    for_every_case({29, 23, 3}, 4, [&](const NormalizeSpec& spec, const auto& augments) {
      Emulation e;
      e.max_blocks = blocks;
      emulate_and_compare(spec, 4, augments, 11, e);
    });
  }
}

// The benchmark's cases (bench/gpu): 224x224x3, and 224x224 windows of 256x256x3; tiles of
// unequal height.
TEST(NormalizeEmulation, BenchmarkShapes) {
  for (const std::uint32_t side : {224u, 256u}) {
    for (const Layout in_layout : testing::kNormalizeLayouts) {
      for (const Layout out_layout : testing::kNormalizeLayouts) {
        for (const DType dtype : testing::kNormalizeDTypes) {
          NormalizeSpec spec =
              make_normalize_spec({side, side, 3, in_layout}, false, out_layout, dtype);
          spec.out_height = spec.out_width = 224;
          emulate_and_compare(spec, 2, augments_for(spec, 2, side != 224, 12), 13);
        }
      }
    }
  }
}

TEST(NormalizeEmulation, OutOfRangeCropsAreClamped) {
  for_every_case({9, 9, 4}, 1, [](const NormalizeSpec& spec, const auto& augments) {
    if (augments.empty()) return;
    const std::vector<std::uint8_t> in = testing::random_samples(spec, 1, 3);
    const SampleAugment wild{1000, 1000, 7};
    const SampleAugment clamped{spec.in.height - spec.out_height, spec.in.width - spec.out_width,
                                1};
    std::vector<unsigned char> got(spec.out_bytes() + kGuard, 0xFF);
    emulate_normalize(normalize_kernel_args(spec), in.data(), 1, &wild, got.data(), kH200Blocks);
    expect_matches(spec, 1, in, &clamped, got, 0);
  });
}

// The plain map takes exactly the samples whose output element i is input byte i.
TEST(NormalizeEmulation, PlainSameLayoutTakesTheElementwiseKernel) {
  for_every_case({8, 8, 3}, 1, [](const NormalizeSpec& spec, const auto& augments) {
    const NormalizeKernelArgs args = normalize_kernel_args(spec);
    const std::vector<std::uint8_t> in(spec.in.bytes());
    std::vector<unsigned char> out(spec.out_bytes());
    const LaunchPlan p = normalize_device::plan_launch(
        args, in.data(), 1, augments.empty() ? nullptr : augments.data(), out.data(), 8);
    EXPECT_EQ(p.elementwise, augments.empty() && spec.in.layout == spec.out_layout);
  });
}

// Every block's grid-stride loop runs as many rounds: none runs a last round alone.
TEST(NormalizeEmulation, BlocksShareTheWorkEvenly) {
  for_every_case({224, 224, 3}, 256, [](const NormalizeSpec& spec, const auto& augments) {
    const std::vector<std::uint8_t> in(std::size_t{256} * spec.in.bytes());
    std::vector<unsigned char> out(std::size_t{256} * spec.out_bytes());
    const LaunchPlan p = normalize_device::plan_launch(normalize_kernel_args(spec), in.data(), 256,
                                                       augments.empty() ? nullptr : augments.data(),
                                                       out.data(), kH200Blocks);
    std::uint64_t per_tile = 1;  // the elementwise kernel's vectors per block and round
    normalize_device::with_kernel_types(p, [&](auto type, auto, auto) {
      per_tile = kThreads * normalize_device::kUnroll<typename decltype(type)::type>;
    });
    const std::uint64_t work =
        p.elementwise ? (p.map.vectors + per_tile - 1) / per_tile : p.rows.tiles;
    const std::uint64_t rounds = (work + p.blocks - 1) / p.blocks;
    EXPECT_LE(p.blocks, kH200Blocks);
    EXPECT_EQ(rounds, (work + kH200Blocks - 1) / kH200Blocks);       // no more rounds than needed
    EXPECT_GT(work, (rounds - 1) * p.blocks + (p.blocks - rounds));  // the last round is full
  });
}

// The comparison fails when a plan is off: the emulation can fail.
void emulate_with_a_wrong_plan(bool crop) {
  const NormalizeSpec spec =
      make_normalize_spec({16, 16, 3, Layout::nchw}, crop, Layout::nchw, DType::float32);
  Emulation e;
  e.change = [](LaunchPlan& p) {
    if (p.elementwise) {
      p.map.inner = normalize_device::FastDiv(1);  // channels as if NHWC
    } else {
      p.rows.max_crop_x = 0;  // every crop at the left edge
    }
  };
  const std::vector<SampleAugment> augments{{2, 3, 1}, {1, 2, 0}};
  emulate_and_compare(spec, 2, crop ? augments : std::vector<SampleAugment>{}, 14, e);
}

TEST(NormalizeEmulation, AWrongPlanIsCaught) {
  EXPECT_FATAL_FAILURE(emulate_with_a_wrong_plan(false), "element");
  EXPECT_FATAL_FAILURE(emulate_with_a_wrong_plan(true), "element");
}

}  // namespace
}  // namespace gpufeed::pipeline
