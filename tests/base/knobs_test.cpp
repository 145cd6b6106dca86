// Knobs and orders as data: names round-trip, unknown names are rejected, settings print as
// LoaderOptions fields.
#include "gpufeed/base/knobs.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <set>
#include <string>
#include <string_view>

#include "gpufeed/base/auto_count.hpp"
#include "gpufeed/base/errors.hpp"
#include "gpufeed/base/fields.hpp"
#include "gpufeed/base/names.hpp"

namespace gpufeed {
namespace {

/// Every name of `names` is unique, names its enumerator both ways, and all read `expected`.
template <typename Enum, std::size_t N>
void expect_named(const std::array<const char*, N>& names, const std::string& expected) {
  std::set<std::string> seen;
  std::string all;
  for (std::size_t i = 0; i < N; ++i) {
    const auto value = static_cast<Enum>(i);
    EXPECT_TRUE(seen.insert(name_of(names, value)).second) << name_of(names, value);
    EXPECT_EQ(find_named<Enum>(names, name_of(names, value)), value);
    all += (i > 0 ? " " : "") + std::string(name_of(names, value));
  }
  EXPECT_EQ(all, expected);
  EXPECT_STREQ(name_of(names, static_cast<Enum>(N), "past"), "past");
}

TEST(Knobs, OrderAndKnobNamesRoundTrip) {
  expect_named<Order>(kOrderNames, "sequential random chunk");
  EXPECT_STREQ(order_name(Order::random), "random");
  EXPECT_EQ(order_choices(), "sequential, random or chunk");
  // Knobs are named by their LoaderOptions fields, and each is one.
  expect_named<Knob>(kKnobNames, "workers prefetch echo cache_bytes order read_requests");
  for (const char* knob : kKnobNames) EXPECT_NE(find_field(knob), nullptr) << knob;
  EXPECT_STREQ(knob_name(Knob::cache_bytes), "cache_bytes");
}

TEST(Fields, EachFieldIsNamedOnce) {
  // The front ends' spellings of these names are theirs (tools/common/flags.hpp, the Python
  // Loader's keywords); their tests check them against this table.
  std::set<std::string_view> fields;
  for (const FieldName& f : kLoaderFields) EXPECT_TRUE(fields.insert(f.field).second) << f.field;
}

TEST(Fields, RangesComeFromTheTable) {
  EXPECT_EQ(range_text("workers"), "0 to 1024, or auto");
  EXPECT_EQ(range_text("batch_size"), "1 to 16777216");
  EXPECT_TRUE(field_takes("workers", AutoCount::automatic()));
  EXPECT_TRUE(field_takes("workers", 1024));
  EXPECT_FALSE(field_takes("workers", 1025));
  EXPECT_FALSE(field_takes("prefetch", 0));
  EXPECT_FALSE(field_takes("cpu_budget", AutoCount::automatic()));
  EXPECT_NO_THROW(check_field_range("chunk_window", 1));
  EXPECT_NO_THROW(check_field_range("images", 123));  // no range of its own
  try {
    check_field_range("chunk_window", 0);
    ADD_FAILURE() << "chunk_window=0 passed";
  } catch (const OptionError& e) {
    EXPECT_EQ(e.field(), "chunk_window");
    EXPECT_STREQ(e.what(), "chunk_window=0: use 1 to 1048576");
  }
}

TEST(AutoCount, IsACountOrAuto) {
  const AutoCount four = 4;
  EXPECT_FALSE(four.is_auto());
  EXPECT_EQ(four.value_or(9), 4u);
  EXPECT_EQ(four, 4u);
  EXPECT_EQ(four.str(), "4");
  const AutoCount tuned = AutoCount::automatic();
  EXPECT_TRUE(tuned.is_auto());
  EXPECT_EQ(tuned.value_or(9), 9u);
  EXPECT_EQ(tuned.str(), "auto");
  EXPECT_NE(tuned, AutoCount(0));
  EXPECT_EQ(AutoCount::parse("auto"), tuned);
  EXPECT_EQ(AutoCount::parse("0"), AutoCount(0));
  EXPECT_EQ(AutoCount::parse("4294967295"), AutoCount(4294967295u));
  for (const char* bad : {"", "Auto", "-1", "4294967296", "1.5", "3 ", "0x10"}) {
    EXPECT_EQ(AutoCount::parse(bad), std::nullopt) << bad;
  }
}

TEST(Knobs, UnknownNamesAreNullopt) {
  EXPECT_EQ(find_order(""), std::nullopt);
  EXPECT_EQ(find_order("Random"), std::nullopt);
  EXPECT_EQ(find_order("shuffle"), std::nullopt);
  EXPECT_EQ(find_knob(""), std::nullopt);
  EXPECT_EQ(find_knob("--workers"), std::nullopt);  // a flag, not a field
  EXPECT_EQ(find_knob("cache-bytes"), std::nullopt);
  EXPECT_EQ(find_knob("worker"), std::nullopt);
}

TEST(Knobs, SettingValueText) {
  EXPECT_EQ(Setting::of(Knob::workers, 8).value_text(), "8");
  EXPECT_EQ(Setting::of(Knob::echo, 1).value_text(), "1");
  EXPECT_EQ(Setting::of(Knob::cache_bytes, 536870912).value_text(), "536870912");
  EXPECT_EQ(Setting::of(Knob::prefetch, 0).value_text(), "0");
  EXPECT_EQ(Setting::of(Order::chunk).value_text(), "chunk");
  EXPECT_EQ(Setting::of(Order::sequential).value_text(), "sequential");
  EXPECT_EQ(Setting::of(Knob::order, 99).value_text(), "?");  // not an Order
}

TEST(Knobs, SettingOfOrderIsTheOrderKnob) {
  const Setting s = Setting::of(Order::random);
  EXPECT_EQ(s.knob, Knob::order);
  EXPECT_EQ(s.order(), Order::random);
  EXPECT_EQ(s, Setting::of(Knob::order, static_cast<std::uint64_t>(Order::random)));
  EXPECT_NE(s, Setting::of(Order::chunk));
  EXPECT_NE(Setting::of(Knob::workers, 4), Setting::of(Knob::prefetch, 4));
}

TEST(Knobs, FieldSpellingIsFieldEqualsValue) {
  EXPECT_EQ(field_spelling(Setting::of(Knob::workers, 8)), "workers=8");
  EXPECT_EQ(field_spelling(Setting::of(Knob::cache_bytes, 1024)), "cache_bytes=1024");
  EXPECT_EQ(field_spelling(Setting::of(Order::chunk)), "order=chunk");
  const SettingSpelling spelling = field_spelling;
  EXPECT_EQ(spelling(Setting::of(Knob::echo, 3)), "echo=3");
}

}  // namespace
}  // namespace gpufeed
