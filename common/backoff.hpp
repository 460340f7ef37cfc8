// Reconnect delays: exponential from `initial` up to `ceiling`, each with ±20 % jitter so that
// thousands of agents that lost the controller at once do not come back in lockstep.
#pragma once

#include <algorithm>
#include <chrono>
#include <random>

namespace tusk {

class Backoff {
 public:
  Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds ceiling)
      : initial_(initial), ceiling_(ceiling), next_(initial), random_(std::random_device{}()) {}

  std::chrono::milliseconds next_delay() {
    const auto base = next_;
    next_ = std::min(ceiling_, next_ * 2);
    std::uniform_real_distribution<double> jitter(0.8, 1.2);
    return std::chrono::milliseconds(static_cast<long>(base.count() * jitter(random_)));
  }
  void reset() { next_ = initial_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds ceiling_;
  std::chrono::milliseconds next_;
  std::mt19937 random_;
};

}  // namespace tusk
