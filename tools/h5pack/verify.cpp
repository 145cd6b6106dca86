// h5pack verify FILE.h5: reads every chunk and checks every label.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/probe.hpp"
#include "gpufeed/formats/shard_list.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/problem_list.hpp"

namespace gpufeed::tools::h5pack {

namespace {

/// The line that says what is wrong with chunk `c`, if anything.
std::optional<std::string> check_chunk(const formats::DatasetReader& reader, std::uint64_t c,
                                       std::vector<std::uint8_t>& buffer) {
  try {
    reader.read_chunk(c, buffer);
  } catch (const std::exception& e) {
    const std::uint64_t first = reader.chunk_first_sample(c);
    const std::uint64_t last = first + reader.chunk_sample_count(c) - 1;
    return "bad chunk " + std::to_string(c) + " (samples " + std::to_string(first) + "-" +
           std::to_string(last) + "): " + one_line(e.what());
  }
  return std::nullopt;
}

void check_chunks(const formats::DatasetReader& reader, VerifyPass& pass) {
  std::vector<std::uint8_t> buffer(reader.chunk_buffer_bytes());
  plan_every_unit(reader);
  for (std::uint64_t c = 0; c < reader.num_chunks(); ++c) {
    pass.checked(c, check_chunk(reader, c, buffer));
  }
}

}  // namespace

int verify_file(const std::string& file, const InspectOptions& o, const std::string& name) {
  if (default_dataset_options(o) && formats::probe_layout(file) == formats::FileLayout::jpeg) {
    return verify_jpeg_file(file, o, name);
  }
  const formats::DatasetReader reader(file, reader_options(o));
  VerifyPass pass("chunks", reader.num_chunks(), reader.chunk_buffer_bytes());
  check_chunks(reader, pass);
  return pass.verdict(name.empty() ? file : name, reader.labels(), reader.class_names().size(),
                      (name.empty() ? "" : name + ": ") +
                          "ok: " + std::to_string(reader.num_samples()) + " samples, " +
                          std::to_string(reader.num_chunks()) + " chunks verified");
}

int run_verify(const InspectOptions& o) {
  if (formats::names_shards(o.file)) return run_verify_shards(o);
  return verify_file(o.file, o, "");
}

}  // namespace gpufeed::tools::h5pack
