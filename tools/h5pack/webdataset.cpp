#include "h5pack/webdataset.hpp"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <filesystem>
#include <optional>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/schema.hpp"
#include "gpufeed/formats/shard_list.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "gpufeed/storage/file_io.hpp"

namespace gpufeed::tools::h5pack {

namespace fs = std::filesystem;

namespace {

struct ArchiveTraits {
  using handle_type = archive*;
  static constexpr archive* null() noexcept { return nullptr; }
  static void destroy(archive* a) noexcept { archive_read_free(a); }
};
using UniqueArchive = UniqueHandle<ArchiveTraits>;

constexpr std::size_t kFeedBytes = std::size_t{8} << 20;
constexpr const char* kImageSuffixes[] = {"jpg", "jpeg", "png", "webp"};

/// libarchive's reads of one tar, from its ByteSource (pread, or ranged GETs of an object) in
/// blocks; an error is kept for the caller (a C callback must not throw).
struct Feed {
  std::shared_ptr<const storage::ByteSource> source;
  std::uint64_t at = 0;
  std::vector<std::uint8_t> block = std::vector<std::uint8_t>(kFeedBytes);
  std::exception_ptr error;
};

la_ssize_t feed(archive* a, void* data, const void** buffer) {
  Feed& f = *static_cast<Feed*>(data);
  const std::uint64_t n = std::min<std::uint64_t>(f.block.size(), f.source->size() - f.at);
  try {
    f.source->read({f.block.data(), static_cast<std::size_t>(n)}, f.at,
                   [&] { return "bytes " + std::to_string(f.at) + " of " + f.source->name(); });
  } catch (...) {
    f.error = std::current_exception();
    archive_set_error(a, EIO, "read failed");
    return ARCHIVE_FATAL;
  }
  f.at += n;
  *buffer = f.block.data();
  return static_cast<la_ssize_t>(n);
}

/// The tar files `source` names: a local directory's *.tar (sorted), a glob, or one file/URL.
std::vector<std::string> tar_files(const std::string& source) {
  std::error_code ec;
  if (!storage::is_object_url(source) && fs::is_directory(source, ec)) {
    std::vector<std::string> tars;
    for (const fs::directory_entry& e : fs::directory_iterator(source)) {
      if (e.is_regular_file() && e.path().extension() == ".tar") tars.push_back(e.path().string());
    }
    std::sort(tars.begin(), tars.end());
    if (tars.empty()) throw UsageError(source + " holds no .tar file");
    return tars;
  }
  std::vector<std::string> tars;
  for (const formats::ShardFile& f :
       formats::resolve_shards(std::vector<std::string>{source}).files) {
    tars.push_back(f.path);
  }
  return tars;
}

/// One sample being gathered: the members that share a key.
struct Sample {
  std::string key;
  std::optional<ImageFile> image;
  std::optional<std::int64_t> label;
};

class TarReader {
 public:
  TarReader(ImageFolder& folder, int staging) : folder_(folder), staging_(staging) {}

  void read(const std::string& tar) {
    Feed f;
    f.source = storage::open_source(tar);
    const UniqueArchive a(archive_read_new());
    archive_read_support_format_tar(a.get());
    archive_read_support_filter_all(a.get());
    if (archive_read_open(a.get(), &f, nullptr, feed, nullptr) != ARCHIVE_OK) fail(a.get(), f, tar);
    Sample sample;
    archive_entry* entry = nullptr;
    for (int rc; (rc = archive_read_next_header(a.get(), &entry)) != ARCHIVE_EOF;) {
      if (rc < ARCHIVE_WARN) fail(a.get(), f, tar);
      if (archive_entry_filetype(entry) != AE_IFREG) continue;
      const std::string name = archive_entry_pathname(entry);
      const std::size_t slash = name.rfind('/') + 1;  // 0 without a folder
      const std::size_t dot = name.find('.', slash);
      const std::string key = name.substr(0, dot);
      if (key != sample.key) finish(sample, tar);
      sample.key = key;
      const std::string suffix = dot == std::string::npos ? "" : lowercase(name.substr(dot + 1));
      const bool image = std::find(std::begin(kImageSuffixes), std::end(kImageSuffixes), suffix) !=
                         std::end(kImageSuffixes);
      if (!image && suffix != "cls") continue;  // .json, .txt, ...: not packed
      read_member(a.get(), f, tar, entry);
      if (image) {
        sample.image = stage(tar, key);
      } else {
        sample.label = parse_label(tar, key);
      }
    }
    finish(sample, tar);
  }

 private:
  static std::string lowercase(std::string text) {
    for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return text;
  }

  [[noreturn]] static void fail(archive* a, const Feed& f, const std::string& tar) {
    if (f.error) std::rethrow_exception(f.error);
    throw formats::FormatError("cannot read " + tar + ": " + archive_error_string(a) +
                               "; is it a tar file? copy it again");
  }

  void read_member(archive* a, const Feed& f, const std::string& tar, archive_entry* entry) {
    const la_int64_t size = archive_entry_size(entry);
    if (size < 0 || static_cast<std::uint64_t>(size) > formats::schema::kMaxSampleBytes) {
      throw formats::FormatError(tar + ": member " + archive_entry_pathname(entry) + " is " +
                                 std::to_string(size) + " bytes, more than a sample may hold");
    }
    member_.resize(static_cast<std::size_t>(size));
    for (std::size_t done = 0; done < member_.size();) {
      const la_ssize_t n = archive_read_data(a, member_.data() + done, member_.size() - done);
      if (n <= 0) fail(a, f, tar);
      done += static_cast<std::size_t>(n);
    }
  }

  ImageFile stage(const std::string& tar, const std::string& key) {
    ImageFile file;
    file.path = tar + ": sample " + key;
    file.offset = staged_;
    file.bytes = member_.size();
    storage::write_all(staging_, member_, "cannot stage the images of " + tar);
    staged_ += member_.size();
    return file;
  }

  std::int64_t parse_label(const std::string& tar, const std::string& key) const {
    std::string_view text(reinterpret_cast<const char*>(member_.data()), member_.size());
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
      text.remove_suffix(1);
    std::int64_t label = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), label);
    if (error != std::errc() || end != text.data() + text.size() || text.empty()) {
      throw formats::FormatError(tar + ": sample " + key + ": its .cls is not an integer ('" +
                                 std::string(text.substr(0, 20)) + "')");
    }
    return label;
  }

  void finish(Sample& sample, const std::string& tar) {
    if (sample.key.empty() || (!sample.image && !sample.label)) return;
    if (!sample.image) {
      throw formats::FormatError(tar + ": sample " + sample.key +
                                 " has no image (.jpg, .png, .webp)");
    }
    if (!sample.label) {
      throw formats::FormatError(tar + ": sample " + sample.key + " has no .cls label");
    }
    sample.image->label = *sample.label;
    sample.image->source = folder_.files.size();
    folder_.total_bytes += sample.image->bytes;
    folder_.files.push_back(std::move(*sample.image));
    sample = Sample{};
  }

  ImageFolder& folder_;
  int staging_;
  std::uint64_t staged_ = 0;
  std::vector<std::uint8_t> member_;
};

}  // namespace

ImageFolder read_webdataset(const std::string& source, const std::string& output) {
  const std::vector<std::string> tars = tar_files(source);
  // Unlinked at once: nothing remains of it after the process, however it ends.
  const std::string staging = output + ".tar.tmp." + std::to_string(::getpid());
  UniqueFd fd(::open(staging.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!fd) throw formats::IoError("cannot create " + staging + ": " + std::strerror(errno));
  ::unlink(staging.c_str());
  ImageFolder folder;
  folder.root = source;
  TarReader reader(folder, fd.get());
  for (const std::string& tar : tars) reader.read(tar);
  if (folder.files.empty()) throw formats::FormatError(source + " holds no sample with an image");
  folder.staging = std::make_shared<const UniqueFd>(std::move(fd));
  return folder;
}

}  // namespace gpufeed::tools::h5pack
