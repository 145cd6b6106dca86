// h5pack info and verify of a dataset of shards (a directory with its manifest, a manifest, a
// glob): info opens the dataset as the Loader does (every shard checked against the manifest)
// and lists its shards; verify checks each shard as a file on its own, goes on past a bad one,
// then opens the whole as the Loader does.
#include <cstdio>
#include <exception>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/cli.hpp"
#include "gpufeed/formats/probe.hpp"
#include "gpufeed/formats/shards.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/info_text.hpp"

namespace gpufeed::tools::h5pack {

using nlohmann::json;

namespace {

formats::ShardList shard_list(const InspectOptions& o) {
  return formats::resolve_shards(std::span<const std::string>(&o.file, 1));
}

/// The dataset's layout: the manifest's, else the first shard's.
formats::FileLayout layout_of(const formats::ShardList& list, const InspectOptions& o) {
  if (list.layout == "jpeg") return formats::FileLayout::jpeg;
  if (list.layout == "raw" || !default_dataset_options(o)) return formats::FileLayout::raw;
  return formats::probe_layout(list.files.front().path);
}

json shard_rows(const formats::ShardedDataset& d, const formats::ShardList& list) {
  json rows = json::array();
  for (std::size_t k = 0; k < d.num_shards(); ++k) {
    json row = {{"path", list.files[k].path}, {"samples", d.shard(k).num_samples()}};
    row["bytes"] = list.files[k].bytes ? json(*list.files[k].bytes) : json(nullptr);
    rows.push_back(row);
  }
  return rows;
}

json info_json(const formats::ShardedDataset& d, const formats::ShardList& list) {
  json j = {{"path", list.name},
            {"storage", d.layout() == formats::FileLayout::jpeg ? "jpeg" : "raw"},
            {"manifest", !list.layout.empty()},
            {"samples", d.num_samples()},
            {"chunks", d.num_chunks()},
            {"compression", d.compression()},
            {"read_path", d.read_path_name()}};
  if (const auto* raw = dynamic_cast<const formats::RawShards*>(&d)) {
    const formats::SampleShape shape = raw->sample_shape();
    j["layout"] = formats::to_string(shape.layout);
    j["shape"] = {shape.height, shape.width, shape.channels};
    j["sample_bytes"] = shape.bytes();
    j["chunk"] = d.samples_per_chunk();
    j["stored_bytes"] = raw->stored_bytes();
  } else {
    j["encoded_bytes"] = dynamic_cast<const formats::JpegShards&>(d).total_bytes();
  }
  add_contents_json(j, d.labels(), d.class_names(), d.channel_stats());
  j["shards"] = shard_rows(d, list);
  return j;
}

void print_text(const json& j) {
  const json& shards = j["shards"];
  print_row("dataset", j["path"].get<std::string>() + " (" + std::to_string(shards.size()) +
                           " shards" + (j["manifest"].get<bool>() ? ", manifest" : "") + ")");
  print_row("storage", j["storage"].get<std::string>());
  print_row("samples", j["samples"].dump());
  if (j.contains("shape")) {
    const json& s = j["shape"];
    print_row("sample", s[0].dump() + "x" + s[1].dump() + "x" + s[2].dump() + " " +
                            j["layout"].get<std::string>() + " (" + j["sample_bytes"].dump() +
                            " bytes)");
    print_row("chunking",
              j["chunk"].dump() + " samples per chunk, " + j["chunks"].dump() + " chunks in all");
    print_row("compression", j["compression"].get<std::string>());
    print_row("stored", j["stored_bytes"].dump() + " bytes of images");
  } else {
    print_row("images",
              j["encoded_bytes"].dump() + " bytes encoded, in " + j["chunks"].dump() + " blocks");
  }
  print_row("read path", j["read_path"].get<std::string>());
  print_contents_rows(j);
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const json& s = shards[k];
    std::string line = s["path"].get<std::string>() + "  " + s["samples"].dump() + " samples";
    if (!s["bytes"].is_null()) line += ", " + s["bytes"].dump() + " bytes";
    print_row(k == 0 ? "shards" : "", line);
  }
}

std::unique_ptr<formats::ShardedDataset> open_shards(const formats::ShardList& list,
                                                     const InspectOptions& o) {
  if (layout_of(list, o) == formats::FileLayout::jpeg) {
    return std::make_unique<formats::JpegShards>(list, jpeg_reader_options(o));
  }
  return std::make_unique<formats::RawShards>(list, reader_options(o));
}

}  // namespace

int run_info_shards(const InspectOptions& o) {
  const formats::ShardList list = shard_list(o);
  const auto dataset = open_shards(list, o);
  return print_info(info_json(*dataset, list), o.json, print_text);
}

int run_verify_shards(const InspectOptions& o) {
  const formats::ShardList list = shard_list(o);
  const std::size_t n = list.files.size();
  std::vector<std::string> failed;
  for (std::size_t k = 0; k < n; ++k) {
    const std::string name =
        "shard " + std::to_string(k) + " of " + std::to_string(n) + " (" + list.files[k].path + ")";
    int status = kExitFailure;
    try {
      status = verify_file(list.files[k].path, o, name);
    } catch (const std::exception& e) {
      print_error(kProgram, name + ": " + one_line(e.what()));
    }
    if (status != kExitOk) failed.push_back(std::to_string(k));
  }
  if (!failed.empty()) {
    std::string which;
    for (const std::string& k : failed) which += (which.empty() ? "" : ", ") + k;
    print_error(kProgram, list.name + ": " + std::to_string(failed.size()) + " of " +
                              std::to_string(n) + " shards failed verification (" + which +
                              "); remove them and run the same h5pack convert again: it keeps "
                              "the whole shards and packs the rest");
    return kExitFailure;
  }
  // Every shard is sound on its own: now as one dataset, against the manifest's counts, with
  // one layout, shape and set of class names.
  const auto dataset = open_shards(list, o);
  std::printf("ok: %zu shards, %llu samples verified%s\n", n,
              static_cast<unsigned long long>(dataset->num_samples()),
              list.layout.empty() ? "" : ", as the manifest lists them");
  return kExitOk;
}

}  // namespace gpufeed::tools::h5pack
