#include "h5pack/shard_plan.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>

#include <unistd.h>
#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/formats/jpeg_dataset.hpp"
#include "gpufeed/formats/probe.hpp"
#include "gpufeed/formats/shard_list.hpp"
#include "gpufeed/formats/shards.hpp"
#include "gpufeed/storage/pending_files.hpp"

namespace gpufeed::tools::h5pack {

namespace fs = std::filesystem;

namespace {

struct Unit {
  const char* suffix;
  std::uint64_t bytes;
};
constexpr Unit kUnits[] = {{"kib", 1ull << 10},   {"mib", 1ull << 20},      {"gib", 1ull << 30},
                           {"tib", 1ull << 40},   {"kb", 1000ull},          {"mb", 1000000ull},
                           {"gb", 1000000000ull}, {"tb", 1000000000000ull}, {"b", 1}};

/// Where shard `shard` of `shards` lies in OUT: under one of kPrefixes folders in turn
/// ("03/shard-00019-of-00330.h5"), so that in object storage the GETs of a job spread over as
/// many key prefixes (S3 serves about 5,500 GETs a second a prefix), neighbouring shards in
/// different ones. One shard lies in OUT itself.
std::string shard_name(std::uint64_t shard, std::uint64_t shards) {
  constexpr std::uint64_t kPrefixes = 16;
  char name[80];
  if (shards == 1) {
    std::snprintf(name, sizeof name, "shard-00000-of-00001.h5");
  } else {
    std::snprintf(name, sizeof name, "%02llu/shard-%05llu-of-%05llu.h5",
                  static_cast<unsigned long long>(shard % std::min(kPrefixes, shards)),
                  static_cast<unsigned long long>(shard), static_cast<unsigned long long>(shards));
  }
  return name;
}

/// The samples of the schema file at `path`, opened and checked by its layout's reader; what
/// the reader finds wrong is thrown.
std::uint64_t file_samples(const std::string& path) {
  if (formats::probe_layout(path) == formats::FileLayout::jpeg)
    return formats::JpegDatasetReader(path).num_samples();
  return formats::DatasetReader(path).num_samples();
}

/// A shard left by an earlier run is taken when it is whole and holds what the plan puts there
/// (fewer with --skip-bad, which drops bad files); else it is packed again.
bool already_whole(const std::string& path, std::uint64_t planned, bool skip_bad) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return false;
  try {
    const std::uint64_t n = file_samples(path);
    return skip_bad ? n > 0 && n <= planned : n == planned;
  } catch (const Error&) {
    return false;
  }
}

/// What decides which samples each shard of `plan` holds.
nlohmann::json plan_identity(const ShardPlan& plan, const ConvertOptions& o) {
  return {{"source", o.source},
          {"samples", plan.samples},
          {"order", o.keep_order ? std::string("kept") : "seed " + std::to_string(o.seed)},
          {"shard_samples", plan.per_shard},
          {"shards", plan.shards}};
}

void write_manifest_file(const std::string& dir, const formats::Manifest& manifest) {
  formats::write_file_whole((fs::path(dir) / formats::kManifestName).string(),
                            formats::manifest_text(manifest));
}

/// Every shard of the plan, if all are there; else nothing.
bool join_if_complete(const ShardPlan& plan, const ConvertOptions& o) {
  std::vector<std::string> names;
  for (std::uint64_t k = 0; k < plan.shards; ++k) {
    names.push_back(shard_name(k, plan.shards));
    std::error_code ec;
    if (!fs::exists(fs::path(o.output) / names.back(), ec)) return false;
  }
  const formats::Manifest manifest = formats::describe_shards(o.output, names);
  write_manifest_file(o.output, manifest);
  std::printf("wrote %s: %llu shards, %llu samples\n",
              (fs::path(o.output) / formats::kManifestName).c_str(),
              static_cast<unsigned long long>(plan.shards),
              static_cast<unsigned long long>(manifest.num_samples()));
  return true;
}

}  // namespace

std::uint64_t ShardPlan::count(std::uint64_t shard) const {
  return std::min(per_shard, samples - first(shard));
}

std::uint64_t parse_byte_size(const std::string& text, const char* flag) {
  std::string lower;
  for (const char c : text) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const Unit& unit : kUnits) {
    if (!lower.ends_with(unit.suffix)) continue;
    const std::string number = lower.substr(0, lower.size() - std::string(unit.suffix).size());
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (number.empty() || *end != '\0' || !(value > 0)) break;
    return static_cast<std::uint64_t>(value * static_cast<double>(unit.bytes));
  }
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || value == 0) {
    throw UsageError(std::string(flag) + " " + text +
                     ": give a size such as 4GB, 512MiB or 1000000");
  }
  return value;
}

bool wants_shards(const ConvertOptions& o) {
  return !o.shard_size.empty() || !o.part.empty();
}

ShardPlan plan_shards(std::uint64_t samples, std::uint64_t mean_sample_bytes,
                      const ConvertOptions& o, std::uint64_t chunk_samples) {
  ShardPlan plan;
  plan.samples = samples;
  plan.per_shard = samples;
  if (!o.shard_size.empty()) {
    const std::uint64_t bytes = parse_byte_size(o.shard_size, "--shard-size");
    plan.per_shard =
        std::max<std::uint64_t>(1, bytes / std::max<std::uint64_t>(1, mean_sample_bytes));
    plan.per_shard = std::min(plan.per_shard, samples);
    const std::uint64_t unit = std::max<std::uint64_t>(1, chunk_samples);
    if (plan.per_shard > unit) plan.per_shard = (plan.per_shard + unit - 1) / unit * unit;
  }
  plan.per_shard = std::max<std::uint64_t>(1, std::min(plan.per_shard, samples));
  plan.shards = (samples + plan.per_shard - 1) / plan.per_shard;
  if (!o.part.empty()) {
    unsigned long long part = 0, parts = 0;
    char tail = 0;
    if (std::sscanf(o.part.c_str(), "%llu/%llu%c", &part, &parts, &tail) != 2 || parts == 0 ||
        part >= parts) {
      throw UsageError("--part " + o.part + ": give I/N with I below N, as 0/2 and 1/2");
    }
    plan.part = part;
    plan.parts = parts;
  }
  return plan;
}

int write_shards(
    const ShardPlan& plan, const ConvertOptions& o,
    const std::function<void(std::uint64_t, std::uint64_t, const std::string&)>& write) {
  std::error_code ec;
  if (fs::exists(o.output, ec) && !fs::is_directory(o.output, ec)) {
    throw UsageError(o.output + " is a file; --shard-size and --part write a directory of shards");
  }
  fs::create_directories(o.output);
  formats::keep_pack_plan(o.output, plan_identity(plan, o).dump());
  std::uint64_t skipped = 0;
  for (std::uint64_t k = plan.part; k < plan.shards; k += plan.parts) {
    const std::string path = (fs::path(o.output) / shard_name(k, plan.shards)).string();
    fs::create_directories(fs::path(path).parent_path());
    if (already_whole(path, plan.count(k), o.skip_bad)) {
      ++skipped;
      continue;
    }
    // A shard a killed run was writing left only its temporary, which no reader takes.
    (void)storage::remove_stale_temporaries(path);
    write(plan.first(k), plan.count(k), path);
    // Each shard is checked on its own as it closes: read back by the reader that will load it.
    const std::uint64_t n = file_samples(path);
    if (n == 0 || n > plan.count(k) || (!o.skip_bad && n != plan.count(k))) {
      throw formats::FormatError(path + " holds " + std::to_string(n) + " samples after packing " +
                                 std::to_string(plan.count(k)) + "; pack it again");
    }
  }
  if (skipped > 0) {
    print_note(kProgram, "kept " + std::to_string(skipped) +
                             " whole shards an earlier run wrote to " + o.output);
  }
  if (!join_if_complete(plan, o)) {
    print_note(kProgram, "part " + o.part + " done; " + o.output +
                             "/manifest.json is written when the last part finishes");
  }
  return 0;
}

int run_manifest(const std::string& dir) {
  // Sorted by file name: shards spread over prefix folders keep their order.
  std::vector<fs::path> files;
  for (const fs::directory_entry& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file() && e.path().extension() == ".h5") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end(),
            [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  if (files.empty()) throw UsageError(dir + " holds no .h5 file to list");
  std::vector<std::string> names;
  for (const fs::path& f : files) names.push_back(fs::relative(f, dir).string());
  const formats::Manifest manifest = formats::describe_shards(dir, names);
  write_manifest_file(dir, manifest);
  std::printf("wrote %s: %zu shards, %llu samples\n",
              (fs::path(dir) / formats::kManifestName).c_str(), files.size(),
              static_cast<unsigned long long>(manifest.num_samples()));
  return 0;
}

}  // namespace gpufeed::tools::h5pack
