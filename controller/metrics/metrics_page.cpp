#include "controller/metrics/metrics_page.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <utility>

namespace tusk {

MetricsPage::MetricsPage(Render render, Clock::duration fresh_for, std::size_t max_bytes)
    : render_(std::move(render)), fresh_for_(fresh_for), max_bytes_(max_bytes) {}

std::shared_ptr<const std::string> MetricsPage::get(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  if (text_ && now - rendered_at_ < fresh_for_) return text_;
  std::string text = render_();
  ++renders_;
  // The page says how often it was rendered, so a scraper (and a test) sees that scrapes share it.
  const std::string own = fmt::format(
      "# HELP tusk_metrics_pages_rendered_total Pages of /metrics rendered: at most one a second, whoever scrapes\n"
      "# TYPE tusk_metrics_pages_rendered_total counter\n"
      "tusk_metrics_pages_rendered_total {}\n",
      renders_);
  if (text.size() + own.size() > max_bytes_) {
    const std::size_t room = max_bytes_ > own.size() + 80 ? max_bytes_ - own.size() - 80 : 0;
    const auto cut = room > 0 ? text.rfind('\n', room - 1) : std::string::npos;
    const std::size_t rendered = text.size();
    text.resize(cut == std::string::npos ? 0 : cut + 1);
    text += fmt::format("# tusk: this page was cut at {} of its {} bytes\n", text.size(), rendered);
    spdlog::warn(
        "metrics: the page rendered {} bytes, more than the {} a scrape may take: the series past that "
        "are left out",
        rendered, max_bytes_);
  }
  text += own;
  text_ = std::make_shared<const std::string>(std::move(text));
  rendered_at_ = now;
  return text_;
}

std::uint64_t MetricsPage::renders() const {
  std::lock_guard lock(mutex_);
  return renders_;
}

}  // namespace tusk
