// Runs the C++ Loader and writes what it delivered, so the Python tests can check that
// gpufeed.Loader delivers the same batches for the same settings:
//   loader_dump FILE.h5 OUT_PREFIX --order O --seed S --batch B --workers W --epoch E
//               [--rank R --world N] [--echo X] [--augment A] [--size HxW]
// writes OUT_PREFIX.json (per batch: index, echoed, indices, labels) and OUT_PREFIX.bin (the
// float32 images of every batch, back to back).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "gpufeed/pipeline/loader.hpp"

int main(int argc, char** argv) {
  if (argc < 3 || (argc - 3) % 2 != 0) {
    std::cerr << "usage: loader_dump FILE.h5 OUT_PREFIX [--key value]...\n";
    return 2;
  }
  std::map<std::string, std::string> args;
  for (int i = 3; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  auto get = [&](const std::string& key, const std::string& fallback) {
    const auto it = args.find(key);
    return it == args.end() ? fallback : it->second;
  };
  try {
    gpufeed::LoaderOptions o;
    o.path = argv[1];
    o.order = gpufeed::parse_order(get("--order", "chunk"));
    o.seed = std::stoull(get("--seed", "0"));
    o.batch_size = static_cast<std::uint32_t>(std::stoul(get("--batch", "256")));
    o.workers = static_cast<unsigned>(std::stoul(get("--workers", "2")));
    o.shard = gpufeed::Shard{static_cast<std::uint32_t>(std::stoul(get("--rank", "0"))),
                             static_cast<std::uint32_t>(std::stoul(get("--world", "1")))};
    o.echo = gpufeed::EchoOptions::parse(get("--echo", "1"));
    o.augment = gpufeed::parse_augment(get("--augment", "none"));
    if (const std::string size = get("--size", ""); !size.empty()) {
      o.height = static_cast<std::uint32_t>(std::stoul(size.substr(0, size.find('x'))));
      o.width = static_cast<std::uint32_t>(std::stoul(size.substr(size.find('x') + 1)));
    }
    gpufeed::Loader loader(o);
    const std::string prefix = argv[2];
    std::ofstream bin(prefix + ".bin", std::ios::binary);
    nlohmann::json batches = nlohmann::json::array();
    for (gpufeed::Batch& b : loader.epoch(std::stoull(get("--epoch", "0")))) {
      const auto images = b.images();
      bin.write(reinterpret_cast<const char*>(images.data()),
                static_cast<std::streamsize>(images.size_bytes()));
      nlohmann::json one;
      one["index"] = b.index();
      one["echoed"] = b.echoed();
      one["indices"] =
          std::vector<std::uint64_t>(b.sample_indices().begin(), b.sample_indices().end());
      one["labels"] = std::vector<std::int64_t>(b.labels().begin(), b.labels().end());
      batches.push_back(one);
    }
    std::ofstream(prefix + ".json") << batches.dump() << "\n";
  } catch (const std::exception& e) {
    std::cerr << "loader_dump: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
