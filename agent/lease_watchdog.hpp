// Stops traffic when the controller goes quiet: if no frame arrives for `lease`, the callback
// runs once. It is not re-armed until the next renew(), i.e. until the controller is heard again.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>

namespace tusk {

class LeaseWatchdog {
 public:
  LeaseWatchdog(boost::asio::any_io_executor executor, std::chrono::milliseconds lease,
                std::function<void()> on_expired);

  void set_lease(std::chrono::milliseconds lease) { lease_ = lease; }
  std::chrono::milliseconds lease() const { return lease_; }
  // Call on every frame from the controller.
  void renew();
  void cancel();
  bool expired() const { return expired_; }

 private:
  boost::asio::steady_timer timer_;
  std::chrono::milliseconds lease_;
  std::function<void()> on_expired_;
  std::uint64_t generation_ = 0;
  bool expired_ = false;
};

}  // namespace tusk
