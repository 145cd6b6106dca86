// gpufeed._native.color_program: a transform's colour steps on a float32 NCHW CPU batch, a
// sample at a time in cache and without the GIL (gpufeed/_transform.py draws each sample's
// parameters with the ops' own get_params and passes them here).
#include "transform_binding.hpp"

#include <nanobind/ndarray.h>

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/pipeline/color.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

using Images = nb::ndarray<const float, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
using Output = nb::ndarray<float, nb::ndim<4>, nb::c_contig, nb::device::cpu>;
using Ops = nb::ndarray<const std::uint8_t, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Factors = nb::ndarray<const double, nb::ndim<2>, nb::c_contig, nb::device::cpu>;
using Norms = nb::ndarray<const float, nb::ndim<2>, nb::c_contig, nb::device::cpu>;

constexpr std::size_t kNormColumns = 6;  // mean R G B, std R G B

void color_program(const Images& src, Output& dst, const Ops& ops, const Factors& factors,
                   const Norms& norms) {
  const std::size_t n = src.shape(0);
  const std::size_t k = ops.shape(1);
  const bool shapes_agree = src.shape(1) == 3 && dst.shape(0) == n && dst.shape(1) == 3 &&
                            dst.shape(2) == src.shape(2) && dst.shape(3) == src.shape(3) &&
                            ops.shape(0) == n && factors.shape(0) == n && factors.shape(1) == k &&
                            norms.shape(0) == k && norms.shape(1) == kNormColumns;
  if (!shapes_agree) {
    throw UsageError(
        "color_program: expected images [n, 3, H, W] and an output of their shape, ops and "
        "factors [n, steps], norms [steps, 6]");
  }
  std::vector<pipeline::ColorStep> program(k);
  for (std::size_t j = 0; j < k; ++j) {
    for (std::size_t c = 0; c < 3; ++c) {
      program[j].mean[c] = norms(j, c);
      program[j].stddev[c] = norms(j, 3 + c);
    }
  }
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < k; ++j) {
      if (ops(i, j) > static_cast<std::uint8_t>(pipeline::ColorOp::normalize)) {
        throw UsageError("color_program: op code " + std::to_string(ops(i, j)) + " of sample " +
                         std::to_string(i) + " is not a colour step");
      }
    }
  }
  const std::size_t pixels = src.shape(2) * src.shape(3);
  const std::size_t image = 3 * pixels;
  const float* in = src.data();
  float* out = dst.data();
  nb::gil_scoped_release release;
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < k; ++j) {
      program[j].op =
          static_cast<pipeline::ColorOp>(ops(i, j));  // this sample's; mean and std stay
      program[j].factor = factors(i, j);
    }
    pipeline::color_program(std::span<const float>(in + i * image, image),
                            std::span<float>(out + i * image, image), pixels, program);
  }
}

}  // namespace

void bind_transform(nb::module_& m) {
  m.def("color_program", &color_program, nb::arg("images"), nb::arg("out"), nb::arg("ops"),
        nb::arg("factors"), nb::arg("norms"),
        "Runs each sample's colour steps (ops[i, j]: 0 skip, 1 brightness, 2 contrast, 3 "
        "saturation, 4 normalize with norms[j]) from `images` into `out`.");
}

}  // namespace gpufeed::python
