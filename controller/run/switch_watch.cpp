#include "controller/run/switch_watch.hpp"

#include <utility>

#include "common/clock.hpp"
#include "controller/switches/switch_poller.hpp"

namespace tusk {

SwitchWatch::SwitchWatch(std::vector<SwitchQuery> queries, const FabricTopology& topology,
                         std::chrono::milliseconds interval, std::vector<SwitchReading> first, std::int64_t first_ns)
    : queries_(counters_only(std::move(queries))),
      topology_(topology),
      interval_(interval),
      previous_(std::move(first)),
      previous_ns_(first_ns),
      thread_([this] { watch(); }) {}

SwitchWatch::~SwitchWatch() {
  stop();
}

void SwitchWatch::stop() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void SwitchWatch::watch() {
  std::unique_lock lock(mutex_);
  while (!wake_.wait_for(lock, interval_, [this] { return stopping_; })) {
    lock.unlock();
    // queries_ never changes after construction: read without the lock.
    const std::vector<SwitchReading> reading = read_switches(queries_);
    const std::int64_t at_ns = realtime_ns();
    lock.lock();
    if (stopping_) return;  // the reading after the test closes the interval instead
    close_interval(reading, at_ns);
  }
}

void SwitchWatch::close_interval(const std::vector<SwitchReading>& reading, std::int64_t at_ns) {
  if (intervals_.size() < kMaxSwitchIntervals) {
    intervals_.push_back(count_switch_interval(topology_, previous_, previous_ns_, reading, at_ns));
  }
  previous_ = reading;
  previous_ns_ = at_ns;
}

std::vector<SwitchInterval> SwitchWatch::finish(const std::vector<SwitchReading>& last, std::int64_t last_ns) {
  stop();
  close_interval(last, last_ns);
  return std::move(intervals_);
}

}  // namespace tusk
