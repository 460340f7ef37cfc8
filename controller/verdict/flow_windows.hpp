// A test's flows counted window by window, for localisation in time: the windows are its series'
// bins (controller/outcome/stream_series.hpp: at most kMaxSeriesBins over the whole test, aligned
// across its streams by sample index), so what a night costs is bounded by the windows, never by
// its samples. Plain data; test_judgement.cpp fills it from the streams' series.
#pragma once

#include <cstdint>
#include <vector>

namespace tusk {

struct WindowCounts {
  std::uint64_t received = 0, lost = 0, damaged = 0;  // frames
};

struct FlowWindows {
  // Each window's start and end, in milliseconds into the test.
  std::vector<std::uint64_t> start_ms, end_ms;
  // By the index of the test's streams (TestOutcome::streams): a receiving stream's counts in each
  // window; shorter (or empty) where it has no samples in the later ones.
  std::vector<std::vector<WindowCounts>> by_stream;
  std::size_t size() const { return start_ms.size(); }
};

}  // namespace tusk
