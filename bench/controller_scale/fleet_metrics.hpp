// What the simulated agents see of the controller, gathered across io threads: when each phase
// began and ended on this host's clocks, and counts. Lock-free: thousands of agents touch it.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>

namespace tusk::bench {

// The earliest and latest of many instants (ns on one clock).
class Span {
 public:
  void note(std::int64_t ns) {
    auto first = first_.load(std::memory_order_relaxed);
    while (ns < first && !first_.compare_exchange_weak(first, ns, std::memory_order_relaxed)) {
    }
    auto last = last_.load(std::memory_order_relaxed);
    while (ns > last && !last_.compare_exchange_weak(last, ns, std::memory_order_relaxed)) {
    }
    count_.fetch_add(1, std::memory_order_relaxed);
  }
  bool empty() const { return count_.load() == 0; }
  std::int64_t first() const { return first_.load(); }
  std::int64_t last() const { return last_.load(); }
  std::uint64_t count() const { return count_.load(); }
  double width_s() const { return empty() ? 0 : (last() - first()) / 1e9; }

 private:
  std::atomic<std::int64_t> first_{std::numeric_limits<std::int64_t>::max()};
  std::atomic<std::int64_t> last_{std::numeric_limits<std::int64_t>::min()};
  std::atomic<std::uint64_t> count_{0};
};

struct FleetMetrics {
  Span registered;      // hello acks received (steady ns)
  Span probes;          // clock probes received (steady ns)
  Span plans;           // plans received (steady ns)
  Span plan_acks;       // plan acks sent (steady ns)
  Span planned_starts;  // StartAt's agent_start_ns (realtime: one clock for every agent here)
  Span actual_starts;   // when each simulated engine started (realtime)
  Span samples;         // sample records sent (steady ns)
  Span results;         // result records sent (steady ns)
  std::atomic<std::uint64_t> late_start_orders{0};  // StartAt that came after its start time
  std::atomic<std::uint64_t> refusals{0};           // Error frames from the controller
  std::atomic<std::uint64_t> disconnects{0};        // connections lost before the run ended
  std::atomic<std::uint64_t> sample_bytes{0};
  std::atomic<std::uint64_t> stream_samples{0};  // one stream's counters in one sample
};

}  // namespace tusk::bench
