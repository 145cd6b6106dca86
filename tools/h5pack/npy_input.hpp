#pragma once
// A uint8 .npy array [N,H,W,C] (or [N,H,W], one channel) as a source for pack_file().
#include <string>

#include "gpufeed/formats/pack_file.hpp"

namespace gpufeed::tools::h5pack {

/// Maps `images_path` and reads labels from `labels_path` (an integer .npy of length N; empty:
/// every label is 0). Throws formats::FormatError naming the file for a wrong dtype, shape or
/// label count.
formats::PackInput npy_input(const std::string& images_path, const std::string& labels_path);

}  // namespace gpufeed::tools::h5pack
