#include "controller/run/progress_line.hpp"

namespace tusk {

void ProgressLine::update(const std::string& text) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(250)) return;
  last_draw_ = now;
  // \r back to column 0, then ESC[K clears what a longer previous line left behind.
  std::fprintf(out_, "\r%s\x1b[K", text.c_str());
  std::fflush(out_);
  drawn_ = true;
}

void ProgressLine::finish() {
  if (!drawn_) return;
  std::fputc('\n', out_);
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace tusk
