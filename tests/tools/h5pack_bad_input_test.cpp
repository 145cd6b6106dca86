// Bad files in an image folder: stop at the first with one line naming it (exit 1), or skip
// and count them with --skip-bad. Never a crash or a hang.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "image_encoders.hpp"
#include "image_fixtures.hpp"
#include "png_chunks.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

bool running_as_root() {
  return ::geteuid() == 0;
}

/// A folder with two good images in each of two classes, "a" and "b".
fs::path good_folder(const fs::path& root) {
  for (const char* name : {"a", "b"}) {
    fs::create_directories(root / name);
    for (int i = 0; i < 2; ++i) {
      const auto bytes = encode_jpeg(smooth_image(30 + 7 * i, 20, 3, 10 + i));
      write_file((root / name / ("good" + std::to_string(i) + ".jpg")).string(), bytes);
    }
  }
  return root;
}

using Bytes = std::vector<std::uint8_t>;

/// A PNG whose first IDAT byte is changed, so its CRC no longer matches.
Bytes png_with_bad_crc() {
  Bytes png = encode_png(smooth_image(32, 24, 3, 4));
  png[find_chunk(png, "IDAT") + 4] ^= 0x5A;
  return png;
}

/// A small PNG whose IHDR (CRC fixed) declares 30000x30000: a decompression bomb.
Bytes png_bomb() {
  Bytes png = encode_png(smooth_image(16, 16, 3, 2));
  const std::size_t ihdr = find_chunk(png, "IHDR");
  put_be32(png, ihdr + 4, 30000);
  put_be32(png, ihdr + 8, 30000);
  fix_crc(png, ihdr);
  return png;
}

struct BadCase {
  std::string name;  ///< file name, under class "b"
  std::string kind;  ///< as the summary counts it
};

/// Writes the bad file of `c` into `root`/b. Returns false when the case cannot be made.
bool write_bad(const fs::path& root, const BadCase& c) {
  const std::string path = (root / "b" / c.name).string();
  if (c.kind == "truncated or damaged") {
    const auto good = encode_jpeg(smooth_image(64, 64, 3, 7));
    write_file(path, std::span(good).first(good.size() * 6 / 10));
  } else if (c.name == "crc.png") {
    write_file(path, png_with_bad_crc());
  } else if (c.name == "cut.webp") {
    const Bytes good = encode_webp(smooth_image(48, 40, 3, 6), false);
    write_file(path, std::span(good).first(good.size() / 2));
  } else if (c.name == "bomb.png") {
    write_file(path, png_bomb());
  } else if (c.name == "anim.jpg") {
    const char gif[] = "GIF89a\x01\x00\x01\x00\x00\x00\x00;";  // a GIF named like a JPEG
    write_file(path, {reinterpret_cast<const std::uint8_t*>(gif), sizeof gif - 1});
  } else if (c.kind == "not a JPEG, PNG or WebP image") {
    const std::string text = "this is a text file, not an image\n";
    write_file(path, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
  } else if (c.kind == "too large") {
    // A small file whose frame header (SOF0) declares 20000x20000: over the pixel limit.
    auto bytes = encode_jpeg(smooth_image(16, 16, 3, 5));
    const std::uint8_t sof0[] = {0xFF, 0xC0};
    const auto at = std::search(bytes.begin(), bytes.end(), std::begin(sof0), std::end(sof0));
    if (at == bytes.end() || bytes.end() - at < 9) return false;
    for (int k : {5, 7}) {
      at[k] = 0x4E;
      at[k + 1] = 0x20;
    }
    write_file(path, bytes);
  } else if (c.kind == "empty") {
    write_file(path, {});
  } else if (c.name == "locked.jpg") {
    if (running_as_root()) return false;  // root reads files whatever their permissions
    write_file(path, encode_jpeg(smooth_image(16, 16, 3, 3)));
    fs::permissions(path, fs::perms::none);
  } else {
    fs::create_symlink(root / "b" / "missing-target.jpg", path);  // unreadable even for root
  }
  return true;
}

const std::vector<BadCase>& bad_cases() {
  static const std::vector<BadCase> cases = {{"cut.jpg", "truncated or damaged"},
                                             {"crc.png", "truncated or damaged"},
                                             {"cut.webp", "truncated or damaged"},
                                             {"text.jpg", "not a JPEG, PNG or WebP image"},
                                             {"anim.jpg", "not a JPEG, PNG or WebP image"},
                                             {"bomb.png", "too large"},
                                             {"zero.jpeg", "empty"},
                                             {"huge.jpg", "too large"},
                                             {"locked.jpg", "unreadable"},
                                             {"dangling.jpg", "unreadable"}};
  return cases;
}

/// The stderr of h5pack with `args`, which must fail (exit 1) with one line.
std::string one_line_failure(const std::vector<std::string>& args) {
  const auto r = h5pack(args);
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
  return r.err;
}

TEST(H5packBadInput, EachBadFileStopsTheRunWithOneLineNamingIt) {
  for (const BadCase& c : bad_cases()) {
    for (const char* store : {"jpeg", "raw"}) {
      const TempDir dir;
      const fs::path root = good_folder(dir.path() / "images");
      if (!write_bad(root, c)) continue;
      const std::string out = dir.file("out.h5");
      std::vector<std::string> args = {"convert", root.string(), out, "--store", store};
      if (std::string(store) == "raw") args.insert(args.end(), {"--size", "8x8"});
      const auto r = h5pack(args);
      EXPECT_EQ(r.exit_code, 1) << c.name << "\n" << r.describe();
      ASSERT_EQ(r.err_lines().size(), 1u) << c.name << "\n" << r.describe();
      EXPECT_TRUE(contains(r.err, "h5pack: error: ")) << r.err;
      EXPECT_TRUE(contains(r.err, (root / "b" / c.name).string())) << r.err;
      EXPECT_TRUE(contains(r.err, "--skip-bad")) << r.err;
      if (c.name == "anim.jpg") {
        EXPECT_TRUE(contains(r.err, "is a GIF image")) << r.err;
      }
      EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"images"}) << "no output left";
    }
  }
}

TEST(H5packBadInput, SkipBadCountsWhatItSkipped) {
  const TempDir dir;
  const fs::path root = good_folder(dir.path() / "images");
  std::map<std::string, int> expected;
  int bad = 0;
  for (const BadCase& c : bad_cases()) {
    if (!write_bad(root, c)) continue;
    ++expected[c.kind];
    ++bad;
  }
  const std::string out = dir.file("out.h5");
  const auto r = h5pack({"convert", "--keep-order", root.string(), out, "--skip-bad"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "skipped " + std::to_string(bad) + " bad files: ")) << r.out;
  for (const auto& [kind, n] : expected) {
    EXPECT_TRUE(contains(r.out, std::to_string(n) + " " + kind)) << kind << " in:\n" << r.out;
  }
  EXPECT_TRUE(contains(r.out, "skipped " + (root / "b" / "cut.jpg").string())) << r.out;
  const formats::JpegDatasetReader reader(out);
  EXPECT_EQ(reader.num_samples(), 4u);
  EXPECT_EQ(reader.labels(), (std::vector<std::int64_t>{0, 0, 1, 1}));

  const std::string raw = dir.file("raw.h5");
  const auto rr =
      h5pack({"convert", "--keep-order", root.string(), raw, "--size", "8x8", "--skip-bad"});
  ASSERT_EQ(rr.exit_code, 0) << rr.describe();
  const formats::DatasetReader raw_reader(raw);
  EXPECT_EQ(raw_reader.num_samples(), 4u);
  EXPECT_EQ(raw_reader.labels(), (std::vector<std::int64_t>{0, 0, 1, 1}));
}

TEST(H5packBadInput, AFifoNamedLikeAnImageDoesNotHang) {
  const TempDir dir;
  const fs::path root = good_folder(dir.path() / "images");
  ASSERT_EQ(::mkfifo((root / "a" / "pipe.jpg").c_str(), 0600), 0);
  const auto r = h5pack({"convert", root.string(), dir.file("out.h5"), "--skip-bad"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_TRUE(contains(r.out, "1 unreadable")) << r.out;
}

TEST(H5packBadInput, AFolderWithoutImagesIsOneClearLine) {
  const TempDir dir;
  fs::create_directories(dir.path() / "empty" / "cats");
  write_file((dir.path() / "empty" / "cats" / "notes.txt").string(), {});
  const std::string empty =
      one_line_failure({"convert", dir.file("empty"), dir.file("out.h5"), "--from", "imagefolder"});
  EXPECT_TRUE(contains(empty, "holds no images")) << empty;
  EXPECT_TRUE(contains(empty, dir.file("empty"))) << empty;

  fs::create_directories(dir.path() / "flat");
  const std::string flat =
      one_line_failure({"convert", dir.file("flat"), dir.file("out.h5"), "--from", "imagefolder"});
  EXPECT_TRUE(contains(flat, "no class folders")) << flat;
  EXPECT_FALSE(fs::exists(dir.file("out.h5")));
}

TEST(H5packBadInput, OnlyBadFilesLeaveNothingToPack) {
  const TempDir dir;
  fs::create_directories(dir.path() / "images" / "b");
  write_bad(dir.path() / "images", {"zero.jpg", "empty"});
  const std::string err =
      one_line_failure({"convert", dir.file("images"), dir.file("out.h5"), "--skip-bad"});
  EXPECT_TRUE(contains(err, "nothing to pack")) << err;
  EXPECT_FALSE(fs::exists(dir.file("out.h5")));
}

TEST(H5packBadInput, StoreOptionsThatDoNotGoTogether) {
  const TempDir dir;
  const fs::path root = good_folder(dir.path() / "images");
  const std::vector<std::vector<std::string>> bad = {
      {"--store", "raw"},                    // a folder's images differ in size
      {"--store", "jpeg", "--size", "8x8"},  // --size is for raw
      {"--store", "raw", "--size", "8x8", "--quality", "80"},
      {"--compression", "gzip"},  // jpeg store of a folder
      {"--size", "8y8"}};
  for (const auto& extra : bad) {
    std::vector<std::string> args = {"convert", root.string(), dir.file("out.h5")};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = h5pack(args);
    EXPECT_EQ(r.exit_code, 2) << extra[0] << "\n" << r.describe();
    EXPECT_EQ(r.err_lines().size(), 1u) << r.err;
  }
}

}  // namespace
}  // namespace gpufeed::testing
