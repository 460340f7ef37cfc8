// A port's link state over a test, from the driver's reports (polled: a DPDK port's driver, or
// net_af_packet's kernel interface carrier; an RDMA port's state in sysfs): when it went down and
// came back, with timestamps, so the report's timeline shows link events beside the traffic gaps
// and stalled flows they caused. Both engines use it.
// Not thread-safe: one thread polls; sample() reads the published counts.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>

namespace tusk {

struct LinkChange {
  bool up = false;
  std::int64_t at_ns = 0;
  std::int64_t down_for_ns = 0;  // a link that came up: how long it was down
};

class LinkWatch {
 public:
  // The first poll sets the state the test started with; a link down at the start is a change.
  std::optional<LinkChange> on_poll(bool up, std::int64_t now_ns);
  // Downs so far, and the time spent down up to `now_ns` (a link still down counts until then).
  std::uint64_t downs() const { return downs_.load(std::memory_order_relaxed); }
  std::int64_t down_ns(std::int64_t now_ns) const;

 private:
  bool known_ = false;
  bool up_ = true;
  std::atomic<std::uint64_t> downs_{0};
  std::atomic<std::int64_t> down_total_ns_{0};  // closed intervals
  std::atomic<std::int64_t> down_since_ns_{0};  // 0: up
};

}  // namespace tusk
