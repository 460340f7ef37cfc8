// Clocks. Start times cross machines, so they use the realtime clock in nanoseconds since the
// epoch; durations on one machine use the steady clock.
#pragma once

#include <chrono>
#include <cstdint>

namespace tusk {

inline std::int64_t realtime_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Nanoseconds on the steady clock, for durations measured on this machine.
inline std::int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Converts a realtime instant to the steady clock, for timers that must not jump with NTP.
inline std::chrono::steady_clock::time_point steady_from_realtime_ns(std::int64_t when_ns) {
  return std::chrono::steady_clock::now() + std::chrono::nanoseconds(when_ns - realtime_ns());
}

}  // namespace tusk
