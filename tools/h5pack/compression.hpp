#pragma once
// --compression none|gzip[:L]|lz4
#include <string>

namespace gpufeed::tools::h5pack {

struct Compression {
  int gzip_level = 0;  ///< 0: none
  [[nodiscard]] std::string to_string() const;
};

/// Parses a --compression value. "gzip" means level 4. Throws gpufeed::UsageError for lz4
/// (needs a filter plugin) and for anything else it does not know.
Compression parse_compression(const std::string& text);

}  // namespace gpufeed::tools::h5pack
