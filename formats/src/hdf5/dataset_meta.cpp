#include "dataset_meta.hpp"

#include <cstring>

#include "gpufeed/base/little_endian.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "h5.hpp"

namespace gpufeed::formats::detail {

namespace {

// Far above any real label set; a larger count means a damaged file, not a wish to allocate.
constexpr std::uint64_t kMaxClassNames = 1u << 24;

void check_labels_shape(hid_t dataset, const std::string& where,
                        const std::vector<std::uint64_t>& dims) {
  h5::Id type = h5::check_id(H5Dget_type(dataset), "cannot inspect " + where);
  if (!h5::is_integer(type.get())) {
    throw FormatError(where + " is " + h5::type_name(type.get()) +
                      "; gpufeed reads integer labels (give the path of the labels dataset, or "
                      "none)");
  }
  if (dims.size() != 1 && !(dims.size() == 2 && dims[1] == 1)) {
    throw FormatError(where + " has shape " + h5::shape_text(dims) +
                      "; gpufeed reads one integer label per sample, [N] or [N,1]");
  }
}

std::optional<std::vector<float>> read_floats(hid_t file, const char* name, std::uint32_t count) {
  h5::Id dataset = h5::open_dataset_if_exists(file, name);
  if (!dataset) return std::nullopt;
  h5::Id type = h5::check_id(H5Dget_type(dataset.get()), std::string("cannot inspect ") + name);
  const std::vector<std::uint64_t> dims = h5::dims(dataset.get());
  if (!h5::is_number(type.get()) || dims.size() != 1 || dims[0] != count) return std::nullopt;
  std::vector<float> values(count);
  h5::read_prefix(dataset.get(), H5T_NATIVE_FLOAT, count, values.data(),
                  std::string("cannot read ") + name);
  return values;
}

/// HDF5 allocates the length a variable-length string's descriptor claims before it reads the
/// string (H5T__conv_vlen): a damaged length asks for gigabytes. Each descriptor in the file (a
/// 4-byte little-endian length, the global heap's address and an index) is read here first and
/// its length checked against the file's size. Throws FormatError naming `where`.
void check_string_lengths(hid_t file, hid_t dataset, std::size_t count,
                          const storage::ByteSource& source, const std::string& where) {
  const haddr_t offset = H5Dget_offset(dataset);
  if (offset == HADDR_UNDEF) {
    if (H5Dget_storage_size(dataset) == 0) return;  // never written: every string is empty
    throw FormatError(where +
                      " holds variable-length strings in a layout gpufeed does not read "
                      "(not contiguous); re-create the file with h5pack convert");
  }
  h5::Id plist = h5::check_id(H5Fget_create_plist(file), "cannot inspect " + where);
  std::size_t address_bytes = 0, length_bytes = 0;
  h5::check(H5Pget_sizes(plist.get(), &address_bytes, &length_bytes), "cannot inspect " + where);
  const std::uint64_t descriptor = 4 + address_bytes + 4;
  const std::uint64_t file_bytes = source.size();
  if (offset > file_bytes || count > (file_bytes - offset) / descriptor) {
    throw FormatError(where +
                      " lies beyond the end of the file; the file is damaged or was not "
                      "written completely: re-create it with h5pack convert");
  }
  std::vector<std::uint8_t> raw(count * descriptor);
  storage::read_metadata(source, raw, offset);
  for (std::size_t i = 0; i < count; ++i) {
    const std::uint64_t length = load_le32(raw.data() + i * descriptor);
    if (length > file_bytes) {
      throw FormatError(where + ": name " + std::to_string(i) + " declares " +
                        std::to_string(length) + " bytes, more than the file's " +
                        std::to_string(file_bytes) +
                        "; the file is damaged: re-create it with h5pack convert");
    }
  }
}

std::vector<std::string> read_variable_strings(hid_t dataset, hid_t type, std::size_t count,
                                               const std::string& context) {
  h5::Id memory_type = h5::check_id(H5Tcopy(H5T_C_S1), context);
  h5::check(H5Tset_size(memory_type.get(), H5T_VARIABLE), context);
  h5::check(H5Tset_cset(memory_type.get(), H5Tget_cset(type)), context);
  std::vector<char*> pointers(count, nullptr);
  h5::check(H5Dread(dataset, memory_type.get(), H5S_ALL, H5S_ALL, H5P_DEFAULT, pointers.data()),
            context);
  std::vector<std::string> names;
  names.reserve(count);
  for (const char* text : pointers) names.emplace_back(text != nullptr ? text : "");
  h5::Id space = h5::check_id(H5Dget_space(dataset), context);
  H5Dvlen_reclaim(memory_type.get(), space.get(), H5P_DEFAULT, pointers.data());
  return names;
}

std::vector<std::string> read_fixed_strings(hid_t dataset, hid_t type, std::size_t count,
                                            const std::string& context) {
  const std::size_t size = H5Tget_size(type);
  std::vector<char> buffer(count * size);
  h5::check(H5Dread(dataset, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buffer.data()), context);
  const bool space_padded = H5Tget_strpad(type) == H5T_STR_SPACEPAD;
  std::vector<std::string> names;
  names.reserve(count);
  for (std::size_t i = 0; i < count; ++i) {
    const char* text = buffer.data() + i * size;
    std::string name(text, strnlen(text, size));
    if (space_padded) name.erase(name.find_last_not_of(' ') + 1);
    names.push_back(std::move(name));
  }
  return names;
}

}  // namespace

void check_declared_bytes(hid_t file, std::uint64_t bytes, const std::string& declared) {
  hsize_t file_bytes = 0;
  h5::check(H5Fget_filesize(file, &file_bytes), "cannot read the size of the file");
  if (bytes / schema::kMaxBytesPerFileByte <= file_bytes) return;
  throw FormatError(declared + " (" + std::to_string(bytes) + " bytes), more than a file of " +
                    std::to_string(file_bytes) +
                    " bytes can hold; the file is damaged or was not written completely: "
                    "re-create it with h5pack convert");
}

std::vector<std::int64_t> read_labels(hid_t file, const std::string& path, const std::string& name,
                                      const std::string& images_name, std::uint64_t num_samples) {
  if (name.empty()) return std::vector<std::int64_t>(num_samples, -1);
  h5::Id dataset = h5::open_dataset_if_exists(file, name);
  if (!dataset) {
    throw FormatError(path + " has no dataset " + name +
                      "; give the path of the labels dataset, or none");
  }
  const std::string where = "labels " + name + " in " + path;
  const std::vector<std::uint64_t> dims = h5::dims(dataset.get());
  check_labels_shape(dataset.get(), where, dims);
  if (dims[0] < num_samples) {
    throw FormatError("labels " + name + " has " + std::to_string(dims[0]) + " entries but " +
                      images_name + " has " + std::to_string(num_samples) + " samples in " + path +
                      "; give the path of the right labels dataset or re-create the file");
  }
  std::vector<std::int64_t> labels(num_samples);
  h5::read_prefix(dataset.get(), H5T_NATIVE_INT64, num_samples, labels.data(),
                  "cannot read " + where);
  return labels;
}

std::optional<ChannelStats> read_channel_stats(hid_t file, std::uint32_t channels) {
  std::optional<std::vector<float>> mean = read_floats(file, schema::kMean, channels);
  std::optional<std::vector<float>> deviation = read_floats(file, schema::kStd, channels);
  if (!mean || !deviation) return std::nullopt;
  return ChannelStats{std::move(*mean), std::move(*deviation)};
}

std::vector<std::string> read_class_names(hid_t file, const std::string& path,
                                          const storage::ByteSource& source) {
  h5::Id dataset = h5::open_dataset_if_exists(file, schema::kClassNames);
  if (!dataset) return {};
  const std::string where = std::string(schema::kClassNames) + " in " + path;
  h5::Id type = h5::check_id(H5Dget_type(dataset.get()), "cannot inspect " + where);
  const std::vector<std::uint64_t> dims = h5::dims(dataset.get());
  if (H5Tget_class(type.get()) != H5T_STRING || dims.size() != 1) {
    throw FormatError(where + " is " + h5::type_name(type.get()) + " " + h5::shape_text(dims) +
                      "; expected a list of strings");
  }
  if (dims[0] > kMaxClassNames) {
    throw FormatError(where + " declares " + std::to_string(dims[0]) +
                      " class names; the file is damaged");
  }
  check_declared_bytes(file, dims[0] * H5Tget_size(type.get()),
                       where + " declares " + std::to_string(dims[0]) + " names of " +
                           std::to_string(H5Tget_size(type.get())) + " bytes");
  const std::string context = "cannot read " + where;
  if (H5Tis_variable_str(type.get()) > 0) {
    check_string_lengths(file, dataset.get(), dims[0], source, where);
    return read_variable_strings(dataset.get(), type.get(), dims[0], context);
  }
  return read_fixed_strings(dataset.get(), type.get(), dims[0], context);
}

void write_class_names(hid_t file, const std::vector<std::string>& names,
                       const std::string& context) {
  h5::Id type = h5::check_id(H5Tcopy(H5T_C_S1), context);
  h5::check(H5Tset_size(type.get(), H5T_VARIABLE), context);
  h5::check(H5Tset_cset(type.get(), H5T_CSET_UTF8), context);
  std::vector<const char*> texts;
  texts.reserve(names.size());
  for (const std::string& name : names) texts.push_back(name.c_str());
  h5::Id meta = h5::open_or_create_group(file, "/meta", context);
  h5::write_vector(meta.get(), "class_names", type.get(), type.get(), texts.data(), texts.size(),
                   context);
}

void write_source_index(hid_t file, std::span<const std::uint64_t> index,
                        const std::string& context) {
  h5::Id meta = h5::open_or_create_group(file, "/meta", context);
  h5::write_vector(meta.get(), "source_index", H5T_STD_U64LE, H5T_NATIVE_UINT64, index.data(),
                   index.size(), context);
}

void write_channel_stats(hid_t file, const ChannelStats& stats, const std::string& context) {
  h5::Id meta = h5::open_or_create_group(file, "/meta", context);
  h5::write_vector(meta.get(), "mean", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, stats.mean.data(),
                   stats.mean.size(), context);
  h5::write_vector(meta.get(), "std", H5T_IEEE_F32LE, H5T_NATIVE_FLOAT, stats.stddev.data(),
                   stats.stddev.size(), context);
}

int read_schema_version(hid_t file) {
  const std::string context = std::string("cannot read the attribute ") + schema::kSchemaAttr;
  // No version (0) when it is absent or unreadable; a read the disk failed is an error.
  const auto none = [&] {
    const h5::StackError error = h5::take_error_stack();
    if (error.os_error != 0) h5::fail_os(context, error);
    return 0;
  };
  if (H5Aexists(file, schema::kSchemaAttr) <= 0) return none();
  h5::Id attribute = h5::check_id(H5Aopen(file, schema::kSchemaAttr, H5P_DEFAULT), context);
  h5::Id type = h5::check_id(H5Aget_type(attribute.get()), context);
  int version = 0;
  if (!h5::is_integer(type.get()) || H5Aread(attribute.get(), H5T_NATIVE_INT, &version) < 0) {
    return none();
  }
  return version;
}

}  // namespace gpufeed::formats::detail
