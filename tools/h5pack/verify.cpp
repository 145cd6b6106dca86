// h5pack verify FILE.h5: reads every chunk and checks every label.
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "common/cli.hpp"
#include "common/progress.hpp"
#include "gpufeed/formats/dataset_reader.hpp"
#include "h5pack/commands.hpp"

namespace gpufeed::tools::h5pack {

namespace {

constexpr std::uint64_t kProblemsShown = 20;

/// Prints the first kProblemsShown problems of a kind to stdout and counts them all.
class ProblemList {
 public:
  void add(const std::string& line) {
    if (count_++ < kProblemsShown) std::printf("%s\n", line.c_str());
  }
  void close(const char* kind) const {
    if (count_ > kProblemsShown) {
      std::printf("... and %llu more %s\n",
                  static_cast<unsigned long long>(count_ - kProblemsShown), kind);
    }
  }
  [[nodiscard]] std::uint64_t count() const { return count_; }

 private:
  std::uint64_t count_ = 0;
};

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

std::uint64_t check_labels(const formats::DatasetReader& reader) {
  const auto& labels = reader.labels();
  if (std::all_of(labels.begin(), labels.end(), [](auto l) { return l == -1; })) return 0;
  const auto classes = static_cast<std::int64_t>(reader.class_names().size());
  ProblemList problems;
  for (std::size_t i = 0; i < labels.size(); ++i) {
    const std::int64_t l = labels[i];
    if (l < 0) {
      problems.add("bad label of sample " + std::to_string(i) + ": " + std::to_string(l) +
                   " is negative");
    } else if (classes > 0 && l >= classes) {
      problems.add("bad label of sample " + std::to_string(i) + ": " + std::to_string(l) +
                   " is not below the " + std::to_string(classes) + " class names");
    }
  }
  problems.close("bad labels");
  return problems.count();
}

}  // namespace

CLI::App* add_verify_command(CLI::App& app, InspectOptions& o) {
  CLI::App* cmd = app.add_subcommand("verify", "Read every chunk and check every label");
  add_reader_options(*cmd, o);
  return cmd;
}

int run_verify(const InspectOptions& o) {
  const formats::DatasetReader reader(o.file, reader_options(o));
  const std::uint64_t bad_chunks = check_chunks(reader);
  const std::uint64_t bad_labels = check_labels(reader);
  if (bad_chunks + bad_labels > 0) {
    print_error(kProgram, o.file + ": " + std::to_string(bad_chunks) + " of " +
                              std::to_string(reader.num_chunks()) + " chunks and " +
                              std::to_string(bad_labels) +
                              " labels failed verification; re-create the file with h5pack "
                              "convert");
    return kExitFailure;
  }
  std::printf("ok: %llu samples, %llu chunks verified\n",
              static_cast<unsigned long long>(reader.num_samples()),
              static_cast<unsigned long long>(reader.num_chunks()));
  return kExitOk;
}

}  // namespace gpufeed::tools::h5pack
