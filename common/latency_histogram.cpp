#include "common/latency_histogram.hpp"

#include <algorithm>

namespace tusk {

LatencySummary merge_summaries(const std::vector<LatencySummary>& parts) noexcept {
  LatencySummary whole;
  double sum_ns = 0;
  for (const LatencySummary& part : parts) {
    if (part.count == 0) continue;
    whole.min_ns = whole.count == 0 ? part.min_ns : std::min(whole.min_ns, part.min_ns);
    whole.count += part.count;
    whole.max_ns = std::max(whole.max_ns, part.max_ns);
    whole.p50_ns = std::max(whole.p50_ns, part.p50_ns);
    whole.p99_ns = std::max(whole.p99_ns, part.p99_ns);
    whole.p999_ns = std::max(whole.p999_ns, part.p999_ns);
    sum_ns += part.mean_ns * static_cast<double>(part.count);
  }
  if (whole.count > 0) whole.mean_ns = sum_ns / static_cast<double>(whole.count);
  return whole;
}

void LatencyHistogram::merge(const LatencyHistogram& other) noexcept {
  for (std::size_t i = 0; i < kBucketCount; ++i) counts_[i] += other.counts_[i];
  count_ += other.count_;
  sum_ns_ += other.sum_ns_;
  min_ns_ = std::min(min_ns_, other.min_ns_);
  max_ns_ = std::max(max_ns_, other.max_ns_);
}

void LatencyHistogram::clear() noexcept {
  *this = LatencyHistogram();
}

std::uint64_t LatencyHistogram::lowest_in_bucket(std::size_t bucket) noexcept {
  if (bucket < kExactBelowNs) return bucket;
  const unsigned shift = static_cast<unsigned>(bucket >> kSubBucketBits) - 1;
  const std::uint64_t sub = (bucket & ((std::size_t{1} << kSubBucketBits) - 1)) + (std::uint64_t{1} << kSubBucketBits);
  return sub << shift;
}

std::uint64_t LatencyHistogram::highest_in_bucket(std::size_t bucket) noexcept {
  if (bucket < kExactBelowNs) return bucket;
  const unsigned shift = static_cast<unsigned>(bucket >> kSubBucketBits) - 1;
  return lowest_in_bucket(bucket) + (std::uint64_t{1} << shift) - 1;
}

std::uint64_t LatencyHistogram::rank_of(double percent) const noexcept {
  // ceil(percent / 100 * count), forgiving the rounding of a product that should be whole
  // (99.9 % of 1000 is 999.0000000000001 in doubles, and rank 999, not 1000).
  const double exact = percent / 100.0 * static_cast<double>(count_);
  auto rank = static_cast<std::uint64_t>(exact);
  if (exact - static_cast<double>(rank) > 1e-9 * std::max(1.0, exact)) ++rank;
  return std::clamp<std::uint64_t>(rank, 1, count_);
}

void LatencyHistogram::values_at_ranks(const std::uint64_t* ranks, std::uint64_t* values,
                                       std::size_t n) const noexcept {
  std::uint64_t below = 0;  // samples in buckets before `bucket`
  std::size_t bucket = 0;
  for (std::size_t k = 0; k < n; ++k) {
    // ranks are ascending and at most count_, so the walk ends inside the array.
    while (below + counts_[bucket] < ranks[k]) below += counts_[bucket++];
    const std::uint64_t low = lowest_in_bucket(bucket);
    const std::uint64_t middle = low + (highest_in_bucket(bucket) - low) / 2;
    values[k] = std::clamp(middle, min_ns_, max_ns_);
  }
}

std::uint64_t LatencyHistogram::value_at_percentile(double percent) const noexcept {
  if (count_ == 0) return 0;
  if (percent <= 0) return min_ns_;
  if (percent >= 100) return max_ns_;
  const std::uint64_t rank = rank_of(percent);
  std::uint64_t value = 0;
  values_at_ranks(&rank, &value, 1);
  return value;
}

LatencySummary LatencyHistogram::summary() const noexcept {
  LatencySummary out;
  if (count_ == 0) return out;
  const std::uint64_t ranks[3] = {rank_of(50), rank_of(99), rank_of(99.9)};
  std::uint64_t values[3];
  values_at_ranks(ranks, values, 3);
  out.count = count_;
  out.min_ns = min_ns_;
  out.p50_ns = values[0];
  out.p99_ns = values[1];
  out.p999_ns = values[2];
  out.max_ns = max_ns_;
  out.mean_ns = mean_ns();
  return out;
}

// The fences make this the classic sequence lock with atomic fields (no data race): the reader's
// acquire fence orders its field loads before its second version load, and the writer's release
// fence orders the odd version before the field stores.
void PublishedLatency::publish(const LatencySummary& summary) noexcept {
  const std::uint64_t version = version_.load(std::memory_order_relaxed);
  version_.store(version + 1, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  count_.store(summary.count, std::memory_order_relaxed);
  min_ns_.store(summary.min_ns, std::memory_order_relaxed);
  p50_ns_.store(summary.p50_ns, std::memory_order_relaxed);
  p99_ns_.store(summary.p99_ns, std::memory_order_relaxed);
  p999_ns_.store(summary.p999_ns, std::memory_order_relaxed);
  max_ns_.store(summary.max_ns, std::memory_order_relaxed);
  mean_ns_.store(summary.mean_ns, std::memory_order_relaxed);
  version_.store(version + 2, std::memory_order_release);
}

LatencySummary PublishedLatency::read() const noexcept {
  LatencySummary out;
  for (;;) {
    const std::uint64_t before = version_.load(std::memory_order_acquire);
    if (before & 1) continue;
    out.count = count_.load(std::memory_order_relaxed);
    out.min_ns = min_ns_.load(std::memory_order_relaxed);
    out.p50_ns = p50_ns_.load(std::memory_order_relaxed);
    out.p99_ns = p99_ns_.load(std::memory_order_relaxed);
    out.p999_ns = p999_ns_.load(std::memory_order_relaxed);
    out.max_ns = max_ns_.load(std::memory_order_relaxed);
    out.mean_ns = mean_ns_.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (version_.load(std::memory_order_relaxed) == before) return out;
  }
}

}  // namespace tusk
