// The library's errors: one root, the tree Python mirrors, and option names rendered per front
// end.
#include "gpufeed/base/errors.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <type_traits>

#include "gpufeed/base/cuda_error.hpp"

namespace gpufeed {
namespace {

TEST(Errors, EveryErrorDerivesFromTheOneRoot) {
  static_assert(std::is_base_of_v<Error, UsageError>);
  static_assert(std::is_base_of_v<UsageError, OptionError>);
  static_assert(std::is_base_of_v<Error, FormatError>);
  static_assert(std::is_base_of_v<Error, PipelineError>);
  static_assert(std::is_base_of_v<Error, CudaError>);
  // The branches are apart: a usage error is never a file's or the pipeline's, and no library
  // error is a std::invalid_argument a caller might catch for something else.
  static_assert(!std::is_base_of_v<UsageError, FormatError>);
  static_assert(!std::is_base_of_v<FormatError, UsageError>);
  static_assert(!std::is_base_of_v<PipelineError, FormatError>);
  static_assert(!std::is_base_of_v<std::invalid_argument, UsageError>);
  try {
    throw OptionError("batch_size", "{batch_size}=0: use 1 or more");
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "batch_size=0: use 1 or more");
  }
  const CudaError cuda("cudaMalloc failed", 2);
  EXPECT_EQ(cuda.code(), 2);
}

TEST(Errors, OptionNamesRenderInEachFrontEndsWords) {
  const OptionError e("batch_size", "{batch_size}=0 with {prefetch}=2: raise {batch_size}");
  EXPECT_EQ(e.field(), "batch_size");
  EXPECT_STREQ(e.what(), "batch_size=0 with prefetch=2: raise batch_size");
  const auto flags = [](std::string_view f) { return "--" + std::string(f); };
  EXPECT_EQ(e.render(flags), "--batch_size=0 with --prefetch=2: raise --batch_size");
}

TEST(Errors, BracesThatNameNoFieldStayAsTheyAre) {
  const auto upper = [](std::string_view f) { return "<" + std::string(f) + ">"; };
  EXPECT_EQ(render_option_names("echo {auto} and {workers} and {", upper),
            "echo {auto} and <workers> and {");
  EXPECT_EQ(render_option_names("{size} {not_a_field}{seed}", upper), "<size> {not_a_field}<seed>");
}

}  // namespace
}  // namespace gpufeed
