#include "agent/lease_watchdog.hpp"

namespace tusk {

LeaseWatchdog::LeaseWatchdog(boost::asio::any_io_executor executor, std::chrono::milliseconds lease,
                             std::function<void()> on_expired)
    : timer_(std::move(executor)), lease_(lease), on_expired_(std::move(on_expired)) {}

void LeaseWatchdog::renew() {
  expired_ = false;
  // The generation guards against a wait that completed just as we re-armed.
  const auto generation = ++generation_;
  timer_.expires_after(lease_);
  timer_.async_wait([this, generation](boost::system::error_code ec) {
    if (ec || generation != generation_) return;
    expired_ = true;
    on_expired_();
  });
}

void LeaseWatchdog::cancel() {
  ++generation_;
  timer_.cancel();
}

}  // namespace tusk
