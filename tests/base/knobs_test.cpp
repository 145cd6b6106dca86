// Knobs and orders as data: names round-trip, unknown names are rejected, settings print as
// LoaderOptions fields.
#include "gpufeed/base/knobs.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <set>
#include <string>

namespace gpufeed {
namespace {

TEST(Knobs, OrderNamesRoundTrip) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kOrderNames.size(); ++i) {
    const auto order = static_cast<Order>(i);
    EXPECT_TRUE(names.insert(order_name(order)).second) << order_name(order);
    EXPECT_EQ(find_order(order_name(order)), order);
  }
  EXPECT_STREQ(order_name(Order::sequential), "sequential");
  EXPECT_STREQ(order_name(Order::random), "random");
  EXPECT_STREQ(order_name(Order::chunk), "chunk");
  EXPECT_EQ(order_choices(), "sequential, random or chunk");
}

TEST(Knobs, KnobNamesRoundTrip) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < kKnobNames.size(); ++i) {
    const auto knob = static_cast<Knob>(i);
    EXPECT_TRUE(names.insert(knob_name(knob)).second) << knob_name(knob);
    EXPECT_EQ(find_knob(knob_name(knob)), knob);
  }
  // The LoaderOptions field names.
  EXPECT_STREQ(knob_name(Knob::workers), "workers");
  EXPECT_STREQ(knob_name(Knob::prefetch), "prefetch");
  EXPECT_STREQ(knob_name(Knob::echo), "echo");
  EXPECT_STREQ(knob_name(Knob::cache_bytes), "cache_bytes");
  EXPECT_STREQ(knob_name(Knob::order), "order");
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
