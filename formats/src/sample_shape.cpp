#include "gpufeed/formats/sample_shape.hpp"
#include "gpufeed/base/errors.hpp"

#include <stdexcept>

namespace gpufeed::formats {

std::string to_string(Layout layout) {
  return layout == Layout::nchw ? "nchw" : "nhwc";
}

Layout parse_layout(const std::string& text) {
  if (text == "nhwc" || text == "NHWC") return Layout::nhwc;
  if (text == "nchw" || text == "NCHW") return Layout::nchw;
  throw UsageError("unknown layout '" + text + "'; use nhwc or nchw");
}

std::string to_string(const SampleShape& shape) {
  return std::to_string(shape.height) + "x" + std::to_string(shape.width) + "x" +
         std::to_string(shape.channels) + " " + to_string(shape.layout);
}

}  // namespace gpufeed::formats
