#include "h5.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "gpufeed/formats/error.hpp"
#include "gpufeed/storage/byte_source.hpp"

namespace gpufeed::formats::h5 {

void IdTraits::destroy(hid_t id) noexcept {
  H5Idec_ref(id);
}

void silence_errors() noexcept {
  thread_local bool silenced = false;
  if (silenced) return;
  static std::once_flag first;
  std::call_once(first, [] { H5dont_atexit(); });  // fails (harmless) if HDF5 is initialized
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  silenced = true;
}

namespace {

// HDF5's file driver describes a failed read or write as "... errno = 28, error message = ...".
int os_error_in(const char* text) {
  if (text == nullptr) return 0;
  const char* at = std::strstr(text, "errno = ");
  if (at == nullptr) return 0;
  const long value = std::strtol(at + 8, nullptr, 10);
  return value > 0 && value < 4096 ? static_cast<int>(value) : 0;
}

// ... and names the file as "filename = '<name>'".
std::string os_file_in(const char* text) {
  if (text == nullptr) return {};
  const char* at = std::strstr(text, "filename = '");
  if (at == nullptr) return {};
  at += 12;
  const char* end = std::strchr(at, '\'');
  return end == nullptr ? std::string() : std::string(at, end);
}

// Copies the first (most specific) entry only: the outer ones repeat it in vaguer words. The
// errno of a failed system call is taken from whichever entry carries it.
herr_t keep_innermost(unsigned n, const H5E_error2_t* entry, void* data) {
  auto* out = static_cast<StackError*>(data);
  if (out->os_error == 0) {
    out->os_error = os_error_in(entry->desc);
    if (out->os_error != 0) out->os_file = os_file_in(entry->desc);
  }
  if (n != 0) return 0;
  out->minor = entry->min_num;
  if (entry->desc != nullptr) out->text = entry->desc;
  return 0;
}

std::string minor_message(hid_t minor) {
  char text[160] = {};
  H5E_type_t kind{};
  if (H5Eget_msg(minor, &kind, text, sizeof text) < 0) return {};
  return text;
}

}  // namespace

StackError take_error_stack() {
  StackError error;
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, keep_innermost, &error);
  if (error.text.empty() && error.minor >= 0) error.text = minor_message(error.minor);
  // HDF5 puts timestamps with line breaks into some descriptions; messages stay one line.
  std::replace(error.text.begin(), error.text.end(), '\n', ' ');
  H5Eclear2(H5E_DEFAULT);
  error.driver_error = take_driver_error();
  return error;
}

std::string error_stack_message() {
  StackError error = take_error_stack();
  return error.text.empty() ? "unknown HDF5 error" : error.text;
}

void fail_os(std::string_view context, const StackError& error) {
  std::string message(context);
  if (!error.os_file.empty() && message.find(error.os_file) == std::string::npos) {
    message += " in " + error.os_file;
  }
  throw IoError(message + ": " + std::strerror(error.os_error) +
                storage::errno_advice(error.os_error));
}

namespace {

// The object-storage driver's own error, with `context` in front where it is a failed request.
[[noreturn]] void fail_driver(std::string_view context, const StackError& error) {
  try {
    std::rethrow_exception(error.driver_error);
  } catch (const IoError& e) {
    throw IoError(std::string(context) + ": " + e.what());
  }
}

}  // namespace

void fail(std::string_view context, std::string_view advice) {
  const StackError error = take_error_stack();
  if (error.driver_error) fail_driver(context, error);
  if (error.os_error != 0) fail_os(context, error);
  std::string message(context);
  message += ": ";
  message += error.text.empty() ? "unknown HDF5 error" : error.text;
  message += advice;
  throw FormatError(message);
}

Id check_id(hid_t id, std::string_view context) {
  if (id < 0) fail(context);
  return Id(id);
}

bool exists(hid_t file, const std::string& path) {
  std::string prefix;
  std::size_t pos = 0;
  while (pos < path.size()) {
    std::size_t next = std::min(path.find('/', pos), path.size());
    if (next > pos) {
      prefix += '/';
      prefix.append(path, pos, next - pos);
      if (H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) {
        // Absent, or a path through a non-group: "no". A read the disk failed is no answer.
        const StackError error = take_error_stack();
        if (error.os_error != 0) fail_os("cannot look up " + prefix, error);
        return false;
      }
    }
    pos = next + 1;
  }
  if (prefix.empty()) return false;
  // A soft link may point nowhere: the link exists but the object does not.
  const htri_t object = H5Oexists_by_name(file, prefix.c_str(), H5P_DEFAULT);
  if (object <= 0) {
    const StackError error = take_error_stack();
    if (error.os_error != 0) fail_os("cannot look up " + prefix, error);
  }
  return object > 0;
}

Id open_dataset_if_exists(hid_t file, const std::string& path, hid_t dapl) {
  if (!exists(file, path)) return Id();
  H5O_info_t info{};
  check(H5Oget_info_by_name2(file, path.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT),
        "cannot inspect " + path);
  if (info.type != H5O_TYPE_DATASET) return Id();
  return check_id(H5Dopen2(file, path.c_str(), dapl), "cannot open dataset " + path);
}

std::vector<std::uint64_t> dims(hid_t dataset) {
  Id space = check_id(H5Dget_space(dataset), "cannot read a dataset's shape");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) fail("cannot read a dataset's shape");
  std::vector<hsize_t> raw(static_cast<std::size_t>(rank));
  if (rank > 0 && H5Sget_simple_extent_dims(space.get(), raw.data(), nullptr) < 0) {
    fail("cannot read a dataset's shape");
  }
  return {raw.begin(), raw.end()};
}

std::string shape_text(const std::vector<std::uint64_t>& dims) {
  std::string text = "(";
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (i > 0) text += ", ";
    text += std::to_string(dims[i]);
  }
  return text + ")";
}

std::string type_name(hid_t type) {
  const std::string bits = std::to_string(H5Tget_size(type) * 8);
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      return (H5Tget_sign(type) == H5T_SGN_NONE ? "uint" : "int") + bits;
    case H5T_FLOAT:
      return "float" + bits;
    case H5T_STRING:
      return "string";
    case H5T_COMPOUND:
      return "compound";
    case H5T_ENUM:
      return "enum";
    case H5T_ARRAY:
      return "array";
    case H5T_VLEN:
      return "variable-length";
    case H5T_OPAQUE:
      return "opaque";
    default:
      return "an unsupported type";
  }
}

bool is_uint8(hid_t type) {
  return H5Tget_class(type) == H5T_INTEGER && H5Tget_size(type) == 1 &&
         H5Tget_sign(type) == H5T_SGN_NONE;
}

bool is_integer(hid_t type) {
  const std::size_t size = H5Tget_size(type);
  return H5Tget_class(type) == H5T_INTEGER && size >= 1 && size <= 8;
}

bool is_number(hid_t type) {
  const std::size_t size = H5Tget_size(type);
  return (H5Tget_class(type) == H5T_INTEGER || H5Tget_class(type) == H5T_FLOAT) && size >= 1 &&
         size <= 8;
}

void read_prefix(hid_t dataset, hid_t mem_type, std::uint64_t count, void* out,
                 std::string_view context) {
  if (count == 0) return;
  // The arrays hold two entries so that [n, 1] datasets select their only column too.
  Id file_space = check_id(H5Dget_space(dataset), context);
  const hsize_t start[2] = {0, 0};
  const hsize_t counts[2] = {count, 1};
  check(H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, start, nullptr, counts, nullptr),
        context);
  Id mem_space = check_id(H5Screate_simple(1, counts, nullptr), context);
  check(H5Dread(dataset, mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, out), context);
}

void write_vector(hid_t loc, const char* name, hid_t file_type, hid_t mem_type, const void* data,
                  std::uint64_t count, std::string_view context) {
  const hsize_t extent[1] = {count};
  Id space = check_id(H5Screate_simple(1, extent, nullptr), context);
  Id dataset =
      check_id(H5Dcreate2(loc, name, file_type, space.get(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT),
               context);
  if (count > 0) {
    check(H5Dwrite(dataset.get(), mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data), context);
  }
}

// Creating the file with open() first turns a missing directory or a permission problem into
// a plain "No such file or directory" instead of HDF5's long internal description.
Id create_file(const std::string& path) {
  UniqueFd probe(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
  if (!probe) {
    const bool known =
        !storage::errno_advice(errno).empty();  // a full disk, a read-only filesystem
    storage::throw_errno("cannot create " + path,
                         known ? "" : "; check that the output directory exists and is writable");
  }
  probe.reset();
  const Id access = check_id(H5Pcreate(H5P_FILE_ACCESS), "cannot create " + path);
  check(H5Pset_sieve_buf_size(access.get(), 0), "cannot create " + path);
  return check_id(H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, access.get()),
                  "cannot create " + path);
}

void discard_writes(hid_t file) noexcept {
  void* handle = nullptr;
  if (H5Fget_vfd_handle(file, H5P_DEFAULT, &handle) < 0 || handle == nullptr) {
    take_error_stack();
    return;
  }
  const int scratch = ::memfd_create("gpufeed-discarded", MFD_CLOEXEC);
  if (scratch < 0) return;
  ::dup2(scratch, *static_cast<int*>(handle));  // the sec2 driver's descriptor
  ::close(scratch);
}

Id open_file(const std::string& path, const std::shared_ptr<const storage::ByteSource>& source) {
  const Id access = source && source->remote() ? object_file_access(source) : Id();
  const hid_t id = H5Fopen(path.c_str(), H5F_ACC_RDONLY, access ? access.get() : H5P_DEFAULT);
  if (id >= 0) return Id(id);
  const StackError error = take_error_stack();
  if (error.driver_error) fail_driver("cannot open " + path, error);
  if (error.os_error != 0) fail_os("cannot open " + path, error);  // the file may be fine
  const std::string advice = "; check the path or re-create it with h5pack convert";
  if (error.minor == H5E_NOTHDF5) {
    throw FormatError("cannot open " + path + ": not an HDF5 file (" + error.text + ")" + advice);
  }
  if (error.minor == H5E_TRUNCATED) {
    throw FormatError(path + " is truncated (" + error.text +
                      "); copy it again or re-create it with h5pack convert");
  }
  throw FormatError("cannot open " + path + ": " + error.text + advice);
}

Id open_or_create_group(hid_t file, const char* name, std::string_view context) {
  if (exists(file, name)) return check_id(H5Gopen2(file, name, H5P_DEFAULT), context);
  return check_id(H5Gcreate2(file, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT), context);
}

void write_string_attribute(hid_t location, const char* name, const std::string& value,
                            std::string_view context) {
  Id type = check_id(H5Tcopy(H5T_C_S1), context);
  check(H5Tset_size(type.get(), value.size() + 1), context);
  Id space = check_id(H5Screate(H5S_SCALAR), context);
  Id attribute = check_id(
      H5Acreate2(location, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), context);
  check(H5Awrite(attribute.get(), type.get(), value.c_str()), context);
}

void write_int_attribute(hid_t location, const char* name, int value, std::string_view context) {
  Id space = check_id(H5Screate(H5S_SCALAR), context);
  Id attribute = check_id(
      H5Acreate2(location, name, H5T_STD_I32LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), context);
  check(H5Awrite(attribute.get(), H5T_NATIVE_INT, &value), context);
}

}  // namespace gpufeed::formats::h5
