#pragma once
// decode=auto: how many of a batch's engine-decodable images the CPU workers take. The engines
// first; the workers only for the part the engines cannot keep up with, from measured rates:
// the engines' time per image (a high quantile of recent batches: tail latency, not the mean),
// the workers' time per image, and the time the consumer spends per image when it is not
// waiting (what it would take if the input were instant).
#include <array>
#include <cstdint>
#include <mutex>

namespace gpufeed::pipeline::detail {

class DecodeSplit {
 public:
  /// The engines decoded `images` in `device_ns` on one lane while `lanes` lanes were in use
  /// (lanes overlap on the engines: the time per image is shared among them).
  void record_engines(std::uint32_t images, std::int64_t device_ns, unsigned lanes);
  /// The workers decoded `images` in `busy_ns` of their time.
  void record_cpu(std::uint32_t images, std::int64_t busy_ns);
  /// The consumer took a batch of `images`, `interval_ns` after the previous one, of which it
  /// waited `wait_ns` for the loader.
  void record_consumer(std::uint32_t images, std::int64_t interval_ns, std::int64_t wait_ns);

  /// Of a batch's `decodable` images, how many the CPU takes with `workers` workers: 0 until
  /// the engines and the consumer have been measured, or while the engines keep up with the
  /// consumer (with a margin); else the share that lets the engines keep up, at most the share
  /// at which both sides finish together (more would make the workers the bottleneck).
  [[nodiscard]] std::uint32_t cpu_share(std::uint32_t decodable, unsigned workers) const;

  /// The estimates cpu_share() uses, in ns per image (0: not measured yet).
  struct Rates {
    double engine_ns = 0;    ///< the engines, all lanes together
    double cpu_ns = 0;       ///< one worker
    double consumer_ns = 0;  ///< the consumer's own time
  };
  [[nodiscard]] Rates rates() const;

  /// The engines keep up when they need at most this share of the consumer's time.
  static constexpr double kHeadroom = 0.9;

 private:
  static constexpr std::size_t kWindow = 16;
  /// A ring of the last kWindow samples; quantile() of them.
  struct Ring {
    std::array<double, kWindow> values{};
    std::size_t count = 0;
    void push(double v) { values[count++ % kWindow] = v; }
    [[nodiscard]] double quantile(double q) const;
  };
  mutable std::mutex mutex_;
  Ring engine_, cpu_, consumer_;
};

}  // namespace gpufeed::pipeline::detail
