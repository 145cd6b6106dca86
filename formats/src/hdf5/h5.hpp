#pragma once
// Private HDF5 helpers: owned ids, quiet per-thread error handling, and HDF5's error stack
// turned into one short line a user can read.
#include <hdf5.h>

#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpufeed/base/unique_handle.hpp"

namespace gpufeed::storage {
class ByteSource;
}

namespace gpufeed::formats::h5 {

/// Any HDF5 id (file, dataset, dataspace, datatype, property list, group, attribute).
/// H5Idec_ref closes each kind correctly, so one traits type serves all of them.
struct IdTraits {
  using handle_type = hid_t;
  static constexpr hid_t null() noexcept { return H5I_INVALID_HID; }
  static void destroy(hid_t id) noexcept;
};
using Id = UniqueHandle<IdTraits>;

/// Turns off HDF5's automatic printing of error stacks for the calling thread. The
/// thread-safe build keeps that setting per thread, so every thread that calls HDF5 through
/// this module must call this first; after the first call it costs one thread_local test.
/// The first call in the process also turns off HDF5's clean-up at exit when HDF5 is not
/// initialized yet: HDF5 1.10 crashes there on a file whose close failed (a full disk), and
/// this module closes every file it opens itself.
void silence_errors() noexcept;

/// The most specific entry of the calling thread's HDF5 error stack.
struct StackError {
  hid_t minor = H5I_INVALID_HID;  ///< e.g. H5E_NOTHDF5, H5E_TRUNCATED; invalid when empty
  std::string text;               ///< its description, on one line
  /// The errno of a failed read or write of the file (HDF5's file driver records it in its
  /// description); 0 when the stack holds none.
  int os_error = 0;
  std::string os_file;  ///< the file that read or write was on, as HDF5 names it
  /// What failed inside gpufeed's driver for object storage (a GET that failed after its
  /// retries): the real reason, which HDF5's stack only calls a read error.
  std::exception_ptr driver_error;
};

/// Reads the calling thread's error stack and clears it.
StackError take_error_stack();
/// take_error_stack().text, or "unknown HDF5 error" when the stack was empty.
std::string error_stack_message();

/// Throws FormatError("<context>: <error stack message><advice>"), or, when the stack holds a
/// failed read or write of the file (a full disk, an I/O error), IoError("<context>:
/// <strerror><errno_advice>"): the file itself is not at fault then.
[[noreturn]] void fail(std::string_view context, std::string_view advice = {});
/// Throws IoError("<context> in <file>: <strerror><errno_advice>") for a stack that holds a
/// failed read or write (error.os_error != 0); the file is named unless the context does.
[[noreturn]] void fail_os(std::string_view context, const StackError& error);
/// Owns `id`, or throws via fail(context) when it is negative.
Id check_id(hid_t id, std::string_view context);
/// Throws via fail(context) when `status` is negative.
inline void check(herr_t status, std::string_view context) {
  if (status < 0) fail(context);
}

/// True when `path` (absolute, e.g. "/meta/mean") names an object in `file`. Missing
/// intermediate groups are "no", not an error.
bool exists(hid_t file, const std::string& path);
/// Opens the dataset at `path` (with the access properties `dapl`), or returns an empty Id when
/// there is none.
Id open_dataset_if_exists(hid_t file, const std::string& path, hid_t dapl = H5P_DEFAULT);

/// The dataset's current dimensions (its rank is the vector's size).
std::vector<std::uint64_t> dims(hid_t dataset);
/// "(50, 3, 18, 14)", for messages.
std::string shape_text(const std::vector<std::uint64_t>& dims);
/// "uint8", "float32", "string", ... for messages.
std::string type_name(hid_t type);
/// True for an unsigned 1-byte integer type.
bool is_uint8(hid_t type);
/// True for an integer type of 1 to 8 bytes, what labels, offsets and tables are stored as. A
/// wider one is damage, and HDF5 would size its conversion buffers from it.
bool is_integer(hid_t type);
/// True for an integer or floating-point type of 1 to 8 bytes.
bool is_number(hid_t type);

/// Reads the first `count` elements of a 1-D (or [n, 1]) dataset into `out`, converted to
/// `mem_type`; `out` must hold `count` elements of that type.
void read_prefix(hid_t dataset, hid_t mem_type, std::uint64_t count, void* out,
                 std::string_view context);

/// Writes a 1-D dataset of `count` elements of `mem_type` stored as `file_type`.
void write_vector(hid_t loc, const char* name, hid_t file_type, hid_t mem_type, const void* data,
                  std::uint64_t count, std::string_view context);

/// Creates (truncates) an HDF5 file; a missing directory or a permission problem reads as the
/// operating system's reason. Throws IoError or FormatError naming `path`. Raw data is written
/// when H5Dwrite is called (no sieve buffer), so a failing disk fails that call, not a close.
Id create_file(const std::string& path);

/// For a file being written that will be deleted: the writes HDF5 still makes to it (closing
/// flushes its caches) go to an anonymous in-memory file instead, and the disk space of the real
/// file is freed at once, even when HDF5 then fails to close it (after a failed flush HDF5 1.10
/// cannot close a file at all). Call before closing its ids.
void discard_writes(hid_t file) noexcept;
/// Opens an HDF5 file read-only; throws FormatError that says whether it is not HDF5 at all,
/// truncated, or unreadable for another reason, and what to do. A remote `source` (the object
/// at `path`) is read through gpufeed's driver for object storage.
Id open_file(const std::string& path,
             const std::shared_ptr<const storage::ByteSource>& source = nullptr);

/// File-access properties that read `source` through gpufeed's driver for object storage.
Id object_file_access(std::shared_ptr<const storage::ByteSource> source);
/// The exception the driver met in the calling thread's last failed read, taken (cleared).
std::exception_ptr take_driver_error() noexcept;

/// Opens group `name` (absolute), creating it when it does not exist.
Id open_or_create_group(hid_t file, const char* name, std::string_view context);
/// Writes a scalar attribute on `location`: a fixed-length, NUL-terminated ASCII string.
void write_string_attribute(hid_t location, const char* name, const std::string& value,
                            std::string_view context);
/// Writes a scalar int32 attribute on `location`.
void write_int_attribute(hid_t location, const char* name, int value, std::string_view context);

}  // namespace gpufeed::formats::h5
