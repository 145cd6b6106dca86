#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "dataset_fixture.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/dataset_writer.hpp"
#include "gpufeed/formats/npy.hpp"
#include "run_command.hpp"
#include "temp_dir.hpp"

namespace gpufeed::testing {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> directory_names(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(H5pack, ConvertSyntheticThenInfoAndVerify) {
  const TempDir dir;
  const std::string out = dir.file("synth.h5");
  const auto convert = h5pack({"convert", "300:16x12x3", out, "--chunk", "32", "--compression",
                               "gzip", "--workers", "2", "--classes", "5"});
  ASSERT_EQ(convert.exit_code, 0) << convert.describe();
  EXPECT_NE(convert.out.find("wrote " + out +
                             ": 300 samples 16x12x3, 32 per chunk, 10 chunks, "
                             "gzip:4"),
            std::string::npos)
      << convert.out;
  EXPECT_EQ(convert.err, "") << "no progress bar when stderr is not a terminal";

  const auto info = h5pack({"info", out, "--json"});
  ASSERT_EQ(info.exit_code, 0) << info.describe();
  const auto j = nlohmann::json::parse(info.out);
  EXPECT_EQ(j["samples"], 300);
  EXPECT_EQ(j["shape"], nlohmann::json({16, 12, 3}));
  EXPECT_EQ(j["chunk"], 32);
  EXPECT_EQ(j["chunks"], 10);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_NE(j["compression"].get<std::string>().find("gzip"), std::string::npos);
  EXPECT_EQ(j["classes"], 5);
  EXPECT_EQ(j["class_names"][0], "class0");
  EXPECT_EQ(j["labels"]["min"], 0);
  EXPECT_EQ(j["labels"]["max"], 4);
  EXPECT_EQ(j["mean"].size(), 3u);

  const std::string text = h5pack_out({"info", out});
  EXPECT_NE(text.find("read path"), std::string::npos) << text;

  EXPECT_EQ(h5pack_out({"verify", out}), "ok: 300 samples, 10 chunks verified\n");
}

TEST(H5pack, SyntheticDataIsDeterministicAndDiffersPerSample) {
  const TempDir dir;
  const auto a = h5pack({"convert", "40:8x8x3", dir.file("a.h5"), "--workers", "1"});
  const auto b = h5pack({"convert", "40:8x8x3", dir.file("b.h5"), "--workers", "2"});
  const auto c = h5pack({"convert", "40:8x8x3", dir.file("c.h5"), "--seed", "1"});
  ASSERT_EQ(a.exit_code + b.exit_code + c.exit_code, 0) << a.describe() << c.describe();
  const formats::DatasetReader ra(dir.file("a.h5"));
  const auto pixels_a = read_all(ra);
  EXPECT_EQ(pixels_a, read_all(formats::DatasetReader(dir.file("b.h5"))));
  EXPECT_NE(pixels_a, read_all(formats::DatasetReader(dir.file("c.h5"))));
  const std::size_t bytes = 8 * 8 * 3;
  EXPECT_FALSE(std::equal(pixels_a.begin(), pixels_a.begin() + bytes, pixels_a.begin() + bytes));
}

TEST(H5pack, NpyRoundTrip) {
  const TempDir dir;
  const std::vector<std::uint64_t> shape{50, 8, 6, 3};
  std::vector<std::uint8_t> pixels(50 * 8 * 6 * 3);
  std::mt19937 rng(5);
  for (auto& p : pixels) p = static_cast<std::uint8_t>(rng());
  std::vector<std::int64_t> labels(50);
  for (std::size_t i = 0; i < labels.size(); ++i) labels[i] = static_cast<std::int64_t>(i % 7);
  formats::write_npy(dir.file("x.npy"), "|u1", shape, pixels);
  formats::write_npy(dir.file("y.npy"), "<i8", {50},
                     {reinterpret_cast<const std::uint8_t*>(labels.data()), labels.size() * 8});
  const auto r = h5pack({"convert", "--keep-order", dir.file("x.npy"), dir.file("x.h5"), "--labels",
                         dir.file("y.npy"), "--chunk", "16"});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  const formats::DatasetReader reader(dir.file("x.h5"));
  EXPECT_EQ(reader.num_samples(), 50u);
  EXPECT_EQ(reader.samples_per_chunk(), 16u);
  EXPECT_EQ(reader.sample_shape(), (formats::SampleShape{8, 6, 3, formats::Layout::nhwc}));
  EXPECT_EQ(read_all(reader), pixels);
  EXPECT_EQ(reader.labels(), labels);
}

TEST(H5pack, NpyWithoutLabelsGetsZerosAndANote) {
  const TempDir dir;
  std::vector<std::uint8_t> pixels(10 * 4 * 4, 9);
  formats::write_npy(dir.file("g.npy"), "|u1", {10, 4, 4}, pixels);
  const auto r = h5pack({"convert", dir.file("g.npy"), dir.file("g.h5")});
  ASSERT_EQ(r.exit_code, 0) << r.describe();
  EXPECT_NE(r.err.find("h5pack: note: no --labels"), std::string::npos) << r.err;
  const formats::DatasetReader reader(dir.file("g.h5"));
  EXPECT_EQ(reader.sample_shape().channels, 1u);
  EXPECT_EQ(reader.labels(), std::vector<std::int64_t>(10, 0));
}

TEST(H5pack, FailedConvertLeavesNoFile) {
  const TempDir dir;
  std::vector<std::uint8_t> floats(4 * 2 * 2 * 3 * 4, 0);
  formats::write_npy(dir.file("f.npy"), "<f4", {4, 2, 2, 3}, floats);
  std::vector<std::uint8_t> pixels(4 * 2 * 2 * 3, 1);
  formats::write_npy(dir.file("u.npy"), "|u1", {4, 2, 2, 3}, pixels);
  std::vector<std::uint8_t> few_labels(3 * 8, 0);
  formats::write_npy(dir.file("l.npy"), "<i8", {3}, few_labels);
  const auto before = directory_names(dir.path());

  const auto bad_dtype = h5pack({"convert", dir.file("f.npy"), dir.file("out.h5")});
  EXPECT_EQ(bad_dtype.exit_code, 1) << bad_dtype.describe();
  ASSERT_EQ(bad_dtype.err_lines().size(), 1u) << bad_dtype.err;
  EXPECT_NE(bad_dtype.err.find("f.npy"), std::string::npos) << bad_dtype.err;
  EXPECT_NE(bad_dtype.err.find("uint8"), std::string::npos) << bad_dtype.err;

  const auto bad_labels =
      h5pack({"convert", dir.file("u.npy"), dir.file("out.h5"), "--labels", dir.file("l.npy")});
  EXPECT_EQ(bad_labels.exit_code, 1) << bad_labels.describe();
  ASSERT_EQ(bad_labels.err_lines().size(), 1u) << bad_labels.err;
  EXPECT_NE(bad_labels.err.find("l.npy"), std::string::npos) << bad_labels.err;

  EXPECT_EQ(directory_names(dir.path()), before) << "no output and no temporary file";
}

TEST(H5pack, VerifyReportsLabelsOutsideTheClassNames) {
  const TempDir dir;
  const std::string path = dir.file("bad_labels.h5");
  {
    formats::DatasetWriter writer(path, 4, {2, 2, 1, formats::Layout::nhwc}, {2, 0});
    const std::vector<std::uint8_t> raw(8, 3);
    for (std::uint64_t c = 0; c < writer.num_chunks(); ++c) writer.write(writer.encode(c, raw));
    writer.write_labels(std::vector<std::int64_t>{0, 1, 5, 1});
    writer.write_class_names({"cat", "dog"});
    writer.commit();
  }
  const auto r = h5pack({"verify", path});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.out.find("sample 2"), std::string::npos) << r.out;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
  EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
}

TEST(H5pack, VerifyReportsADamagedChunk) {
  const TempDir dir;
  const std::string path = dir.file("damaged.h5");
  ASSERT_EQ(
      h5pack({"convert", "64:64x64x3", path, "--chunk", "16", "--compression", "gzip:1"}).exit_code,
      0);
  {
    // The chunks are most of the file: overwrite bytes in its middle.
    const auto size = fs::file_size(path);
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(size / 2));
    const std::string garbage(256, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  const auto r = h5pack({"verify", path});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  EXPECT_NE(r.out.find("bad chunk"), std::string::npos) << r.out;
  ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
}

/// Shard k's file of a directory h5pack wrote in `shards` shards (under its prefix folder).
std::string shard_path(const std::string& dir, int k, int shards) {
  char name[64];
  std::snprintf(name, sizeof name, "%02d/shard-%05d-of-%05d.h5", k % std::min(16, shards), k,
                shards);
  return (fs::path(dir) / name).string();
}

TEST(H5pack, InfoAndVerifyTakeADatasetOfShards) {
  const TempDir dir;
  const std::string out = dir.file("shards");
  const std::vector<std::string> source = {"convert", "1000:16x16x3", "--chunk", "64", "--classes",
                                           "5",       "--workers",    "1"};
  auto args = source;
  args.insert(args.begin() + 2, out);
  for (const char* a : {"--shard-size", "100KB"}) args.emplace_back(a);
  ASSERT_EQ(h5pack(args).exit_code, 0);
  args = source;
  args.insert(args.begin() + 2, dir.file("one.h5"));
  ASSERT_EQ(h5pack(args).exit_code, 0);

  const auto j = nlohmann::json::parse(h5pack_out({"info", out, "--json"}));
  const auto one = nlohmann::json::parse(h5pack_out({"info", dir.file("one.h5"), "--json"}));
  EXPECT_EQ(j["samples"], 1000);
  EXPECT_TRUE(j["manifest"].get<bool>());
  ASSERT_EQ(j["shards"].size(), 6u) << j.dump();  // 100 KB is 130 samples: 3 chunks of 64
  for (int k = 0; k < 6; ++k) {
    EXPECT_EQ(j["shards"][k]["samples"], k < 5 ? 192 : 40) << k;
    EXPECT_EQ(j["shards"][k]["path"], shard_path(out, k, 6)) << k;
  }
  EXPECT_EQ(j["stored_bytes"], 1000 * 16 * 16 * 3);
  for (const char* key : {"shape", "chunk", "classes", "class_names", "labels"}) {
    EXPECT_EQ(j[key], one[key]) << key;
  }
  for (int c = 0; c < 3; ++c) {
    EXPECT_NEAR(j["mean"][c].get<double>(), one["mean"][c].get<double>(), 1e-3) << c;
    EXPECT_NEAR(j["std"][c].get<double>(), one["std"][c].get<double>(), 1e-3) << c;
  }
  const std::string text = h5pack_out({"info", out});
  EXPECT_NE(text.find("dataset      " + out + " (6 shards, manifest)"), std::string::npos) << text;

  const std::string verified = h5pack_out({"verify", out});
  EXPECT_NE(verified.find("shard 5 of 6 (" + shard_path(out, 5, 6) +
                          "): ok: 40 samples, 1 chunks verified\n"),
            std::string::npos)
      << verified;
  EXPECT_TRUE(
      verified.ends_with("ok: 6 shards, 1000 samples verified, as the manifest lists "
                         "them\n"))
      << verified;
}

TEST(H5pack, APackOfShardsGoesOnOnlyWithThePlanItBeganWith) {
  // Shards kept from a pack of another order or size would hold some samples twice and lose
  // others: a run with another seed or shard size into the same directory is refused.
  const TempDir dir;
  const std::string out = dir.file("shards");
  const auto pack = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"convert", "1000:16x16x3", out, "--chunk",
                                     "64",      "--workers",    "1"};
    args.insert(args.end(), extra.begin(), extra.end());
    return h5pack(args);
  };
  ASSERT_EQ(pack({"--shard-size", "100KB", "--part", "0/2"}).exit_code, 0);
  const auto reseeded = pack({"--shard-size", "100KB", "--part", "1/2", "--seed", "7"});
  EXPECT_EQ(reseeded.exit_code, 2) << reseeded.describe();
  ASSERT_EQ(reseeded.err_lines().size(), 1u) << reseeded.err;
  EXPECT_NE(reseeded.err.find(out + " holds shards of another pack (order seed 0 then, seed 7 "
                                    "now): give the arguments it began with, or pack into a new "
                                    "directory"),
            std::string::npos)
      << reseeded.err;
  const auto resized = pack({"--shard-size", "50KB"});
  EXPECT_EQ(resized.exit_code, 2) << resized.describe();
  EXPECT_NE(resized.err.find("(shard_samples 192 then, 128 now, shards 6 then, 8 now)"),
            std::string::npos)
      << resized.err;
  EXPECT_FALSE(fs::exists(fs::path(out) / "manifest.json")) << "nothing of the refused runs";
  const auto resumed = pack({"--shard-size", "100KB", "--part", "1/2"});
  ASSERT_EQ(resumed.exit_code, 0) << resumed.describe();
  EXPECT_EQ(nlohmann::json::parse(h5pack_out({"info", out, "--json"}))["samples"], 1000);
}

TEST(H5pack, VerifyOfShardsNamesEveryBadShardAndGoesOn) {
  const TempDir dir;
  const std::string out = dir.file("shards");
  const std::vector<std::string> pack = {"convert", "1000:16x16x3",  out,     "--chunk",
                                         "64",      "--shard-size",  "100KB", "--workers",
                                         "1",       "--compression", "gzip:1"};
  ASSERT_EQ(h5pack(pack).exit_code, 0);
  {
    // Shard 1's chunks are most of the file: overwrite bytes in its middle.
    const std::string path = shard_path(out, 1, 6);
    std::fstream file(path, std::ios::in | std::ios::out | std::ios::binary);
    file.seekp(static_cast<std::streamoff>(fs::file_size(path) / 2));
    const std::string garbage(256, '\x5a');
    file.write(garbage.data(), static_cast<std::streamsize>(garbage.size()));
  }
  fs::resize_file(shard_path(out, 2, 6), fs::file_size(shard_path(out, 2, 6)) / 2);
  fs::remove(shard_path(out, 4, 6));
  const auto r = h5pack({"verify", out});
  EXPECT_EQ(r.exit_code, 1) << r.describe();
  for (const int k : {0, 3, 5}) {
    EXPECT_NE(
        r.out.find("shard " + std::to_string(k) + " of 6 (" + shard_path(out, k, 6) + "): ok: "),
        std::string::npos)
        << r.out;
  }
  EXPECT_NE(r.out.find("bad chunk"), std::string::npos) << r.out;
  const auto lines = r.err_lines();
  ASSERT_EQ(lines.size(), 4u) << r.err;
  EXPECT_NE(lines[0].find("shard 1 of 6 (" + shard_path(out, 1, 6) + "): 1 of 3 chunks"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("shard 2 of 6 (" + shard_path(out, 2, 6) + "): "), std::string::npos);
  EXPECT_NE(lines[1].find("truncated"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("shard 4 of 6 (" + shard_path(out, 4, 6) + "): "), std::string::npos);
  EXPECT_NE(lines[3].find(out + ": 3 of 6 shards failed verification (1, 2, 4); remove them and "
                                "run the same h5pack convert again"),
            std::string::npos)
      << lines[3];

  // The shards named removed and packed again, as the advice says, the dataset verifies; a
  // manifest that miscounts a shard is named once every shard has passed on its own.
  fs::remove(shard_path(out, 1, 6));  // whole to the eye: its sample count is right
  ASSERT_EQ(h5pack(pack).exit_code, 0);
  EXPECT_EQ(h5pack({"verify", out}).exit_code, 0) << "the bad shards packed again";
  const std::string manifest = (fs::path(out) / "manifest.json").string();
  auto m = nlohmann::json::parse(std::ifstream(manifest));
  m["shards"][3]["samples"] = 191;
  m["samples"] = 999;
  std::ofstream(manifest) << m.dump();
  const auto miscounted = h5pack({"verify", out});
  EXPECT_EQ(miscounted.exit_code, 1) << miscounted.describe();
  ASSERT_EQ(miscounted.err_lines().size(), 1u) << miscounted.err;
  EXPECT_NE(miscounted.err.find("shard 3 of 6 (" + shard_path(out, 3, 6) + ")"), std::string::npos)
      << miscounted.err;
}

}  // namespace
}  // namespace gpufeed::testing
