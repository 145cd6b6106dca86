#pragma once
// h5pack convert --from webdataset: WebDataset tar shards (a directory, a glob or one .tar, local
// or in object storage) read once, in order, through libarchive. A sample is the members that
// share a name up to its first dot: its image (.jpg, .jpeg, .png, .webp) and its label (.cls,
// an integer as text). The images' bytes wait in an unlinked staging file beside the output
// (its size is the images'), so that the converter takes them in the stored order, as it takes
// an image folder's files, and stores them as they are.
#include <memory>
#include <string>

#include "h5pack/image_folder.hpp"

namespace gpufeed::tools::h5pack {

/// Reads every sample of the shards `source` names (directory: its *.tar, sorted; a glob; one
/// file or URL) into a staging file beside `output`. Throws FormatError naming the tar and the
/// sample for a member libarchive cannot read, a sample without an image or a label, or a label
/// that is not an integer; UsageError when no tar is found.
/// Each file of the folder is named "TAR: sample KEY" and lies in folder.staging.
ImageFolder read_webdataset(const std::string& source, const std::string& output);

}  // namespace gpufeed::tools::h5pack
