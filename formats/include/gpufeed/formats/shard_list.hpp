#pragma once
// Which files a dataset is made of, from what the user named: one file, a directory (or an
// object prefix ending in '/') holding a manifest, a manifest itself, a glob ("train-*.h5",
// "s3://bucket/train/*.h5"), or several of these one after another. Local paths and s3:// (or
// gs://) URLs mix freely.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace gpufeed::formats {

/// The name of the manifest in a directory of shards.
inline constexpr const char* kManifestName = "manifest.json";
/// What a pack in shards keeps beside them while and after it writes them: what decides the
/// samples of each shard (the source, its order, the samples a shard). A pack run again into
/// the directory goes on only with the same plan (h5pack convert and gpufeed.pack).
inline constexpr const char* kPackPlanName = ".pack-plan.json";

/// One shard: its path or URL, and what a manifest says it holds (checked when it is opened)
/// and where its metadata lies: the `head_bytes` before its first image and the `tail_bytes`
/// after its last, what an open in object storage fetches (1 MiB of each when unsaid).
struct ShardFile {
  std::string path{};
  std::optional<std::uint64_t> samples{};
  std::optional<std::uint64_t> bytes{};
  std::optional<std::uint64_t> head_bytes{};
  std::optional<std::uint64_t> tail_bytes{};
  friend bool operator==(const ShardFile&, const ShardFile&) = default;
};

/// What h5pack and gpufeed.pack write beside the shards (manifest.json): the layout and every
/// shard, in the dataset's order, with its sample count and size. Paths are relative to the
/// manifest's directory unless absolute or URLs.
struct Manifest {
  std::string layout;  ///< "raw" or "jpeg"
  std::vector<ShardFile> shards;
  [[nodiscard]] std::uint64_t num_samples() const;
};

/// Parses a manifest's text; `where` names it in messages. Throws FormatError naming what is
/// wrong.
Manifest parse_manifest(const std::string& text, const std::string& where);
/// The manifest's JSON text (paths as given).
std::string manifest_text(const Manifest& manifest);
/// Reads the manifest at `path` (a local file or an object URL), its shard paths made relative
/// to where it lies.
Manifest read_manifest(const std::string& path);

/// The shards of a dataset, in order, and how the user named it.
struct ShardList {
  std::vector<ShardFile> files;
  /// The layout a manifest declares, if the shards came from one.
  std::string layout;
  /// What messages call the dataset: the one name given, or the first and how many more.
  std::string name;
};

/// Resolves `specs` (each a file, a directory or prefix with a manifest, a manifest, or a
/// glob) into the files they name, in order (a glob's matches sorted). Throws UsageError for a
/// glob that matches nothing or an empty list, FormatError for a damaged manifest, IoError for
/// a directory without one or a listing that fails.
ShardList resolve_shards(std::span<const std::string> specs);

/// True when `spec` names several files or a manifest rather than one file: a glob, a
/// directory, a prefix ending in '/', or a manifest.
[[nodiscard]] bool names_shards(const std::string& spec);

/// Writes `text` to the local file `path` whole: to a temporary beside it, named by the
/// process, renamed into place (processes writing the same text at once leave one whole copy).
/// Throws IoError naming what cannot be written.
void write_file_whole(const std::string& path, const std::string& text);

/// Keeps `plan` (a JSON object's text: what decides the samples of each shard of a pack) as
/// DIR/kPackPlanName: written when DIR has none, else compared key by key. Another plan throws
/// UsageError naming what changed: "DIR holds shards of another pack (order seed 0 then, seed 7
/// now): give the arguments it began with, or pack into a new directory" (shards kept from it
/// would hold some samples twice and lose others).
void keep_pack_plan(const std::string& dir, const std::string& plan);

}  // namespace gpufeed::formats
