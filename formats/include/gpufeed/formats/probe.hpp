#pragma once
// Which of the schema's layouts a file uses, before choosing a reader.
#include <string>

namespace gpufeed::formats {

enum class FileLayout { raw, jpeg };

/// The layout of `path`: its `gpufeed.layout` attribute when h5pack wrote it; otherwise jpeg when
/// the file has /jpeg/bytes and no `images` dataset, raw for everything else (users' files).
/// A file that cannot be opened reads as raw, so the raw reader reports what is wrong with it.
FileLayout probe_layout(const std::string& path, const std::string& images = "/images");

}  // namespace gpufeed::formats
