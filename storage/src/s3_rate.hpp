#pragma once
// The S3 client's own request rate: unlimited until the server asks to slow down (503,
// SlowDown), then a token bucket that keeps the client under the rate the server accepts, as
// the AWS SDKs' "adaptive" retry mode does. A refusal cuts the rate to 0.7x the rate the server
// accepted over the last second (what it admits, not what was sent: a burst of 300 requests of
// which 30 pass in a tenth of a second says "about 300 a second"); refusals of requests sent
// before the last cut are the same burst and cut nothing more. The first refusal pauses sending
// for kMeasure first, so that the successes still on their way are counted. Every request that
// succeeds raises the rate again (additive: 5% a second at high rates, faster near the floor), so
// the client finds the server's limit again when it moves. S3 limits a prefix to 5,500 GETs a
// second; many ranks behind one limit each settle on a share of it.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>

namespace gpufeed::storage::s3 {

class RequestRate {
 public:
  using Clock = std::chrono::steady_clock;

  static constexpr double kCut = 0.7;    // the rate after a refusal, times the refused one
  static constexpr double kFloor = 1.0;  // requests a second, at least
  static constexpr auto kWindow = std::chrono::seconds(1);  // the accepted rate is measured over
  static constexpr auto kMeasure = std::chrono::milliseconds(200);  // the first refusal's pause

  /// True when a request may be sent at `now` (it is counted as sent); false: wait until
  /// next_send().
  bool try_send(Clock::time_point now);
  /// When the next request may be sent (`now` when it may be now).
  [[nodiscard]] Clock::time_point next_send(Clock::time_point now) const;
  /// The server refused a request sent at `sent`: slow down, unless it was sent before the last
  /// cut.
  void refused(Clock::time_point now, Clock::time_point sent);
  /// A request succeeded: counted as accepted; speeds up while limited.
  void succeeded(Clock::time_point now);
  /// Requests a second allowed now; 0: not limited (the server never refused).
  [[nodiscard]] double limit() const { return limited_ ? std::max(rate_, kFloor) : 0.0; }

 private:
  [[nodiscard]] double accepted_rate(Clock::time_point now);
  void refill(Clock::time_point now);
  void cut(Clock::time_point now, double from);

  std::deque<Clock::time_point> accepted_;  // successes within the last kWindow
  bool limited_ = false;
  double rate_ = 0;    // requests a second, once limited
  double tokens_ = 0;  // requests that may be sent at once
  Clock::time_point refilled_{};
  Clock::time_point last_cut_{};
  bool measuring_ = false;  // paused after the first refusal, until measured_at_
  Clock::time_point measured_at_{};
};

}  // namespace gpufeed::storage::s3
