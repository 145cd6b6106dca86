#pragma once
// Everything a reader takes from the file besides the images: labels, channel statistics,
// class names and the schema version. All of it is read once, at open.
#include <hdf5.h>

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/storage/byte_source.hpp"

namespace gpufeed::formats::detail {

/// Throws FormatError "<declared> (<bytes> bytes), more than a file of F bytes can hold ..."
/// when `bytes` of data, as `declared` describes them ("/images in x.h5 declares 9 samples of
/// 12 bytes"), cannot come from `file`: more than schema::kMaxBytesPerFileByte per byte of it.
void check_declared_bytes(hid_t file, std::uint64_t bytes, const std::string& declared);

/// The first `num_samples` labels of dataset `name` (integers, [n] or [n, 1]) as int64; -1
/// for every sample when `name` is empty. Throws FormatError naming `path` when the dataset
/// is missing, not integers, or shorter than the images.
std::vector<std::int64_t> read_labels(hid_t file, const std::string& path, const std::string& name,
                                      const std::string& images_name, std::uint64_t num_samples);

/// /meta/mean and /meta/std when both exist as `channels` numbers; nullopt otherwise.
std::optional<ChannelStats> read_channel_stats(hid_t file, std::uint32_t channels);

/// /meta/class_names (fixed or variable-length strings); empty when absent. `source`: the
/// file's bytes, where each variable-length string's declared length is checked before HDF5
/// allocates it.
std::vector<std::string> read_class_names(hid_t file, const std::string& path,
                                          const storage::ByteSource& source);

/// Writes /meta/class_names as variable-length UTF-8 strings.
/// /meta/source_index: for each stored sample, its position in the source it was packed from
/// (writers store a shuffled order and say where each sample came from).
void write_source_index(hid_t file, std::span<const std::uint64_t> index,
                        const std::string& context);
void write_class_names(hid_t file, const std::vector<std::string>& names,
                       const std::string& context);

/// Writes /meta/mean and /meta/std (float32, one per channel, 0-255 scale).
void write_channel_stats(hid_t file, const ChannelStats& stats, const std::string& context);

/// The root attribute gpufeed.schema, or 0 when the file has none.
int read_schema_version(hid_t file);

}  // namespace gpufeed::formats::detail
