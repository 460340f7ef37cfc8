#include "controller/verdict/optics_timeline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/clock.hpp"

namespace tusk {
namespace {

// The interval's most severe finding: the first failure, else the first warning; none when the
// interval said nothing an interval can say.
const OpticsFinding* most_severe(const OpticsVerdict& verdict) {
  const OpticsFinding* found = nullptr;
  for (const OpticsFinding& finding : verdict.findings) {
    if (finding.what == OpticsMeasure::fec_counters) continue;  // "not judged": the whole test's to say
    if (finding.severity == OpticsSeverity::failure) return &finding;
    if (!found) found = &finding;
  }
  return found;
}

}  // namespace

void add_optics_interval(OpticsTimeline& timeline, const PortOpticsOutcome& judged, std::int64_t end_ns,
                         std::uint64_t interval_ns) {
  if (timeline.intervals == 0) {
    timeline.agent = judged.agent;
    timeline.port = judged.port;
    timeline.netdev = judged.netdev;
    timeline.title = port_optics_title(judged);
  }
  ++timeline.intervals;
  const OpticsFinding* finding = most_severe(judged.verdict);
  if (!finding) return;
  const bool fails = finding->severity == OpticsSeverity::failure;
  // Both from an agent: bounded here.
  const auto length = static_cast<std::int64_t>(std::min(interval_ns, kMaxOpticsIntervalNs));
  const std::int64_t start_ns = end_ns > length ? end_ns - length : 0;
  if (timeline.with_findings == 0) {
    timeline.first_start_ns = start_ns;
    timeline.first_end_ns = end_ns;
    timeline.first_text = finding->text;
    timeline.worst_text = finding->text;
  }
  if (fails && timeline.failing == 0) {
    timeline.failing_start_ns = start_ns;
    timeline.failing_end_ns = end_ns;
    timeline.worst_text = finding->text;
  }
  ++timeline.with_findings;
  if (fails) ++timeline.failing;
  timeline.last_end_ns = std::max(timeline.last_end_ns, end_ns);
}

void merge_optics_timeline(OpticsTimeline& into, const OpticsTimeline& more) {
  if (more.intervals == 0) return;
  if (into.intervals == 0) {
    into = more;
    return;
  }
  const bool more_first = more.with_findings > 0 && (into.with_findings == 0 || more.first_end_ns < into.first_end_ns);
  if (more_first) {
    into.first_start_ns = more.first_start_ns;
    into.first_end_ns = more.first_end_ns;
    into.first_text = more.first_text;
  }
  // A method's steps come in time order: `into` is the earlier, so its first failure stays first.
  if (!into.failed() && more.failed()) {
    into.failing_start_ns = more.failing_start_ns;
    into.failing_end_ns = more.failing_end_ns;
    into.worst_text = more.worst_text;
  } else if (!into.failed() && more_first) {
    into.worst_text = more.worst_text;
  }
  into.intervals += more.intervals;
  into.with_findings += more.with_findings;
  into.failing += more.failing;
  into.last_end_ns = std::max(into.last_end_ns, more.last_end_ns);
}

std::string optics_timeline_text(const OpticsTimeline& timeline) {
  if (timeline.with_findings == 0) {
    return fmt::format("{}: no findings in {} interval{}", timeline.title, timeline.intervals,
                       timeline.intervals == 1 ? "" : "s");
  }
  if (!timeline.failed()) {
    return fmt::format("{}: warnings in {} of {} intervals, the first from {} to {}: {}", timeline.title,
                       timeline.with_findings, timeline.intervals, utc_iso_time(timeline.first_start_ns),
                       utc_iso_time(timeline.first_end_ns), timeline.first_text);
  }
  std::string text = fmt::format("{}: failing in {} of {} intervals, the first from {} to {}: {}", timeline.title,
                                 timeline.failing, timeline.intervals, utc_iso_time(timeline.failing_start_ns),
                                 utc_iso_time(timeline.failing_end_ns), timeline.worst_text);
  if (timeline.first_end_ns < timeline.failing_end_ns) {
    text += fmt::format("; warnings from {}: {}", utc_iso_time(timeline.first_start_ns), timeline.first_text);
  }
  return text;
}

std::string optics_timeline_summary(const std::vector<OpticsTimeline>& timelines) {
  if (timelines.empty()) return {};
  std::uint32_t intervals = 0;
  std::size_t with_findings = 0, failing = 0;
  const OpticsTimeline* first = nullptr;          // the first finding of any port
  const OpticsTimeline* first_failing = nullptr;  // the first failure of any port
  for (const auto& timeline : timelines) {
    intervals = std::max(intervals, timeline.intervals);
    if (timeline.with_findings == 0) continue;
    ++with_findings;
    if (!first || timeline.first_end_ns < first->first_end_ns) first = &timeline;
    if (!timeline.failed()) continue;
    ++failing;
    if (!first_failing || timeline.failing_end_ns < first_failing->failing_end_ns) first_failing = &timeline;
  }
  std::string text = fmt::format("optics per interval: {} port{} read in up to {} interval{}", timelines.size(),
                                 timelines.size() == 1 ? "" : "s", intervals, intervals == 1 ? "" : "s");
  if (!first) return text + ", no findings in any";
  if (first_failing) {
    return text + fmt::format(", {} with findings, {} failing, the first failure on {} in the interval ending {}",
                              with_findings, failing, first_failing->title,
                              utc_iso_time(first_failing->failing_end_ns));
  }
  return text + fmt::format(", {} with warnings, the first on {} in the interval ending {}", with_findings,
                            first->title, utc_iso_time(first->first_end_ns));
}

}  // namespace tusk
