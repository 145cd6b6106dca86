// libFuzzer target: any bytes as a whole HDF5 file, opened the way the loader and h5pack open
// one: its layout probed, then the raw-layout reader (schema v1 files and users' own: the chunk
// index, direct-chunk, contiguous and hyperslab paths, NHWC and NCHW, with and without labels)
// or the jpeg-layout reader, and a few chunks or samples read. HDF5 opens files by name, so each
// input is written to a file of this process first. A one-line FormatError is the expected
// answer to a damaged file; anything else (a crash, a sanitizer report, a leak, a hang, an HDF5
// id left open, an allocation the file cannot back) is a bug.
#include <fcntl.h>
#include <hdf5.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/probe.hpp"
#include "stale_inputs.hpp"

namespace {

using namespace gpufeed::formats;
namespace fs = std::filesystem;

// Keeps each input fast: larger chunks and samples are opened and validated, not read.
constexpr std::uint64_t kMaxReadBytes = 16u << 20;

constexpr const char* kPrefix = "gpufeed-fuzz-hdf5-";

/// The file each input is written to: in /dev/shm when there is one, named by process so that
/// parallel jobs do not share it; removed when the fuzzer exits.
class InputFile {
 public:
  InputFile() {
    const char* tmp = std::getenv("TMPDIR");
    const fs::path dir = ::access("/dev/shm", W_OK) == 0 ? "/dev/shm"
                         : tmp != nullptr                ? tmp
                                                         : "/tmp";
    gpufeed::fuzz::remove_stale_inputs(dir, kPrefix);
    path_ = (dir / (kPrefix + std::to_string(::getpid()) + ".h5")).string();
  }
  ~InputFile() { ::unlink(path_.c_str()); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  const std::string& write(const std::uint8_t* data, std::size_t size) {
    const int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) fail("cannot create");
    for (std::size_t done = 0; done < size;) {
      const ssize_t n = ::write(fd, data + done, size - done);
      if (n <= 0) fail("cannot write");
      done += static_cast<std::size_t>(n);
    }
    ::close(fd);
    return path_;
  }

 private:
  [[noreturn]] void fail(const char* what) const {
    std::perror((std::string("fuzz_hdf5_reader: ") + what + " " + path_).c_str());
    std::abort();
  }
  std::string path_;
};

void read_raw(const std::string& path, const ReaderOptions& options) {
  const DatasetReader reader(path, options);
  if (reader.labels().size() != reader.num_samples() || reader.num_chunks() == 0 ||
      reader.samples_per_chunk() == 0) {
    std::abort();  // opened, but inconsistent
  }
  if (reader.chunk_buffer_bytes() > kMaxReadBytes) return;
  std::vector<std::uint8_t> buffer(reader.chunk_buffer_bytes());
  for (const std::uint64_t chunk : gpufeed::fuzz::picks(reader.num_chunks())) {
    reader.read_chunk(chunk, buffer);
  }
}

void read_jpeg(const std::string& path) {
  const JpegDatasetReader reader(path);
  if (reader.offsets().size() != reader.num_samples() + 1 ||
      reader.labels().size() != reader.num_samples()) {
    std::abort();
  }
  std::vector<std::uint8_t> bytes;
  for (const std::uint64_t sample : gpufeed::fuzz::picks(reader.num_samples())) {
    try {
      (void)reader.sample_format(sample);
      if (reader.sample_size(sample) > kMaxReadBytes) continue;
      reader.sample_bytes(sample, bytes);
      if (reader.has_checksums()) (void)reader.verify_checksum(sample, bytes);
    } catch (const FormatError&) {  // an empty sample: the others are still read
    }
  }
}

/// Runs `read`; a FormatError (IoError among them) must be one line a tool can print.
template <typename Read>
void expect_format_errors(const Read& read) {
  try {
    read();
  } catch (const FormatError& e) {
    const std::string_view message = e.what();
    if (message.empty() || message.find('\n') != std::string_view::npos) std::abort();
  }
}

}  // namespace

// HDF5 1.10.8 leaks what it was decoding when an object header or message is damaged (error
// paths of its metadata cache, H5Dopen, ...): HDF5's leaks, not the reader's. HDF5 is built
// without frame pointers, so such a leak's stack names only the library, and every leak inside
// it is left out. What the reader must release, the files, datasets, groups and attributes it
// opens, is counted after each input instead.
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libhdf5\n";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static InputFile file;
  const std::string& path = file.write(data, size);
  if (probe_layout(path) == FileLayout::jpeg) {
    expect_format_errors([&] { read_jpeg(path); });
  } else {
    expect_format_errors([&] { read_raw(path, ReaderOptions{}); });
    ReaderOptions other;  // a user's file: no labels, NCHW, HDF5's own chunk lookup
    other.labels = "";
    other.layout = Layout::nchw;
    other.use_index = false;
    expect_format_errors([&] { read_raw(path, other); });
  }
  // Every reader has closed what it opened (a file left open would also be reused by HDF5 for
  // the next input of the same name).
  if (H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_ALL) != 0) std::abort();
  return 0;
}
