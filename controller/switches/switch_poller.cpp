#include "controller/switches/switch_poller.hpp"

#include <atomic>
#include <thread>

namespace tusk {

std::vector<SwitchReading> read_switches(const std::vector<SwitchQuery>& queries, const SwitchReadLimits& limits,
                                         std::size_t threads) {
  std::vector<SwitchReading> readings(queries.size());
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < queries.size(); i = next++) readings[i] = read_switch(queries[i], limits);
  };
  std::vector<std::thread> pool;
  const std::size_t count = std::min(threads, queries.size());
  for (std::size_t t = 1; t < count; ++t) pool.emplace_back(work);
  work();
  for (auto& thread : pool) thread.join();
  return readings;
}

}  // namespace tusk
