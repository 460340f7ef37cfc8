// A fixed-memory latency histogram with bounded relative error, for one-way frame and message
// latencies: record() is O(1), never allocates, and is cheap enough for a datapath's every frame.
//
// Layout (HdrHistogram's log-linear one, base 2): values below 128 ns have a bucket each; above,
// every power of two [2^e, 2^(e+1)) is split into 64 equal buckets of width 2^(e-6). A bucket is
// never wider than 1/64 of its lowest value, and a percentile reports its bucket's midpoint, so
//
//   |value_at_percentile(p) - the true nearest-rank sample| <= true value / 128   (0.78 %)
//
// and values below 128 ns are exact. The range tracked is 0 .. 2^37 - 1 ns (about 137 s); larger
// values are counted in the top bucket (max_ns() stays exact). 2048 buckets: 16 KiB.
//
// Not thread-safe: one thread owns a histogram and shares what it computes (summary()) through a
// PublishedLatency, or a copy.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

namespace tusk {

// What reports and thresholds read from a histogram. All zero when nothing was recorded.
struct LatencySummary {
  std::uint64_t count = 0;
  std::uint64_t min_ns = 0;
  std::uint64_t p50_ns = 0;
  std::uint64_t p99_ns = 0;
  std::uint64_t p999_ns = 0;
  std::uint64_t max_ns = 0;
  double mean_ns = 0;

  bool operator==(const LatencySummary&) const = default;
};

// Several summaries of one stream's parts (recorded by different threads) as one: count, min,
// max and mean exact; each percentile the largest of the parts', which bounds the whole's from
// above (at least that share of every part's samples lies at or below it).
LatencySummary merge_summaries(const std::vector<LatencySummary>& parts) noexcept;

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBucketBits = 6;                         // 64 buckets per power of two
  static constexpr std::uint64_t kExactBelowNs = 2u << kSubBucketBits;  // 128: one bucket per ns below
  static constexpr unsigned kTopExponent = 36;                          // highest power of two tracked
  static constexpr std::uint64_t kHighestTrackableNs = (std::uint64_t{2} << kTopExponent) - 1;
  static constexpr std::size_t kBucketCount = (kTopExponent - kSubBucketBits + 2) << kSubBucketBits;

  void record(std::uint64_t ns) noexcept {
    ++counts_[bucket_of(ns)];
    ++count_;
    sum_ns_ += ns;
    if (ns < min_ns_) min_ns_ = ns;
    if (ns > max_ns_) max_ns_ = ns;
  }

  // For a difference of two clocks, which can come out negative (RX before the TX stamp when two
  // hosts' clocks are apart): records 0 then and returns true, so the caller can count it.
  bool record_clamped(std::int64_t ns) noexcept {
    record(ns < 0 ? 0 : static_cast<std::uint64_t>(ns));
    return ns < 0;
  }

  void merge(const LatencyHistogram& other) noexcept;
  void clear() noexcept;

  std::uint64_t count() const noexcept { return count_; }
  std::uint64_t min_ns() const noexcept { return count_ ? min_ns_ : 0; }
  std::uint64_t max_ns() const noexcept { return max_ns_; }
  double mean_ns() const noexcept { return count_ ? static_cast<double>(sum_ns_) / count_ : 0; }

  // The nearest-rank percentile: a value within the bound above of the smallest sample that at least
  // `percent` % of all samples are at or below. percent <= 0 gives min_ns(), >= 100 max_ns(); 0 when
  // empty. Walks the buckets once: O(kBucketCount).
  std::uint64_t value_at_percentile(double percent) const noexcept;
  // min, p50, p99, p99.9, max and mean, in one walk over the buckets.
  LatencySummary summary() const noexcept;

  static std::size_t bucket_of(std::uint64_t ns) noexcept {
    if (ns < (std::uint64_t{1} << kSubBucketBits)) return static_cast<std::size_t>(ns);
    if (ns > kHighestTrackableNs) ns = kHighestTrackableNs;
    const unsigned shift = top_bit(ns) - kSubBucketBits;
    return (std::size_t{shift} << kSubBucketBits) + static_cast<std::size_t>(ns >> shift);
  }
  static std::uint64_t lowest_in_bucket(std::size_t bucket) noexcept;
  static std::uint64_t highest_in_bucket(std::size_t bucket) noexcept;

 private:
  static unsigned top_bit(std::uint64_t v) noexcept { return 63u - static_cast<unsigned>(__builtin_clzll(v)); }
  // Bucket values for ranks (1-based, ascending), clamped to [min, max].
  void values_at_ranks(const std::uint64_t* ranks, std::uint64_t* values, std::size_t n) const noexcept;
  std::uint64_t rank_of(double percent) const noexcept;

  std::array<std::uint64_t, kBucketCount> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_ns_ = 0;
  std::uint64_t min_ns_ = std::numeric_limits<std::uint64_t>::max();
  std::uint64_t max_ns_ = 0;
};

// A LatencySummary handed from the one thread that owns a histogram to readers on others, as a
// sequence lock: the writer never waits or allocates, and a reader never sees half of one
// publication and half of another (it retries while a publication is under way).
class PublishedLatency {
 public:
  void publish(const LatencySummary& summary) noexcept;  // the owning thread only
  LatencySummary read() const noexcept;                  // any thread

 private:
  std::atomic<std::uint64_t> version_{0};  // odd while a publication is being written
  std::atomic<std::uint64_t> count_{0}, min_ns_{0}, p50_ns_{0}, p99_ns_{0}, p999_ns_{0}, max_ns_{0};
  std::atomic<double> mean_ns_{0};
};

}  // namespace tusk
