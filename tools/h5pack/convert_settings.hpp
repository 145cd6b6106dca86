#pragma once
// What h5pack convert was asked to do, checked, and the conversions that do it.
#include <cstdint>
#include <string>

#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/image_work.hpp"
#include "gpufeed/formats/pack_file.hpp"
#include "h5pack/bad_files.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/compression.hpp"
#include "h5pack/image_folder.hpp"

namespace gpufeed::tools::h5pack {

using formats::ChannelSums;
using formats::ImageResult;
using formats::ImageWorker;
using formats::JpegSettings;
using formats::RawSettings;

struct ConvertSettings {
  std::string output;
  unsigned workers = 0;  ///< 0: all cores
  bool skip_bad = false;
  JpegSettings jpeg;        ///< --store jpeg
  RawSettings raw;          ///< --store raw of an image folder
  Compression compression;  ///< --store raw
  std::uint64_t chunk = 0;  ///< --store raw: samples per chunk, 0: about 1 MiB
};

/// The settings the convert options ask for; throws UsageError for a malformed --size or
/// --compression. Opens no file.
ConvertSettings convert_settings(const ConvertOptions& options);

/// An image folder to the jpeg layout: every file decoded once (validation and statistics),
/// its bytes kept or re-encoded. Prints the summary; returns the exit code.
int convert_folder_to_jpeg(const ImageFolder& folder, const ConvertSettings& settings);
/// An image folder to the raw layout at settings.raw's size.
int convert_folder_to_raw(const ImageFolder& folder, const ConvertSettings& settings);
/// An array source (npy, synthetic, cifar10, mnist) to the jpeg layout: every image encoded.
int convert_array_to_jpeg(const formats::PackInput& input, const ConvertSettings& settings);
/// An array source to the raw layout.
int convert_array_to_raw(const formats::PackInput& input, const ConvertSettings& settings);

/// --shard-size / --part (shard_plan.hpp): this part's shards of the folder or the array
/// source (already in the stored order), each by the converter above.
int convert_folder_shards(const ImageFolder& folder, const ConvertSettings& settings,
                          const ConvertOptions& o, const std::string& store);
int convert_array_shards(const formats::PackInput& input, const ConvertSettings& settings,
                         const ConvertOptions& o, const std::string& store);

/// pack_file() with the settings' chunking, compression and workers, and a progress bar.
formats::PackResult pack_raw(const formats::PackInput& input, const ConvertSettings& settings);

}  // namespace gpufeed::tools::h5pack
