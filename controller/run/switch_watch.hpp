// The switches read every interval while a test runs (--snmp-interval), on a thread of its own so
// the run never waits on SNMP, keeping of each interval only the directions that counted loss
// (verdict/switch_counters.hpp, SwitchInterval): a night-long test holds one small entry an
// interval and says when loss began, where the readings before and after it say only that it did.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "controller/switches/switch_reader.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/switch_counters.hpp"

namespace tusk {

// The most intervals one test keeps: a 1000-hour test at 36 s, a night at under a second.
inline constexpr std::size_t kMaxSwitchIntervals = 100'000;

class SwitchWatch {
 public:
  // `first`: the reading before the test, taken at `first_ns`; the watch reads every `interval`
  // from now on. `topology` outlives the watch.
  SwitchWatch(std::vector<SwitchQuery> queries, const FabricTopology& topology, std::chrono::milliseconds interval,
              std::vector<SwitchReading> first, std::int64_t first_ns);
  ~SwitchWatch();
  SwitchWatch(const SwitchWatch&) = delete;
  SwitchWatch& operator=(const SwitchWatch&) = delete;

  // Stops reading; a read under way is finished first. Called before the reading after the test,
  // so that the switches answer one read at a time.
  void stop();
  // Stops reading, closes the last interval with `last`, the reading after the test, and hands
  // over every interval.
  std::vector<SwitchInterval> finish(const std::vector<SwitchReading>& last, std::int64_t last_ns);

 private:
  void watch();
  void close_interval(const std::vector<SwitchReading>& reading, std::int64_t at_ns);

  std::vector<SwitchQuery> queries_;
  const FabricTopology& topology_;
  std::chrono::milliseconds interval_;
  std::vector<SwitchReading> previous_;
  std::int64_t previous_ns_;
  std::vector<SwitchInterval> intervals_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;  // last: it starts once everything above is made
};

}  // namespace tusk
