// The S3 client's request rate on a simulated clock: unlimited until refused, cut to 0.7x the
// refused rate, paced after that, near a server's limit (few refusals) when sending against
// one for a while, and not cut down by refusals that come at any rate.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>

#include "s3/rate.hpp"

namespace gpufeed::storage::s3 {
namespace {

using Clock = RequestRate::Clock;
using std::chrono::milliseconds;

TEST(RequestRate, UnlimitedUntilTheServerRefuses) {
  RequestRate rate;
  const Clock::time_point t0{};
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(rate.try_send(t0));
  EXPECT_EQ(rate.limit(), 0.0);
  EXPECT_EQ(rate.next_send(t0), t0);
  rate.succeeded(t0);
  EXPECT_EQ(rate.limit(), 0.0) << "successes alone never limit";
}

TEST(RequestRate, ARefusalCutsToSevenTenthsOfTheRateAcceptedAndOneBurstCountsOnce) {
  RequestRate rate;
  Clock::time_point t{};
  for (int i = 0; i < 500; ++i) {  // 1000 a second sent, 500 a second accepted, for a second
    ASSERT_TRUE(rate.try_send(t));
    ASSERT_TRUE(rate.try_send(t));
    rate.succeeded(t);
    t += milliseconds(2);
  }
  const Clock::time_point sent = t - milliseconds(30);
  rate.refused(t, sent);
  // The first refusal pauses while the successes on their way come back, then measures.
  EXPECT_FALSE(rate.try_send(t + milliseconds(100)));
  EXPECT_EQ(rate.next_send(t + milliseconds(100)), t + RequestRate::kMeasure);
  rate.refused(t + milliseconds(150), sent);  // the same burst
  ASSERT_TRUE(rate.try_send(t + RequestRate::kMeasure));
  EXPECT_NEAR(rate.limit(), 0.7 * 500, 10);
  const double first = rate.limit();
  t += RequestRate::kMeasure;
  rate.refused(t + milliseconds(50), sent);  // sent before the cut: answered already
  EXPECT_EQ(rate.limit(), first);
  EXPECT_FALSE(rate.try_send(t)) << "paced: a tenth of a second's requests at once at most";
  const Clock::time_point next = rate.next_send(t);
  EXPECT_GT(next, t);
  EXPECT_TRUE(rate.try_send(next));
  rate.refused(next + milliseconds(20), next);  // sent after the cut: cuts again
  EXPECT_LT(rate.limit(), first);
}

TEST(RequestRate, NeverBelowTheFloor) {
  RequestRate rate;
  Clock::time_point t{};
  for (int i = 0; i < 50; ++i) {
    rate.refused(t, t);
    t += milliseconds(300);
  }
  EXPECT_GE(rate.limit(), RequestRate::kFloor);
  EXPECT_LE(rate.next_send(t) - t, std::chrono::seconds(1));
}

// A client that sends whenever its rate allows, against a server that admits `cap` a second
// (a token bucket with bursts of a tenth of a second, as tests/common/s3_server.py's --get-rate).
struct Simulated {
  double admitted = 0;
  double refused = 0;
  double final_limit = 0;
};

Simulated against_a_cap(double cap, double seconds) {
  RequestRate rate;
  double server_tokens = cap / 10;
  Clock::time_point t{};
  const auto step = std::chrono::microseconds(250);
  Simulated out;
  for (double now = 0; now < seconds; now += 0.00025, t += step) {
    server_tokens = std::min(cap / 10, server_tokens + cap * 0.00025);
    while (rate.try_send(t)) {  // as many as the client's rate allows at this instant
      if (server_tokens >= 1) {
        server_tokens -= 1;
        rate.succeeded(t);
        out.admitted += 1;
      } else {
        rate.refused(t, t);
        out.refused += 1;
        break;
      }
    }
  }
  out.final_limit = rate.limit();
  return out;
}

TEST(RequestRate, SettlesNearTheServersLimitWithFewRefusals) {
  for (const double cap : {20.0, 100.0, 2000.0}) {
    SCOPED_TRACE(cap);
    const Simulated s = against_a_cap(cap, 30);
    EXPECT_GT(s.admitted / 30, 0.7 * cap) << "uses most of what the server admits";
    EXPECT_LE(s.admitted / 30, 1.05 * cap);
    EXPECT_LT(s.refused, 0.05 * (s.admitted + s.refused)) << "few requests are refused";
    EXPECT_GT(s.final_limit, 0.5 * cap);
    EXPECT_LT(s.final_limit, 1.5 * cap);
  }
}

// A client that wants `demand` requests a second, against a server that refuses every
// `every`-th request (a share `refuse` of them when `every` is 0, drawn in turn) whatever the
// rate.
Simulated against_refusals_at_any_rate(double demand, int every, double seconds,
                                       RequestRate* out_rate = nullptr) {
  RequestRate local;
  RequestRate& rate = out_rate != nullptr ? *out_rate : local;
  double wanted = 0;
  Clock::time_point t{};
  const auto step = std::chrono::microseconds(250);
  Simulated out;
  long answered = 0;
  for (double now = 0; now < seconds; now += 0.00025, t += step) {
    wanted = std::min(demand / 10, wanted + demand * 0.00025);
    while (wanted >= 1 && rate.try_send(t)) {
      wanted -= 1;
      if (++answered % every == 0) {
        rate.refused(t, t);
        out.refused += 1;
      } else {
        rate.succeeded(t);
        out.admitted += 1;
      }
    }
  }
  out.final_limit = rate.limit();
  return out;
}

TEST(RequestRate, RefusalsThatComeAtAnyRateAreABackgroundNotALimit) {
  // One in ten refused whatever the rate: cutting does not help, the retries do. Before, each
  // refusal cut the rate again, down to a few requests a second.
  RequestRate rate;
  const Simulated s = against_refusals_at_any_rate(1000, 10, 30, &rate);
  EXPECT_GT((s.admitted + s.refused) / 30, 0.8 * 1000) << "sends about what it wants";
  EXPECT_NEAR(rate.background(), 0.1, 0.03);
  // Half refused at any rate is a throttle, not a background: the client keeps backing off.
  RequestRate throttled;
  const Simulated t = against_refusals_at_any_rate(1000, 2, 30, &throttled);
  EXPECT_EQ(throttled.background(), 0.0);
  EXPECT_LT((t.admitted + t.refused) / 30, 0.2 * 1000);
}

TEST(RequestRate, ALimitFoundAfterABackgroundIsStillKeptUnder) {
  // The background learned, the server then admits only 100 a second: refusals above twice the
  // background cut again.
  RequestRate rate;
  against_refusals_at_any_rate(1000, 10, 10, &rate);
  ASSERT_GT(rate.background(), 0.0);
  Clock::time_point t = Clock::time_point{} + std::chrono::seconds(10);
  double server_tokens = 10, admitted = 0;
  for (int i = 0; i < 4 * 20000; ++i, t += std::chrono::microseconds(250)) {  // 20 s
    server_tokens = std::min(10.0, server_tokens + 100 * 0.00025);
    while (rate.try_send(t)) {
      if (server_tokens >= 1) {
        server_tokens -= 1;
        rate.succeeded(t);
        admitted += 1;
      } else {
        rate.refused(t, t);
        break;
      }
    }
  }
  EXPECT_LT(rate.limit(), 2 * 100.0);
  EXPECT_GT(admitted / 20, 0.7 * 100);
}

}  // namespace
}  // namespace gpufeed::storage::s3
