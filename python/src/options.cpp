#include "options.hpp"

#include <nanobind/stl/string.h>

#include <functional>
#include <map>
#include <string>

#include "errors.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/pipeline/sampler.hpp"

namespace nb = nanobind;

namespace gpufeed::python {

namespace {

std::string python_type_name(nb::handle value) {
  return nb::cast<std::string>(nb::handle(value.type()).attr("__name__"));
}

[[noreturn]] void bad_type(const char* key, nb::handle value, const char* expected) {
  throw_usage(std::string(key) + "=" + nb::cast<std::string>(nb::repr(value)) + ": expected " +
              expected + ", got " + python_type_name(value));
}

/// An int within the range of the field `key` names (kLoaderFields), else within [low, high].
std::uint64_t to_count(const char* key, nb::handle value, std::uint64_t low = 0,
                       std::uint64_t high = ~std::uint64_t{0}) {
  if (!PyLong_Check(value.ptr()) || PyBool_Check(value.ptr())) bad_type(key, value, "an int");
  const FieldRange range = field_range(key);
  const std::string given = nb::cast<std::string>(nb::repr(value));
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0 || v < 0) {
    throw OptionError(key,
                      "{" + std::string(key) + "}=" + given + ": use " +
                          (range.high != 0 ? range_text(key)
                                           : std::to_string(low) + " to " + std::to_string(high)));
  }
  const auto n = static_cast<std::uint64_t>(v);
  if (range.high != 0) {
    check_field_range(key, n, given);
  } else if (n < low || n > high) {
    throw_usage(std::string(key) + "=" + given + ": use " + std::to_string(low) + " to " +
                std::to_string(high));
  }
  return n;
}

/// A count, or "auto" (tuned while the loader runs).
AutoCount to_auto_count(const char* key, nb::handle value) {
  if (PyUnicode_Check(value.ptr())) {
    if (nb::cast<std::string>(value) == "auto") return AutoCount::automatic();
    throw OptionError(key, "{" + std::string(key) + "}=" + nb::cast<std::string>(nb::repr(value)) +
                               ": use " + range_text(key));
  }
  return static_cast<unsigned>(to_count(key, value));
}

bool to_bool(const char* key, nb::handle value) {
  if (!PyBool_Check(value.ptr())) bad_type(key, value, "True or False");
  return value.ptr() == Py_True;
}

std::string to_text(const char* key, nb::handle value) {
  if (!nb::isinstance<nb::str>(value)) bad_type(key, value, "a str");
  return nb::cast<std::string>(value);
}

/// A device given as a string or as a torch.device ("cuda:1" from device(type='cuda', index=1)).
std::string to_device_text(nb::handle value) {
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  if (nb::hasattr(value, "type") && nb::hasattr(value, "index") &&
      nb::isinstance<nb::str>(value.attr("type"))) {
    std::string text = nb::cast<std::string>(value.attr("type"));
    const nb::object index = value.attr("index");
    if (!index.is_none()) text += ":" + std::to_string(nb::cast<long long>(index));
    return text;
  }
  bad_type("device", value, "a str or a torch.device");
}

/// A dtype given as a string or as a framework's dtype object (torch.bfloat16, numpy's float32).
std::string to_dtype_text(nb::handle value) {
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  std::string text = nb::cast<std::string>(nb::str(value));
  if (text.rfind("torch.", 0) == 0) text = text.substr(6);
  if (text.rfind("<class 'numpy.", 0) == 0) text = text.substr(14, text.size() - 16);
  return text;
}

std::vector<float> to_floats(const char* key, nb::handle value) {
  std::vector<float> out;
  if (value.is_none()) return out;
  if (nb::isinstance<nb::str>(value) || !PySequence_Check(value.ptr())) {
    bad_type(key, value, "a sequence of numbers (one per channel) or None");
  }
  for (nb::handle item : value) {
    if (!PyFloat_Check(item.ptr()) && !PyLong_Check(item.ptr())) {
      bad_type(key, value, "a sequence of numbers (one per channel) or None");
    }
    out.push_back(static_cast<float>(nb::cast<double>(item)));
  }
  return out;
}

void set_size(LoaderOptions& o, nb::handle value) {
  if (value.is_none()) {
    o.image.height = o.image.width = 0;
    return;
  }
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    o.image.height = o.image.width = static_cast<std::uint32_t>(to_count("size", value, 1, 4096));
    return;
  }
  if (!PySequence_Check(value.ptr()) || nb::isinstance<nb::str>(value) || nb::len(value) != 2) {
    bad_type("size", value, "(height, width), an int for a square, or None");
  }
  o.image.height = static_cast<std::uint32_t>(to_count("size", value[0], 1, 4096));
  o.image.width = static_cast<std::uint32_t>(to_count("size", value[1], 1, 4096));
}

void set_shard(LoaderOptions& o, nb::handle value) {
  if (value.is_none()) {
    o.sampling.shard.reset();
    return;
  }
  if (!PySequence_Check(value.ptr()) || nb::isinstance<nb::str>(value) || nb::len(value) != 2) {
    bad_type("shard", value, "(rank, world_size) or None");
  }
  const auto rank = static_cast<std::uint32_t>(to_count("shard", value[0], 0, 1u << 20));
  const auto world = static_cast<std::uint32_t>(to_count("shard", value[1], 1, 1u << 20));
  if (rank >= world) {
    throw_usage("shard=" + nb::cast<std::string>(nb::repr(value)) + ": rank " +
                std::to_string(rank) + " is not below world_size " + std::to_string(world));
  }
  o.sampling.shard = Shard{rank, world};
}

/// The schedule alone: reaugment_echoes is a keyword of its own, given before or after.
void set_echo(LoaderOptions& o, nb::handle value) {
  std::string text;
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    text = std::to_string(to_count("echo", value, 1, 64));
  } else if (nb::isinstance<nb::str>(value)) {
    text = nb::cast<std::string>(value);
  } else {
    bad_type("echo", value, "an int factor, 'auto' or 'auto:CAP'");
  }
  o.echo = EchoOptions::parse(text).with_reaugment(o.echo.reaugment);
}

/// A probability, 0 to 1.
double to_probability(const char* key, nb::handle value) {
  if ((!PyFloat_Check(value.ptr()) && !PyLong_Check(value.ptr())) || PyBool_Check(value.ptr())) {
    bad_type(key, value, "a probability (a number from 0 to 1)");
  }
  const double p = nb::cast<double>(value);
  if (!(p >= 0 && p <= 1)) {
    throw OptionError(key, "{" + std::string(key) + "}=" + nb::cast<std::string>(nb::repr(value)) +
                               ": a probability, 0 to 1");
  }
  return p;
}

/// A (low, high) pair of numbers.
void to_pair(const char* key, nb::handle value, double& low, double& high) {
  if (nb::isinstance<nb::str>(value) || !PySequence_Check(value.ptr()) || nb::len(value) != 2) {
    bad_type(key, value, "(low, high)");
  }
  for (int i = 0; i < 2; ++i) {
    nb::handle item = value[i];
    if ((!PyFloat_Check(item.ptr()) && !PyLong_Check(item.ptr())) || PyBool_Check(item.ptr())) {
      bad_type(key, value, "(low, high), two numbers");
    }
  }
  low = nb::cast<double>(value[0]);
  high = nb::cast<double>(value[1]);
}

/// resize=None | N (the shorter side) | (h, w).
void set_resize(LoaderOptions& o, nb::handle value) {
  Geometry& g = o.image.geometry;
  if (value.is_none()) {
    g.resize = Geometry::Resize::none;
    g.resize_height = g.resize_width = 0;
    return;
  }
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    g.resize = Geometry::Resize::shorter;
    g.resize_height = static_cast<std::uint32_t>(to_count("resize", value, 1, 16384));
    return;
  }
  if (!PySequence_Check(value.ptr()) || nb::isinstance<nb::str>(value) || nb::len(value) != 2) {
    bad_type("resize", value, "an int (the shorter side), (height, width) or None");
  }
  g.resize = Geometry::Resize::exact;
  g.resize_height = static_cast<std::uint32_t>(to_count("resize", value[0], 1, 16384));
  g.resize_width = static_cast<std::uint32_t>(to_count("resize", value[1], 1, 16384));
}

/// crop_padding=N | (left/right, top/bottom) | (left, top, right, bottom), as RandomCrop's.
void set_padding(LoaderOptions& o, nb::handle value) {
  std::vector<std::uint32_t> p;
  if (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) {
    p.assign(4, static_cast<std::uint32_t>(to_count("crop_padding", value, 0, 16384)));
  } else if (PySequence_Check(value.ptr()) && !nb::isinstance<nb::str>(value) &&
             (nb::len(value) == 2 || nb::len(value) == 4)) {
    for (nb::handle item : value) {
      p.push_back(static_cast<std::uint32_t>(to_count("crop_padding", item, 0, 16384)));
    }
    if (p.size() == 2) p = {p[0], p[1], p[0], p[1]};
  } else {
    bad_type("crop_padding", value, "an int, (horizontal, vertical) or (left, top, right, bottom)");
  }
  o.image.geometry.pad_left = p[0];
  o.image.geometry.pad_top = p[1];
  o.image.geometry.pad_right = p[2];
  o.image.geometry.pad_bottom = p[3];
}

formats::ResizeFilter parse_filter(const std::string& text) {
  if (text == "bilinear") return formats::ResizeFilter::bilinear;
  if (text == "area") return formats::ResizeFilter::area;
  if (text == "bicubic") return formats::ResizeFilter::bicubic;
  throw_usage("resize_filter='" + text + "': use 'bilinear', 'bicubic' or 'area'");
}

using Setter = std::function<void(LoaderOptions&, nb::handle)>;

const std::map<std::string, Setter>& setters() {
  static const std::map<std::string, Setter> table = {
      {"images", [](LoaderOptions& o, nb::handle v) { o.source.images = to_text("images", v); }},
      {"labels", [](LoaderOptions& o,
                    nb::handle v) { o.source.labels = v.is_none() ? "" : to_text("labels", v); }},
      {"layout",
       [](LoaderOptions& o, nb::handle v) {
         if (v.is_none()) {
           o.source.layout.reset();
         } else {
           o.source.layout = formats::parse_layout(to_text("layout", v));
         }
       }},
      {"batch_size",
       [](LoaderOptions& o, nb::handle v) {
         o.sampling.batch_size = static_cast<std::uint32_t>(to_count("batch_size", v));
       }},
      {"workers",
       [](LoaderOptions& o, nb::handle v) { o.resources.workers = to_auto_count("workers", v); }},
      {"prefetch",
       [](LoaderOptions& o, nb::handle v) { o.resources.prefetch = to_auto_count("prefetch", v); }},
      {"cpu_budget",
       [](LoaderOptions& o, nb::handle v) {
         o.resources.cpu_budget = static_cast<unsigned>(to_count("cpu_budget", v));
       }},
      {"memory_bytes",
       [](LoaderOptions& o, nb::handle v) {
         o.resources.memory_bytes = to_count("memory_bytes", v);
       }},
      {"order",
       [](LoaderOptions& o, nb::handle v) { o.sampling.order = parse_order(to_text("order", v)); }},
      {"seed", [](LoaderOptions& o, nb::handle v) { o.sampling.seed = to_count("seed", v); }},
      {"chunk_window", [](LoaderOptions& o,
                          nb::handle v) { o.sampling.chunk_window = to_count("chunk_window", v); }},
      {"cache_bytes",
       [](LoaderOptions& o, nb::handle v) { o.storage.cache_bytes = to_count("cache_bytes", v); }},
      {"cache_dir",
       [](LoaderOptions& o, nb::handle v) {
         o.storage.cache_dir = v.is_none() ? "" : to_text("cache_dir", v);
       }},
      {"paths",
       [](LoaderOptions& o, nb::handle v) {
         for (nb::handle p : nb::iter(v)) o.source.paths.push_back(to_text("paths", p));
       }},
      {"cache_dir_bytes",
       [](LoaderOptions& o, nb::handle v) {
         o.storage.cache_dir_bytes = to_count("cache_dir_bytes", v);
       }},
      {"read_requests",
       [](LoaderOptions& o, nb::handle v) {
         o.storage.read_requests = to_auto_count("read_requests", v);
       }},
      {"shard", set_shard},
      {"drop_tail",
       [](LoaderOptions& o, nb::handle v) { o.sampling.drop_tail = to_bool("drop_tail", v); }},
      {"drop_last",
       [](LoaderOptions& o, nb::handle v) { o.sampling.drop_last = to_bool("drop_last", v); }},
      {"mean", [](LoaderOptions& o, nb::handle v) { o.output.mean = to_floats("mean", v); }},
      {"stddev", [](LoaderOptions& o, nb::handle v) { o.output.stddev = to_floats("stddev", v); }},
      {"use_index",
       [](LoaderOptions& o, nb::handle v) { o.source.use_index = to_bool("use_index", v); }},
      {"device",
       [](LoaderOptions& o, nb::handle v) { o.output.device = Device::parse(to_device_text(v)); }},
      {"dtype",
       [](LoaderOptions& o, nb::handle v) { o.output.dtype = parse_dtype(to_dtype_text(v)); }},
      {"output_layout",
       [](LoaderOptions& o, nb::handle v) {
         o.output.layout = formats::parse_layout(to_text("output_layout", v));
       }},
      {"echo", set_echo},
      {"reaugment_echoes",
       [](LoaderOptions& o, nb::handle v) { o.echo.reaugment = to_bool("reaugment_echoes", v); }},
      {"size", set_size},
      {"resize_filter",
       [](LoaderOptions& o, nb::handle v) {
         o.image.resize_filter = parse_filter(to_text("resize_filter", v));
       }},
      {"augment", [](LoaderOptions& o,
                     nb::handle v) { o.image.augment = parse_augment(to_text("augment", v)); }},
      {"decode",
       [](LoaderOptions& o, nb::handle v) { o.image.decode = parse_decode(to_text("decode", v)); }},
      {"on_error",
       [](LoaderOptions& o, nb::handle v) { o.on_error = parse_on_error(to_text("on_error", v)); }},
      {"resize", set_resize},
      {"resize_max",
       [](LoaderOptions& o, nb::handle v) {
         o.image.geometry.resize_max = static_cast<std::uint32_t>(to_count("resize_max", v));
       }},
      {"crop",
       [](LoaderOptions& o, nb::handle v) {
         o.image.geometry.crop = pipeline::parse_crop(to_text("crop", v));
       }},
      {"crop_scale",
       [](LoaderOptions& o, nb::handle v) {
         to_pair("crop_scale", v, o.image.geometry.scale_min, o.image.geometry.scale_max);
       }},
      {"crop_ratio",
       [](LoaderOptions& o, nb::handle v) {
         to_pair("crop_ratio", v, o.image.geometry.ratio_min, o.image.geometry.ratio_max);
       }},
      {"crop_padding", set_padding},
      {"pad_if_needed",
       [](LoaderOptions& o, nb::handle v) {
         o.image.geometry.pad_if_needed = to_bool("pad_if_needed", v);
       }},
      {"hflip",
       [](LoaderOptions& o, nb::handle v) { o.image.geometry.hflip = to_probability("hflip", v); }},
      {"vflip",
       [](LoaderOptions& o, nb::handle v) { o.image.geometry.vflip = to_probability("vflip", v); }},
  };
  return table;
}

}  // namespace

std::string field_keyword(std::string_view field) {
  if (field == "height" || field == "width") return "size";
  return std::string(field);
}

LoaderOptions options_from_keywords(const std::string& path, const nb::dict& keywords) {
  LoaderOptions o;
  o.source.path = path;
  const auto& table = setters();
  for (auto [key, value] : keywords) {
    const std::string name = nb::cast<std::string>(key);
    const auto it = table.find(name);
    if (it == table.end()) {
      throw_usage("unknown keyword '" + name + "' for gpufeed.Loader; see help(gpufeed.Loader)");
    }
    it->second(o, value);
  }
  return o;
}

nb::dict default_keywords() {
  const LoaderOptions o;
  nb::dict d;
  d["images"] = o.source.images;
  d["labels"] = o.source.labels;
  d["layout"] = nb::none();
  d["batch_size"] = o.sampling.batch_size;
  const auto count = [](const AutoCount& c) {
    return c.is_auto() ? nb::object(nb::str("auto")) : nb::object(nb::int_(c.value_or(0)));
  };
  d["workers"] = count(o.resources.workers);
  d["prefetch"] = count(o.resources.prefetch);
  d["cpu_budget"] = o.resources.cpu_budget;
  d["memory_bytes"] = o.resources.memory_bytes;
  d["order"] = to_string(o.sampling.order);
  d["seed"] = o.sampling.seed;
  d["chunk_window"] = o.sampling.chunk_window;
  d["cache_bytes"] = o.storage.cache_bytes;
  d["read_requests"] = count(o.storage.read_requests);
  d["cache_dir"] = nb::none();
  d["cache_dir_bytes"] = o.storage.cache_dir_bytes;
  d["shard"] = nb::none();
  d["drop_tail"] = o.sampling.drop_tail;
  d["drop_last"] = o.sampling.drop_last;
  d["mean"] = nb::none();
  d["stddev"] = nb::none();
  d["use_index"] = o.source.use_index;
  d["device"] = o.output.device.str();
  d["dtype"] = to_string(o.output.dtype);
  d["output_layout"] = formats::to_string(o.output.layout);
  d["echo"] = o.echo.adaptive ? nb::object(nb::str(o.echo.to_string().c_str()))
                              : nb::object(nb::int_(o.echo.factor));
  d["reaugment_echoes"] = o.echo.reaugment;
  d["size"] = nb::none();
  d["resize_filter"] = "bilinear";
  d["augment"] = to_string(o.image.augment);
  d["decode"] = to_string(o.image.decode);
  d["on_error"] = to_string(o.on_error);
  const Geometry& g = o.image.geometry;
  d["resize"] = nb::none();
  d["resize_max"] = g.resize_max;
  d["crop"] = to_string(g.crop);
  d["crop_scale"] = nb::make_tuple(g.scale_min, g.scale_max);
  d["crop_ratio"] = nb::make_tuple(g.ratio_min, g.ratio_max);
  d["crop_padding"] = 0;
  d["pad_if_needed"] = g.pad_if_needed;
  d["hflip"] = g.hflip;
  d["vflip"] = g.vflip;
  return d;
}

}  // namespace gpufeed::python
