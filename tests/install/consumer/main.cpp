// Packs a tiny dataset and iterates it with the installed library.
#include <cstdio>
#include <string>
#include <vector>

#include <gpufeed/diagnosis/diagnosis.hpp>
#include <gpufeed/diagnosis/run_facts.hpp>
#include <gpufeed/formats/dataset_writer.hpp>
#include <gpufeed/formats/pack.hpp>
#include <gpufeed/pipeline/loader.hpp>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  const std::string path = argv[1];
  gpufeed::formats::DatasetWriter writer(path, 100, {4, 4, 3, gpufeed::formats::Layout::nhwc});
  gpufeed::formats::pack_images(
      writer,
      [](std::uint64_t first, std::uint64_t, std::span<std::uint8_t> out) {
        for (std::size_t b = 0; b < out.size(); ++b) out[b] = static_cast<std::uint8_t>(first + b);
      },
      1);
  writer.write_labels(std::vector<std::int64_t>(100, 1));
  writer.commit();

  // Designated initializers, group by group, as a trainer writes them.
  gpufeed::Loader loader(
      gpufeed::LoaderOptions{.source = {.path = path}, .sampling = {.batch_size = 10}});
  std::uint64_t samples = 0;
  for (gpufeed::Batch& batch : loader.epoch(0)) samples += batch.size();
  // The diagnosis library a trainer links to describe its own runs.
  const gpufeed::LoaderStats stats = loader.stats();
  const auto facts = gpufeed::diagnosis::run_facts(loader, stats);
  const auto json = gpufeed::diagnosis::stats_json(stats);
  std::printf("consumer read %llu samples; %zu stats keys, %llu chunks\n",
              static_cast<unsigned long long>(samples), json.size(),
              static_cast<unsigned long long>(facts.chunks));
  return samples == 100 && !json.empty() ? 0 : 1;
}
