// h5pack convert SRC OUT.h5: image folders, CIFAR-10 and MNIST files, npy arrays and synthetic
// data to a schema v1 file, in the raw or the jpeg layout.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>

#include "common/cli.hpp"
#include "common/progress.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/pack_file.hpp"
#include "gpufeed/formats/synthetic.hpp"
#include "gpufeed/storage/object_store.hpp"
#include "gpufeed/storage/pending_files.hpp"
#include "h5pack/array_sources.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/convert_report.hpp"
#include "h5pack/convert_settings.hpp"
#include "h5pack/npy_input.hpp"
#include "h5pack/shard_plan.hpp"
#include "h5pack/webdataset.hpp"

namespace gpufeed::tools::h5pack {

namespace {

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

std::string detect_kind(const std::string& source) {
  if (ends_with(source, ".npy")) return "npy";
  if (ends_with(source, ".tar")) return "webdataset";
  if (formats::looks_like_synthetic_spec(source)) return "synthetic";
  std::error_code ec;
  if (std::filesystem::exists(source, ec)) {
    if (looks_like_cifar10(source)) return "cifar10";
    if (looks_like_mnist(source)) return "mnist";
    if (looks_like_image_folder(source)) return "imagefolder";
  }
  throw UsageError("cannot tell what '" + source +
                   "' is; give an image folder, CIFAR-10 .bin batches, MNIST idx files, a .npy "
                   "file or a synthetic spec N:HxWxC, or name it with --from");
}

std::string source_kind(const ConvertOptions& o) {
  return o.from == "auto" ? detect_kind(o.source) : o.from;
}

/// --store auto: jpeg for an image folder (raw when --size is given) and tar shards, raw for
/// arrays.
std::string store_of(const ConvertOptions& o, const std::string& kind) {
  if (o.store != "auto") return o.store;
  if (kind == "webdataset") return "jpeg";
  return kind == "imagefolder" && o.size.empty() ? "jpeg" : "raw";
}

void check_store_options(const ConvertOptions& o, const std::string& kind,
                         const std::string& store) {
  if (store == "jpeg") {
    if (!o.size.empty()) {
      throw UsageError("--size applies to --store raw; use --max-side N to shrink JPEG images");
    }
    if (o.compression != "none" || o.chunk != 0) {
      throw UsageError(
          "--compression and --chunk apply to --store raw; the jpeg layout stores "
          "the encoded bytes as they are");
    }
    return;
  }
  if (o.quality != 0 || o.max_side != 0) {
    throw UsageError("--quality and --max-side apply to --store jpeg");
  }
  if (kind == "webdataset") {
    throw UsageError(
        "--from webdataset stores the images as they are: use --store jpeg (the "
        "loader crops and resizes them)");
  }
  if (kind == "imagefolder" && o.size.empty()) {
    throw UsageError("--store raw of an image folder needs --size HxW: its images differ in size");
  }
  if (kind != "imagefolder" && kind != "webdataset" && !o.size.empty()) {
    throw UsageError("--size applies to image folders; " + kind + " images keep their size");
  }
}

formats::PackInput open_array(const ConvertOptions& o, const std::string& kind) {
  if (kind != "npy" && !o.labels.empty()) {
    throw UsageError("--labels applies to --from npy only; " + kind + " data has its own labels");
  }
  if (kind == "npy") {
    formats::PackInput input = npy_input(o.source, o.labels);
    if (o.labels.empty()) {
      print_note(kProgram, "no --labels given: every label of " + o.output + " is 0");
    }
    return input;
  }
  if (kind == "cifar10") return cifar10_input(o.source, o.split);
  if (kind == "mnist") return mnist_input(o.source, o.split);
  if (o.classes == 0) throw UsageError("--classes must be at least 1");
  return formats::synthetic_input(formats::parse_synthetic_spec(o.source), o.seed, o.classes);
}

/// The folder's files in the stored order (a permutation drawn from `seed`), each with its
/// position in the sorted listing as its source.
ImageFolder in_stored_order(ImageFolder folder, std::uint64_t seed) {
  const std::vector<std::uint64_t> order = formats::stored_order(folder.files.size(), seed);
  std::vector<ImageFile> files;
  files.reserve(order.size());
  for (const std::uint64_t i : order) files.push_back(std::move(folder.files[i]));
  folder.files = std::move(files);
  return folder;
}

/// The local file an s3:// output is written to before its upload, removed in the end.
class UploadStaging {
 public:
  explicit UploadStaging(const std::string& url) {
    const std::string name = std::filesystem::path(url).filename().string();
    path_ = (std::filesystem::temp_directory_path() /
             ("h5pack-upload-" + std::to_string(::getpid()) + "-" + name))
                .string();
  }
  ~UploadStaging() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  UploadStaging(const UploadStaging&) = delete;
  UploadStaging& operator=(const UploadStaging&) = delete;
  [[nodiscard]] const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// OUT = s3://bucket/key: the file is written locally (in TMPDIR), then uploaded (one PUT, or a
/// multipart upload: nothing appears at the key unless the whole file arrived).
int convert_and_upload(const ConvertOptions& o) {
  storage::check_object_url(o.output);
  const UploadStaging staging(o.output);
  ConvertOptions local = o;
  local.output = staging.path();
  if (const int status = run_convert(local); status != 0) return status;
  std::error_code ec;
  const std::uint64_t bytes = std::filesystem::file_size(staging.path(), ec);
  const auto t0 = std::chrono::steady_clock::now();
  storage::upload_file(staging.path(), o.output);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("uploaded %s: %s in %s (%.0f MB/s)\n", o.output.c_str(), megabytes(bytes).c_str(),
              format_duration(seconds).c_str(),
              seconds > 0 ? static_cast<double>(bytes) / 1e6 / seconds : 0.0);
  return 0;
}

}  // namespace

int run_convert(const ConvertOptions& o) {
  if (storage::is_object_url(o.output)) {
    if (wants_shards(o)) {
      throw UsageError(
          "--shard-size and --part write a local directory; upload it after (each "
          "shard is a file, the manifest names them relative to it)");
    }
    return convert_and_upload(o);
  }
  for (const storage::StaleTemporary& stale : storage::remove_stale_temporaries(o.output)) {
    print_note(kProgram, "removed " + stale.path + " (" + megabytes(stale.bytes) +
                             "), left behind by an earlier conversion to " + o.output +
                             " that was killed");
  }
  const std::string kind = source_kind(o);
  const std::string store = store_of(o, kind);
  check_store_options(o, kind, store);
  const ConvertSettings settings = convert_settings(o);
  if (kind == "imagefolder" || kind == "webdataset") {
    if (!o.labels.empty()) throw UsageError("--labels applies to --from npy only");
    ImageFolder folder =
        kind == "webdataset" ? read_webdataset(o.source, o.output) : scan_image_folder(o.source);
    for (std::uint64_t i = 0; i < folder.files.size(); ++i) folder.files[i].source = i;
    if (!o.keep_order) folder = in_stored_order(std::move(folder), o.seed);
    if (wants_shards(o)) return convert_folder_shards(folder, settings, o, store);
    return store == "jpeg" ? convert_folder_to_jpeg(folder, settings)
                           : convert_folder_to_raw(folder, settings);
  }
  formats::PackInput input = open_array(o, kind);
  if (!o.keep_order) {
    const std::uint64_t n = input.samples;
    input = formats::in_order(std::move(input), formats::stored_order(n, o.seed));
  }
  if (wants_shards(o)) return convert_array_shards(input, settings, o, store);
  return store == "jpeg" ? convert_array_to_jpeg(input, settings)
                         : convert_array_to_raw(input, settings);
}

}  // namespace gpufeed::tools::h5pack
