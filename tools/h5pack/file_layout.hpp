#pragma once
// Which schema v1 layout a file holds, so that info and verify open it the right way.
#include <string>

namespace gpufeed::tools::h5pack {

enum class FileLayout { raw, jpeg };

/// jpeg when the file has /jpeg/bytes and no /images; raw otherwise (also when the file cannot
/// be opened: the raw reader then says why).
FileLayout file_layout(const std::string& path);

}  // namespace gpufeed::tools::h5pack
