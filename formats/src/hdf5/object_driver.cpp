// An HDF5 virtual file driver over a ByteSource: how HDF5 reaches the metadata of a file kept in
// object storage. Debian's HDF5 1.10 has the ROS3 driver, but it sends no session token, makes
// one synchronous request per read and retries nothing; this driver reads through the project's
// own client (credentials chain, retries, If-Match) and its metadata cache, so opening a file
// costs a HEAD and two GETs sent together (the first and the last MiB, where HDF5 and h5pack put
// the metadata and the small datasets). Read-only.
#include <hdf5.h>

#include <cstring>
#include <memory>
#include <mutex>

#include "gpufeed/storage/byte_source.hpp"
#include "h5.hpp"

namespace gpufeed::formats::h5 {

namespace {

thread_local std::exception_ptr pending_driver_error;

struct FileAccess {
  std::shared_ptr<const storage::ByteSource> source;
};

struct ObjectFile {
  H5FD_t base;  // HDF5's part; must come first
  std::shared_ptr<const storage::ByteSource> source;
  haddr_t eoa = 0;
};

ObjectFile* object_file(H5FD_t* file) {
  return reinterpret_cast<ObjectFile*>(file);
}
const ObjectFile* object_file(const H5FD_t* file) {
  return reinterpret_cast<const ObjectFile*>(file);
}

void* fapl_get(H5FD_t* file) {
  return new FileAccess{object_file(file)->source};
}
void* fapl_copy(const void* access) {
  return new FileAccess(*static_cast<const FileAccess*>(access));
}
herr_t fapl_free(void* access) {
  delete static_cast<FileAccess*>(access);
  return 0;
}

H5FD_t* open(const char* /*name*/, unsigned flags, hid_t fapl, haddr_t /*maxaddr*/) {
  const auto* access = static_cast<const FileAccess*>(H5Pget_driver_info(fapl));
  if ((flags & (H5F_ACC_RDWR | H5F_ACC_CREAT | H5F_ACC_TRUNC)) != 0 || access == nullptr ||
      !access->source) {
    return nullptr;
  }
  auto* file = new ObjectFile{};
  file->source = access->source;
  return &file->base;
}

herr_t close(H5FD_t* file) {
  delete object_file(file);
  return 0;
}

int compare(const H5FD_t* a, const H5FD_t* b) {
  const std::string& x = object_file(a)->source->name();
  const std::string& y = object_file(b)->source->name();
  return x < y ? -1 : (y < x ? 1 : 0);
}

herr_t query(const H5FD_t* /*file*/, unsigned long* flags) {
  if (flags != nullptr) *flags = H5FD_FEAT_DATA_SIEVE;
  return 0;
}

haddr_t get_eoa(const H5FD_t* file, H5FD_mem_t /*type*/) {
  return object_file(file)->eoa;
}
herr_t set_eoa(H5FD_t* file, H5FD_mem_t /*type*/, haddr_t address) {
  object_file(file)->eoa = address;
  return 0;
}
haddr_t get_eof(const H5FD_t* file, H5FD_mem_t /*type*/) {
  return object_file(file)->source->size();
}
herr_t get_handle(H5FD_t* file, hid_t /*fapl*/, void** handle) {
  *handle = file;
  return 0;
}

herr_t read(H5FD_t* file, H5FD_mem_t /*type*/, hid_t /*dxpl*/, haddr_t address, size_t size,
            void* buffer) {
  try {
    storage::read_metadata(*object_file(file)->source, {static_cast<std::uint8_t*>(buffer), size},
                           address);
    return 0;
  } catch (...) {
    pending_driver_error = std::current_exception();
    return -1;
  }
}

herr_t write(H5FD_t* /*file*/, H5FD_mem_t /*type*/, hid_t /*dxpl*/, haddr_t /*address*/,
             size_t /*size*/, const void* /*buffer*/) {
  return -1;  // opened read-only
}

H5FD_class_t make_class() {
  H5FD_class_t c{};
  c.name = "gpufeed_object";
  c.maxaddr = (haddr_t{1} << 62) - 1;
  c.fc_degree = H5F_CLOSE_WEAK;
  c.fapl_size = sizeof(FileAccess);
  c.fapl_get = fapl_get;
  c.fapl_copy = fapl_copy;
  c.fapl_free = fapl_free;
  c.open = open;
  c.close = close;
  c.cmp = compare;
  c.query = query;
  c.get_eoa = get_eoa;
  c.set_eoa = set_eoa;
  c.get_eof = get_eof;
  c.get_handle = get_handle;
  c.read = read;
  c.write = write;
  for (auto& map : c.fl_map) map = H5FD_MEM_DEFAULT;
  return c;
}

hid_t driver_id() {
  static const H5FD_class_t kClass = make_class();
  static hid_t id = H5I_INVALID_HID;
  static std::once_flag once;
  std::call_once(once, [] { id = H5FDregister(&kClass); });
  if (id < 0) fail("cannot register gpufeed's HDF5 driver for object storage");
  return id;
}

}  // namespace

std::exception_ptr take_driver_error() noexcept {
  return std::exchange(pending_driver_error, nullptr);
}

Id object_file_access(std::shared_ptr<const storage::ByteSource> source) {
  const std::string context = "cannot open " + source->name();
  Id access = check_id(H5Pcreate(H5P_FILE_ACCESS), context);
  const FileAccess info{std::move(source)};
  check(H5Pset_driver(access.get(), driver_id(), &info), context);
  return access;
}

}  // namespace gpufeed::formats::h5
