// Clocks. Start times cross machines, so they use the realtime clock in nanoseconds since the
// epoch; durations on one machine use the steady clock.
#pragma once

#include <fmt/format.h>

#include <chrono>
#include <cstdint>
#include <ctime>
#include <string>

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

// ISO 8601 in UTC with milliseconds, as reports write times: "2026-11-27T03:12:44.250Z".
inline std::string utc_iso_time(std::int64_t ns) {
  const auto seconds = static_cast<std::time_t>(ns / 1'000'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%S", &utc);
  return fmt::format("{}.{:03d}Z", text, static_cast<int>((ns / 1'000'000) % 1000));
}

}  // namespace tusk
