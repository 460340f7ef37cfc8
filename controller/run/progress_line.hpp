// The live line a person watches during a run: rewritten in place on a terminal, silent elsewhere.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

namespace tusk {

class ProgressLine {
 public:
  explicit ProgressLine(bool enabled, std::FILE* out = stdout) : enabled_(enabled), out_(out) {}
  ~ProgressLine() { finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  // Redraws at most four times a second.
  void update(const std::string& text);
  // Ends the line so later output starts on a fresh one.
  void finish();

 private:
  bool enabled_;
  std::FILE* out_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace tusk
