#include "controller/outcome/stream_windows.hpp"

#include <algorithm>
#include <cmath>

#include "common/counter_names.hpp"
#include "controller/verdict/localiser.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {
namespace {

const StreamSeries* own_series(const TestOutcome& test, const StreamVerdict& verdict) {
  const auto agent = test.per_agent.find(verdict.agent);
  if (agent == test.per_agent.end()) return nullptr;
  const auto found = agent->second.series.find(verdict.stream.stream_id());
  return found == agent->second.series.end() ? nullptr : &found->second;
}

// The stream's bins at `width`: its own, or a checkpoint's running test's, lent by the run.
std::vector<SeriesBin> bins_of(const TestOutcome& test, const StreamVerdict& verdict, std::uint32_t width) {
  if (const StreamSeries* series = own_series(test, verdict); series && !series->bins().empty()) {
    return series->bins_at(width);
  }
  if (test.lent_series && test.lent_series->lend) {
    if (const auto lent = test.lent_series->lend(verdict.agent, verdict.stream.stream_id()))
      return lent->bins_at(width);
  }
  return {};
}

}  // namespace

FlowWindows stream_windows(const TestOutcome& test) {
  FlowWindows out;
  std::uint32_t width = test.lent_series ? test.lent_series->width : 1;
  for (const StreamVerdict& verdict : test.streams) {
    if (const StreamSeries* series = own_series(test, verdict)) width = std::max(width, series->width());
  }
  out.by_stream.resize(test.streams.size());
  std::size_t windows = 0;
  for (std::size_t i = 0; i < test.streams.size(); ++i) {
    const StreamVerdict& verdict = test.streams[i];
    const auto frames = counter_of(verdict.stream, counters::kRxFrames);
    const auto bytes = counter_of(verdict.stream, counters::kRxBytes);
    if (!frames || !bytes || *bytes == 0) continue;
    // A bin counts bytes received, not frames: the stream's own frames per byte turn one into the
    // other (exact for one frame size; a mix repeats every few frames).
    // The counts are the agent's word: a window receives no more than the whole stream did (a
    // hostile frames-per-byte made the product past what the conversion holds).
    const double frames_per_byte = static_cast<double>(*frames) / static_cast<double>(*bytes);
    const double most = static_cast<double>(std::min(*frames, localiser::kMaxCount));
    auto& counts = out.by_stream[i];
    for (const SeriesBin& bin : bins_of(test, verdict, width)) {
      const double received = std::min(static_cast<double>(bin.bytes) * frames_per_byte, most);
      counts.push_back({static_cast<std::uint64_t>(std::llround(received)), std::min(bin.lost, localiser::kMaxCount),
                        std::min(bin.damaged, localiser::kMaxCount)});
    }
    windows = std::max(windows, counts.size());
  }
  if (windows < 2) return {};
  // Bin k holds samples k * width + 1 .. (k + 1) * width.
  const auto window_ms = static_cast<std::uint64_t>(test.spec.sample_interval.count()) * width;
  for (std::size_t k = 0; k < windows; ++k) {
    out.start_ms.push_back(k * window_ms);
    out.end_ms.push_back((k + 1) * window_ms);
  }
  return out;
}

}  // namespace tusk
