// The /metrics page as text, rendered at most once per interval however many scrapers ask: each
// scrape of the same interval is handed the same immutable text, so ten parallel scrapes cost one
// rendering and one copy in memory, not ten. A scraper that asks while the page is being rendered
// waits for it and gets it.
//
// Threads: get() from any thread; the rendering runs on the asker's thread, one at a time.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

namespace tusk {

class MetricsPage {
 public:
  using Clock = std::chrono::steady_clock;
  using Render = std::function<std::string()>;

  // `max_bytes`: a page rendered longer is cut at its last whole line within it, and says so in
  // a comment (the series estimate in LiveMetrics keeps well under it). Every page ends with
  // tusk_metrics_pages_rendered_total, the renders so far.
  MetricsPage(Render render, Clock::duration fresh_for, std::size_t max_bytes);

  std::shared_ptr<const std::string> get(Clock::time_point now = Clock::now());
  std::uint64_t renders() const;

 private:
  const Render render_;
  const Clock::duration fresh_for_;
  const std::size_t max_bytes_;

  mutable std::mutex mutex_;
  std::shared_ptr<const std::string> text_;
  Clock::time_point rendered_at_{};
  std::uint64_t renders_ = 0;
};

}  // namespace tusk
