#include "gpufeed/formats/shard_list.hpp"

#include <fnmatch.h>
#include <glob.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/unique_handle.hpp"
#include "gpufeed/formats/error.hpp"
#include "gpufeed/storage/byte_source.hpp"
#include "gpufeed/storage/object_store.hpp"

namespace gpufeed::formats {

namespace {

constexpr int kManifestVersion = 1;
constexpr std::uint64_t kMaxManifestBytes = std::uint64_t{256} << 20;

bool is_url(const std::string& path) {
  return storage::is_object_url(path);
}

bool has_wildcard(const std::string& spec) {
  return spec.find_first_of("*?[") != std::string::npos;
}

/// Where `path` lies, with its trailing separator: "s3://b/train/" or "data/train/".
std::string parent_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? std::string() : path.substr(0, slash + 1);
}

std::string joined(const std::string& dir, const std::string& path) {
  if (path.empty() || path.front() == '/' || is_url(path)) return path;
  return dir + path;
}

std::string read_whole(const std::string& path) {
  const std::shared_ptr<const storage::ByteSource> source = storage::open_source(path);
  if (source->size() > kMaxManifestBytes) {
    throw FormatError(path + " is " + std::to_string(source->size()) +
                      " bytes, too large for a manifest; name the shards with a glob instead");
  }
  std::string text(source->size(), '\0');
  // From the bytes its opening fetched when they hold it all (an object's first MiB): no second
  // round trip.
  storage::read_metadata(*source, {reinterpret_cast<std::uint8_t*>(text.data()), text.size()}, 0,
                         [&] { return "the manifest " + path; });
  return text;
}

std::vector<std::string> local_matches(const std::string& pattern) {
  glob_t found{};
  const int rc = ::glob(pattern.c_str(), GLOB_ERR, nullptr, &found);
  std::vector<std::string> paths(found.gl_pathv, found.gl_pathv + found.gl_pathc);
  ::globfree(&found);
  if (rc != 0 && rc != GLOB_NOMATCH) {
    throw IoError("cannot list the files matching " + pattern + ": a directory cannot be read");
  }
  return paths;  // glob(3) sorts them
}

std::vector<std::string> object_matches(const std::string& pattern) {
  // Listed under the part before the first wildcard; '*' does not cross a '/' (as a shell's).
  const std::string prefix = pattern.substr(0, pattern.find_first_of("*?["));
  std::vector<std::string> urls;
  for (std::string& url : storage::list_objects(prefix)) {
    if (::fnmatch(pattern.c_str(), url.c_str(), FNM_PATHNAME) == 0) urls.push_back(std::move(url));
  }
  std::sort(urls.begin(), urls.end());
  return urls;
}

std::string manifest_of(const std::string& spec) {
  if (spec.ends_with(kManifestName)) return spec;
  if (is_url(spec)) return spec + kManifestName;  // a prefix ending in '/'
  return (std::filesystem::path(spec) / kManifestName).string();
}

void append_spec(const std::string& spec, ShardList& list) {
  if (has_wildcard(spec)) {
    const std::vector<std::string> paths =
        is_url(spec) ? object_matches(spec) : local_matches(spec);
    if (paths.empty()) {
      throw UsageError("no file matches " + spec +
                       "; check the pattern (a '*' does not cross a '/')");
    }
    for (const std::string& p : paths) list.files.push_back({.path = p});
    return;
  }
  if (!names_shards(spec)) {
    list.files.push_back({.path = spec});
    return;
  }
  Manifest manifest = read_manifest(manifest_of(spec));
  if (!list.layout.empty() && list.layout != manifest.layout) {
    throw FormatError(manifest_of(spec) + " holds " + manifest.layout + "-layout shards, " +
                      "the manifest before it " + list.layout +
                      "-layout ones: a dataset has one layout");
  }
  list.layout = manifest.layout;
  for (ShardFile& f : manifest.shards) list.files.push_back(std::move(f));
}

}  // namespace

std::uint64_t Manifest::num_samples() const {
  std::uint64_t n = 0;
  for (const ShardFile& f : shards) n += f.samples.value_or(0);
  return n;
}

Manifest parse_manifest(const std::string& text, const std::string& where) {
  const auto bad = [&](const std::string& why) -> FormatError {
    return FormatError(where + " is not a gpufeed manifest: " + why +
                       "; write it again (h5pack manifest DIR)");
  };
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) throw bad("it is not a JSON object");
  if (doc.value("format", "") != "gpufeed.shards")
    throw bad("its \"format\" is not gpufeed.shards");
  if (doc.value("version", 0) != kManifestVersion) {
    throw bad("version " + doc.value("version", nlohmann::json(0)).dump() + " is not 1");
  }
  Manifest m;
  m.layout = doc.value("layout", "");
  if (m.layout != "raw" && m.layout != "jpeg") throw bad("\"layout\" is neither raw nor jpeg");
  const auto shards = doc.find("shards");
  if (shards == doc.end() || !shards->is_array() || shards->empty()) throw bad("it lists no shard");
  for (const nlohmann::json& s : *shards) {
    if (!s.is_object() || !s.contains("path") || !s["path"].is_string() ||
        !s.value("samples", nlohmann::json()).is_number_unsigned()) {
      throw bad("shard " + std::to_string(m.shards.size()) + " lacks a path or a sample count");
    }
    ShardFile f{.path = s["path"].get<std::string>(), .samples = s["samples"].get<std::uint64_t>()};
    const auto size = [&](const char* key) -> std::optional<std::uint64_t> {
      if (s.contains(key) && s[key].is_number_unsigned()) return s[key].get<std::uint64_t>();
      return std::nullopt;
    };
    f.bytes = size("bytes");
    f.head_bytes = size("head_bytes");
    f.tail_bytes = size("tail_bytes");
    for (const auto& [key, edge] :
         {std::pair{"head_bytes", f.head_bytes}, {"tail_bytes", f.tail_bytes}}) {
      if (edge && f.bytes && *edge > *f.bytes) {
        throw bad("shard " + std::to_string(m.shards.size()) + " (" + f.path + ") has " + key +
                  " " + std::to_string(*edge) + ", more than its " + std::to_string(*f.bytes) +
                  " bytes");
      }
    }
    m.shards.push_back(std::move(f));
  }
  return m;
}

std::string manifest_text(const Manifest& manifest) {
  nlohmann::json shards = nlohmann::json::array();
  for (const ShardFile& f : manifest.shards) {
    nlohmann::json s{{"path", f.path}, {"samples", f.samples.value_or(0)}};
    if (f.bytes) s["bytes"] = *f.bytes;
    if (f.head_bytes) s["head_bytes"] = *f.head_bytes;
    if (f.tail_bytes) s["tail_bytes"] = *f.tail_bytes;
    shards.push_back(std::move(s));
  }
  const nlohmann::json doc{{"format", "gpufeed.shards"},
                           {"version", kManifestVersion},
                           {"layout", manifest.layout},
                           {"samples", manifest.num_samples()},
                           {"shards", std::move(shards)}};
  return doc.dump(1) + "\n";
}

Manifest read_manifest(const std::string& path) {
  if (!is_url(path) && !std::filesystem::exists(path)) {
    throw IoError(parent_of(path) + " has no " + kManifestName +
                  ": name the shards with a glob (DIR/*.h5), or write the manifest (h5pack "
                  "manifest DIR)");
  }
  Manifest m = parse_manifest(read_whole(path), path);
  const std::string dir = parent_of(path);
  for (ShardFile& f : m.shards) f.path = joined(dir, f.path);
  return m;
}

bool names_shards(const std::string& spec) {
  if (has_wildcard(spec) || spec.ends_with(kManifestName)) return true;
  if (is_url(spec)) return spec.ends_with('/');
  std::error_code ec;
  return std::filesystem::is_directory(spec, ec);
}

ShardList resolve_shards(std::span<const std::string> specs) {
  if (specs.empty())
    throw UsageError("no dataset given: name a file, a directory of shards or a glob");
  ShardList list;
  for (const std::string& spec : specs) append_spec(spec, list);
  list.name = specs.size() == 1 ? specs[0]
                                : specs[0] + " (and " + std::to_string(specs.size() - 1) + " more)";
  return list;
}

void write_file_whole(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary, std::ios::trunc);
    out << text;
    if (!out.flush()) throw IoError("cannot write " + temporary);
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(temporary.c_str());
    throw IoError("cannot rename " + temporary + " to " + path + ": " + std::strerror(error));
  }
}

void keep_pack_plan(const std::string& dir, const std::string& plan) {
  const nlohmann::json now = nlohmann::json::parse(plan);
  const std::string file = (std::filesystem::path(dir) / kPackPlanName).string();
  std::ifstream in(file);
  const nlohmann::json before =
      in ? nlohmann::json::parse(in, nullptr, false) : nlohmann::json(nullptr);
  if (!before.is_object()) return write_file_whole(file, now.dump(1) + "\n");
  const auto text = [](const nlohmann::json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
  };
  std::string differences;
  for (const auto& [key, value] : now.items()) {
    const nlohmann::json then = before.value(key, nlohmann::json(nullptr));
    if (then == value) continue;
    differences += (differences.empty() ? "" : ", ") + key + " " + text(then) + " then, " +
                   text(value) + " now";
  }
  if (differences.empty()) return;
  throw UsageError(dir + " holds shards of another pack (" + differences +
                   "): give the arguments it began with, or pack into a new directory");
}

}  // namespace gpufeed::formats
