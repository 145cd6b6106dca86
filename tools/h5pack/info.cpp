// h5pack info FILE.h5 [--json]: what a dataset file holds and how it will be read.
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/probe.hpp"
#include "gpufeed/formats/shard_list.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/info_text.hpp"

namespace gpufeed::tools::h5pack {

using nlohmann::json;

namespace {

json info_json(const formats::DatasetReader& r) {
  const formats::SampleShape shape = r.sample_shape();
  const std::uint64_t raw = r.num_samples() * shape.bytes();
  const std::uint64_t stored = r.stored_bytes();
  json j = {{"path", r.path()},
            {"schema_version", r.schema_version()},
            {"storage", "raw"},
            {"layout", formats::to_string(shape.layout)},
            {"samples", r.num_samples()},
            {"shape", {shape.height, shape.width, shape.channels}},
            {"sample_bytes", shape.bytes()},
            {"chunk", r.samples_per_chunk()},
            {"chunks", r.num_chunks()},
            {"chunk_bytes", r.chunk_buffer_bytes()},
            {"compression", r.compression()},
            {"read_path", formats::to_string(r.read_path())},
            {"images", r.options().images},
            {"stored_bytes", stored},
            {"raw_bytes", raw},
            {"compression_ratio",
             stored == 0 ? 0.0 : static_cast<double>(raw) / static_cast<double>(stored)}};
  add_contents_json(j, r.labels(), r.class_names(), r.channel_stats());
  return j;
}

void print_text(const json& j) {
  const auto& s = j["shape"];
  char ratio[32];
  std::snprintf(ratio, sizeof ratio, "%.2f", j["compression_ratio"].get<double>());
  print_file_rows(j);
  print_row("samples", j["samples"].dump());
  print_row("sample", s[0].dump() + "x" + s[1].dump() + "x" + s[2].dump() + " " +
                          j["layout"].get<std::string>() + " (" + j["sample_bytes"].dump() +
                          " bytes)");
  print_row("chunking", j["chunk"].dump() + " samples per chunk, " + j["chunks"].dump() +
                            " chunks, " + j["chunk_bytes"].dump() + " bytes each");
  print_row("compression", j["compression"].get<std::string>());
  print_row("read path", j["read_path"].get<std::string>());
  print_row("stored", j["stored_bytes"].dump() + " bytes (ratio " + ratio + " of " +
                          j["raw_bytes"].dump() + " raw)");
  print_contents_rows(j);
}

}  // namespace

int run_info(const InspectOptions& o) {
  if (formats::names_shards(o.file)) return run_info_shards(o);
  if (default_dataset_options(o) && formats::probe_layout(o.file) == formats::FileLayout::jpeg) {
    return run_info_jpeg(o);
  }
  const formats::DatasetReader reader(o.file, reader_options(o));
  return print_info(info_json(reader), o.json, print_text);
}

}  // namespace gpufeed::tools::h5pack
