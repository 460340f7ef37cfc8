#include "agent/link_watch.hpp"

namespace tusk {

std::optional<LinkChange> LinkWatch::on_poll(bool up, std::int64_t now_ns) {
  const bool first = !known_;
  known_ = true;
  if (first && up) {
    up_ = true;
    return std::nullopt;
  }
  if (!first && up == up_) return std::nullopt;
  up_ = up;
  if (!up) {
    downs_.fetch_add(1, std::memory_order_relaxed);
    down_since_ns_.store(now_ns, std::memory_order_relaxed);
    return LinkChange{false, now_ns, 0};
  }
  const std::int64_t down_for = now_ns - down_since_ns_.load(std::memory_order_relaxed);
  down_total_ns_.fetch_add(down_for, std::memory_order_relaxed);
  down_since_ns_.store(0, std::memory_order_relaxed);
  return LinkChange{true, now_ns, down_for};
}

std::int64_t LinkWatch::down_ns(std::int64_t now_ns) const {
  const std::int64_t since = down_since_ns_.load(std::memory_order_relaxed);
  return down_total_ns_.load(std::memory_order_relaxed) + (since != 0 && now_ns > since ? now_ns - since : 0);
}

}  // namespace tusk
