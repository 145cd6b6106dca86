// The range checks of LoaderOptions, from the one table of its fields (kLoaderFields).
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed::pipeline {

namespace {

void check_count(const char* field, const AutoCount& count) {
  if (!count.is_auto()) check_field_range(field, count.value_or(0));
}

}  // namespace

void check_options(const LoaderOptions& o) {
  check_field_range("batch_size", o.sampling.batch_size);
  check_count("workers", o.resources.workers);
  check_count("prefetch", o.resources.prefetch);
  check_field_range("cpu_budget", o.resources.cpu_budget);
  check_field_range("memory_bytes", o.resources.memory_bytes);
  check_field_range("seed", o.sampling.seed);
  check_field_range("chunk_window", o.sampling.chunk_window);
  check_field_range("cache_bytes", o.storage.cache_bytes);
  check_count("read_requests", o.storage.read_requests);
  check_field_range("cache_dir_bytes", o.storage.cache_dir_bytes);
  Geometry g = o.image.geometry;  // a crop's size is `size`
  if (g.crop != Geometry::Crop::none && g.crop_height == 0) {
    g.crop_height = o.image.height;
    g.crop_width = o.image.width;
  }
  g.validate();
}

Geometry loader_geometry(const LoaderOptions& o, bool jpeg) {
  Geometry g = o.image.geometry;
  if (!g.active()) return g;
  if (o.image.augment != Augment::none) {
    throw OptionError("augment", "{augment}=" + to_string(o.image.augment) + " beside " +
                                     g.describe() +
                                     ": use one of them ({augment} is the short "
                                     "spelling of the same crops and flips)");
  }
  constexpr std::uint32_t kDefaultSide = 224;
  if (g.crop != Geometry::Crop::none) {
    if (o.image.height != 0 && o.image.width != 0) {
      g.crop_height = o.image.height;
      g.crop_width = o.image.width;
    }
    if (g.crop_height == 0 || g.crop_width == 0) {
      throw OptionError("crop",
                        "{crop}=" + to_string(g.crop) + " needs the crop's size: set {size}");
    }
  } else if (jpeg && g.resize == Geometry::Resize::none) {
    // Flips alone: every image is resized to the output size, as augment=flip does.
    g.resize = Geometry::Resize::exact;
    g.resize_height = o.image.height != 0 ? o.image.height : kDefaultSide;
    g.resize_width = o.image.width != 0 ? o.image.width : kDefaultSide;
  } else if (jpeg && g.resize == Geometry::Resize::shorter) {
    throw OptionError("resize", "{resize}=" + std::to_string(g.resize_height) +
                                    " alone gives each image of a jpeg file its own size, and a "
                                    "batch needs one: add a crop ({crop}=center, {size}) or "
                                    "resize to (height, width)");
  } else if (o.image.height != 0 && g.resize == Geometry::Resize::exact &&
             (o.image.height != g.resize_height || o.image.width != g.resize_width)) {
    throw OptionError("size", "{size} differs from {resize}'s size; drop {size}");
  }
  g.validate();
  return g;
}

}  // namespace gpufeed::pipeline
