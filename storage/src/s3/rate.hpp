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
//
// Refusals that do not fall with the rate are not a limit: a server (or a proxy) that refuses
// one request in ten at any rate would cut the client down to its floor. When a run of cuts
// has brought the rate to a quarter of where it began and the share of refused requests among
// the last kOutcomes answers is still what it was at the first cut (between kMinBackground and
// kMaxBackground), that share is taken as the server's background: the limit goes back to what
// it was before the run (none, when the run began unlimited), and later refusals cut only while
// the share is above twice the background (plus kShareSlack). Retries absorb the background. A run
// ends after kOutcomes answers without a refusal.
#include <algorithm>
#include <chrono>
#include <cstddef>
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
  static constexpr std::size_t kOutcomes = 64;    // answers the refused share is measured over
  static constexpr double kMinBackground = 0.02;  // shares taken as a background, at least
  static constexpr double kMaxBackground = 0.25;  // ... and at most (above: a throttle)
  static constexpr double kShareSlack = 0.05;

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
  /// The share of requests the server refuses whatever the rate (0: none found).
  [[nodiscard]] double background() const { return background_; }

 private:
  [[nodiscard]] double accepted_rate(Clock::time_point now);
  void refill(Clock::time_point now);
  void cut(Clock::time_point now, double from);
  void answered(bool refused);
  [[nodiscard]] double refused_share() const;

  std::deque<Clock::time_point> accepted_;  // successes within the last kWindow
  bool limited_ = false;
  double rate_ = 0;    // requests a second, once limited
  double tokens_ = 0;  // requests that may be sent at once
  Clock::time_point refilled_{};
  Clock::time_point last_cut_{};
  bool measuring_ = false;  // paused after the first refusal, until measured_at_
  Clock::time_point measured_at_{};
  std::deque<bool> outcomes_;  // the last kOutcomes answers: refused or not
  std::size_t quiet_ = 0;      // answers since the last refusal
  double run_from_ = 0;        // the rate the run of cuts began cutting from (0: no run)
  double run_rate_ = 0;        // the limit in force before it (0: none)
  double run_share_ = 0;       // the refused share at its first cut
  double background_ = 0;
};

}  // namespace gpufeed::storage::s3
