#include "rate.hpp"

#include <algorithm>

namespace gpufeed::storage::s3 {

namespace {

using Seconds = std::chrono::duration<double>;

double seconds(RequestRate::Clock::duration d) {
  return std::chrono::duration_cast<Seconds>(d).count();
}

}  // namespace

double RequestRate::accepted_rate(Clock::time_point now) {
  while (!accepted_.empty() && now - accepted_.front() > kWindow) accepted_.pop_front();
  if (accepted_.empty()) return kFloor;
  // From the first success in the window to the last (a pause since sends nothing and is no
  // measure of the server), but never less than a tenth of the window.
  const double span = std::clamp(seconds(accepted_.back() - accepted_.front()),
                                 seconds(kWindow) / 10, seconds(kWindow));
  return std::max(kFloor, static_cast<double>(accepted_.size()) / span);
}

void RequestRate::refill(Clock::time_point now) {
  const double burst = std::max(1.0, rate_ / 10);  // a tenth of a second's requests at once
  tokens_ = std::min(burst, tokens_ + rate_ * seconds(now - refilled_));
  refilled_ = now;
}

bool RequestRate::try_send(Clock::time_point now) {
  if (!limited_) return true;
  if (measuring_) {
    if (now < measured_at_) return false;
    measuring_ = false;
    cut(now, accepted_rate(now));
    tokens_ = 1;  // the pause was the wait
  }
  refill(now);
  if (tokens_ < 1) return false;
  tokens_ -= 1;
  return true;
}

RequestRate::Clock::time_point RequestRate::next_send(Clock::time_point now) const {
  if (!limited_) return now;
  if (measuring_) return std::max(now, measured_at_);
  const double burst = std::max(1.0, rate_ / 10);
  const double tokens = std::min(burst, tokens_ + rate_ * seconds(now - refilled_));
  if (tokens >= 1) return now;
  return now + std::chrono::ceil<Clock::duration>(Seconds((1 - tokens) / rate_));
}

void RequestRate::answered(bool refused) {
  outcomes_.push_back(refused);
  if (outcomes_.size() > kOutcomes) outcomes_.pop_front();
  quiet_ = refused ? 0 : quiet_ + 1;
  if (quiet_ >= kOutcomes) run_from_ = 0;  // the run of cuts is over
}

double RequestRate::refused_share() const {
  if (outcomes_.empty()) return 0;
  const auto refused = std::count(outcomes_.begin(), outcomes_.end(), true);
  return static_cast<double>(refused) / static_cast<double>(outcomes_.size());
}

void RequestRate::refused(Clock::time_point now, Clock::time_point sent) {
  answered(true);
  if (measuring_ || (limited_ && sent < last_cut_)) return;  // the burst being answered
  if (background_ > 0 && refused_share() <= 2 * background_ + kShareSlack) return;
  if (!limited_) {  // the first: pause, and count the successes still on their way
    limited_ = true;
    measuring_ = true;
    measured_at_ = now + kMeasure;
    last_cut_ = measured_at_;
    return;
  }
  cut(now, std::min(rate_, accepted_rate(now)));
}

void RequestRate::cut(Clock::time_point now, double from) {
  if (run_from_ == 0) {  // a run of cuts begins, from the rate in force (unlimited: none)
    run_from_ = from;
    run_rate_ = rate_;
    run_share_ = refused_share();
  }
  rate_ = std::max(kFloor, kCut * from);
  tokens_ = 0;  // a pause before the next request
  refilled_ = now;
  last_cut_ = now;
  // A quarter of the rate the run began at, and the server refuses as much as then: not a
  // limit the rate can get under. Back to the rate before the run (or to no limit).
  const double share = refused_share();
  if (outcomes_.size() >= kOutcomes && rate_ <= run_from_ / 4 && share >= kMinBackground &&
      share <= kMaxBackground && share >= run_share_ / 2) {
    background_ = share;
    rate_ = run_rate_;
    limited_ = run_rate_ > 0;
    tokens_ = 1;
    run_from_ = 0;
  }
}

void RequestRate::succeeded(Clock::time_point now) {
  answered(false);
  accepted_.push_back(now);
  while (now - accepted_.front() > kWindow) accepted_.pop_front();
  if (!limited_ || measuring_) return;
  // +0.05 a request at high rates (5% a second), more near the floor (+2/rate).
  rate_ += std::max(0.05, 2.0 / rate_);
}

}  // namespace gpufeed::storage::s3
