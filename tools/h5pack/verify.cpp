// h5pack verify FILE.h5: reads every chunk and checks every label.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/progress.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "gpufeed/formats/probe.hpp"
#include "h5pack/commands.hpp"
#include "h5pack/problem_list.hpp"

namespace gpufeed::tools::h5pack {

namespace {

std::uint64_t check_chunks(const formats::DatasetReader& reader) {
  std::vector<std::uint8_t> buffer(reader.chunk_buffer_bytes());
  ProgressBar bar("verifying", reader.num_chunks(), reader.chunk_buffer_bytes());
  ProblemList problems;
  for (std::uint64_t c = 0; c < reader.num_chunks(); ++c) {
    try {
      reader.read_chunk(c, buffer);
    } catch (const std::exception& e) {
      const std::uint64_t first = reader.chunk_first_sample(c);
      const std::uint64_t last = first + reader.chunk_sample_count(c) - 1;
      bar.finish();
      problems.add("bad chunk " + std::to_string(c) + " (samples " + std::to_string(first) + "-" +
                   std::to_string(last) + "): " + one_line(e.what()));
    }
    bar.update(c + 1);
  }
  bar.finish();
  problems.close("bad chunks");
  return problems.count();
}

}  // namespace

int run_verify(const InspectOptions& o) {
  if (default_dataset_options(o) && formats::probe_layout(o.file) == formats::FileLayout::jpeg) {
    return run_verify_jpeg(o);
  }
  const formats::DatasetReader reader(o.file, reader_options(o));
  const std::uint64_t bad_chunks = check_chunks(reader);
  const std::uint64_t bad_labels = check_label_range(reader.labels(), reader.class_names().size());
  if (report_failed_verification(o.file, bad_chunks, reader.num_chunks(), "chunks", bad_labels)) {
    return kExitFailure;
  }
  std::printf("ok: %llu samples, %llu chunks verified\n",
              static_cast<unsigned long long>(reader.num_samples()),
              static_cast<unsigned long long>(reader.num_chunks()));
  return kExitOk;
}

}  // namespace gpufeed::tools::h5pack
