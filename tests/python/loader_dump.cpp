// Runs the C++ Loader and writes what it delivered, so the Python tests can check that
// gpufeed.Loader delivers the same batches for the same settings:
//   loader_dump FILE.h5 OUT_PREFIX --order O --seed S --batch B --workers W --epoch E
//               [--rank R --world N] [--echo X] [--augment A] [--size HxW]
// writes OUT_PREFIX.json (per batch: index, echoed, indices, labels) and OUT_PREFIX.bin (the
// float32 images of every batch, back to back).
//   loader_dump --defaults
// prints LoaderOptions' defaults as JSON, in gpufeed.Loader's keywords and units, so the Python
// tests can check the keyword defaults against the C++ ones rather than against a copy.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>

#include "gpufeed/pipeline/loader.hpp"

namespace {

const char* filter_name(gpufeed::formats::ResizeFilter filter) {
  switch (filter) {
    case gpufeed::formats::ResizeFilter::bilinear:
      return "bilinear";
    case gpufeed::formats::ResizeFilter::area:
      return "area";
    case gpufeed::formats::ResizeFilter::bicubic:
      return "bicubic";
  }
  return "?";
}

/// A default-constructed LoaderOptions in the Python keywords (None for an unset optional).
nlohmann::json default_keywords() {
  const gpufeed::LoaderOptions o;
  const nlohmann::json none;
  nlohmann::json d;
  d["images"] = o.source.images;
  d["labels"] = o.source.labels.empty() ? none : nlohmann::json(o.source.labels);
  d["layout"] =
      o.source.layout ? nlohmann::json(gpufeed::formats::to_string(*o.source.layout)) : none;
  d["batch_size"] = o.sampling.batch_size;
  const auto count = [](const gpufeed::AutoCount& c) {
    return c.is_auto() ? nlohmann::json("auto") : nlohmann::json(c.value_or(0));
  };
  d["workers"] = count(o.resources.workers);
  d["prefetch"] = count(o.resources.prefetch);
  d["cpu_budget"] = o.resources.cpu_budget;
  d["memory_bytes"] = o.resources.memory_bytes;
  d["order"] = gpufeed::to_string(o.sampling.order);
  d["seed"] = o.sampling.seed;
  d["chunk_window"] = o.sampling.chunk_window;
  d["cache_bytes"] = o.storage.cache_bytes;
  d["read_requests"] = count(o.storage.read_requests);
  d["cache_dir"] = o.storage.cache_dir.empty() ? none : nlohmann::json(o.storage.cache_dir);
  d["cache_dir_bytes"] = o.storage.cache_dir_bytes;
  d["shard"] = o.sampling.shard
                   ? nlohmann::json({o.sampling.shard->rank, o.sampling.shard->world_size})
                   : none;
  d["drop_tail"] = o.sampling.drop_tail;
  d["drop_last"] = o.sampling.drop_last;
  d["mean"] = o.output.mean.empty() ? none : nlohmann::json(o.output.mean);
  d["stddev"] = o.output.stddev.empty() ? none : nlohmann::json(o.output.stddev);
  d["use_index"] = o.source.use_index;
  d["device"] = o.output.device.str();
  d["dtype"] = gpufeed::to_string(o.output.dtype);
  d["output_layout"] = gpufeed::formats::to_string(o.output.layout);
  d["echo"] = o.echo.adaptive ? nlohmann::json(o.echo.to_string()) : nlohmann::json(o.echo.factor);
  d["reaugment_echoes"] = o.echo.reaugment;
  d["size"] = o.image.height == 0 && o.image.width == 0
                  ? none
                  : nlohmann::json({o.image.height, o.image.width});
  d["resize_filter"] = filter_name(o.image.resize_filter);
  d["augment"] = gpufeed::to_string(o.image.augment);
  d["decode"] = gpufeed::to_string(o.image.decode);
  d["on_error"] = gpufeed::to_string(o.on_error);
  const gpufeed::Geometry& g = o.image.geometry;
  d["resize"] = none;
  d["resize_max"] = g.resize_max;
  d["crop"] = gpufeed::to_string(g.crop);
  d["crop_scale"] = {g.scale_min, g.scale_max};
  d["crop_ratio"] = {g.ratio_min, g.ratio_max};
  d["crop_padding"] = g.pad_left;
  d["pad_if_needed"] = g.pad_if_needed;
  d["hflip"] = g.hflip;
  d["vflip"] = g.vflip;
  return d;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "--defaults") {
    std::cout << default_keywords().dump() << "\n";
    return 0;
  }
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
    o.source.path = argv[1];
    o.sampling.order = gpufeed::parse_order(get("--order", "chunk"));
    o.sampling.seed = std::stoull(get("--seed", "0"));
    o.sampling.batch_size = static_cast<std::uint32_t>(std::stoul(get("--batch", "256")));
    o.resources.workers = static_cast<unsigned>(std::stoul(get("--workers", "2")));
    o.sampling.shard = gpufeed::Shard{static_cast<std::uint32_t>(std::stoul(get("--rank", "0"))),
                                      static_cast<std::uint32_t>(std::stoul(get("--world", "1")))};
    o.echo = gpufeed::EchoOptions::parse(get("--echo", "1"));
    o.image.augment = gpufeed::parse_augment(get("--augment", "none"));
    if (const std::string size = get("--size", ""); !size.empty()) {
      o.image.height = static_cast<std::uint32_t>(std::stoul(size.substr(0, size.find('x'))));
      o.image.width = static_cast<std::uint32_t>(std::stoul(size.substr(size.find('x') + 1)));
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
