// The range checks of LoaderOptions, from the one table of its fields (kLoaderFields).
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/pipeline/loader.hpp"

namespace gpufeed {

namespace {

void check_count(const char* field, const AutoCount& count) {
  if (!count.is_auto()) check_field_range(field, count.value_or(0));
}

}  // namespace

void check_options(const LoaderOptions& o) {
  check_field_range("batch_size", o.batch_size);
  check_count("workers", o.workers);
  check_count("prefetch", o.prefetch);
  check_field_range("cpu_budget", o.cpu_budget);
  check_field_range("memory_bytes", o.memory_bytes);
  check_field_range("seed", o.seed);
  check_field_range("chunk_window", o.chunk_window);
  check_field_range("cache_bytes", o.cache_bytes);
  check_count("read_requests", o.read_requests);
  check_field_range("cache_dir_bytes", o.cache_dir_bytes);
  Geometry g = o.geometry;  // a crop's size is `size`
  if (g.crop != Geometry::Crop::none && g.crop_height == 0) {
    g.crop_height = o.height;
    g.crop_width = o.width;
  }
  g.validate();
}

Geometry loader_geometry(const LoaderOptions& o, bool jpeg) {
  Geometry g = o.geometry;
  if (!g.active()) return g;
  if (o.augment != Augment::none) {
    throw OptionError("augment", "{augment}=" + to_string(o.augment) + " beside " + g.describe() +
                                     ": use one of them ({augment} is the short "
                                     "spelling of the same crops and flips)");
  }
  constexpr std::uint32_t kDefaultSide = 224;
  if (g.crop != Geometry::Crop::none) {
    if (o.height != 0 && o.width != 0) {
      g.crop_height = o.height;
      g.crop_width = o.width;
    }
    if (g.crop_height == 0 || g.crop_width == 0) {
      throw OptionError("crop",
                        "{crop}=" + to_string(g.crop) + " needs the crop's size: set {size}");
    }
  } else if (jpeg && g.resize == Geometry::Resize::none) {
    // Flips alone: every image is resized to the output size, as augment=flip does.
    g.resize = Geometry::Resize::exact;
    g.resize_height = o.height != 0 ? o.height : kDefaultSide;
    g.resize_width = o.width != 0 ? o.width : kDefaultSide;
  } else if (jpeg && g.resize == Geometry::Resize::shorter) {
    throw OptionError("resize", "{resize}=" + std::to_string(g.resize_height) +
                                    " alone gives each image of a jpeg file its own size, and a "
                                    "batch needs one: add a crop ({crop}=center, {size}) or "
                                    "resize to (height, width)");
  } else if (o.height != 0 && g.resize == Geometry::Resize::exact &&
             (o.height != g.resize_height || o.width != g.resize_width)) {
    throw OptionError("size", "{size} differs from {resize}'s size; drop {size}");
  }
  g.validate();
  return g;
}

}  // namespace gpufeed
