// Localisation in time: each window of the test fitted on its own counts, so a suspect says when it
// was at fault, and a fault the whole test's counts dilute under the floor (five bad minutes of a
// night) is still named, from the windows that held it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "common/units.hpp"
#include "controller/verdict/localiser.hpp"

namespace tusk::localiser {
namespace {

// The windows share the fit's work budget: a night of 64 windows costs what four whole fits may.
constexpr std::uint64_t kWindowsWorkBudget = 4 * kLinkRateWorkBudget;

std::string at_text(std::uint64_t ms) {
  return units::format_duration(std::chrono::milliseconds(ms));
}

}  // namespace

std::map<std::uint32_t, WindowMarks> Localiser::fit_windows(FaultKind kind) const {
  std::map<std::uint32_t, WindowMarks> marks;
  if (!windows_ || windows_->size() == 0 || kind == FaultKind::Failure) return marks;
  const FlowWindows& windows = *windows_;
  const std::uint64_t budget = kWindowsWorkBudget / windows.size();
  // Each window is a test of every link of its own: W of them would name W times the healthy links
  // one test does, so each is held to the floor W times more surely (Bonferroni). Without it, one
  // set of 25 with 64 windows named a link for a window's two damaged frames on a fabric of healthy
  // links (bench/localisation_sim --windows 64 --noise 0.1).
  const double confidence = 1 - (1 - kFloorConfidence) / static_cast<double>(windows.size());
  std::vector<FlowEvents> flows(table_.size());
  for (std::uint32_t w = 0; w < windows.size(); ++w) {
    bool any_events = false;
    for (std::size_t f = 0; f < table_.size(); ++f) {
      FlowEvents& events = flows[f];
      events.trials = events.events = 0;
      const FlowRecord& flow = table_[f];
      if (flow.has(FlowRecord::kHostSide) || flow.link_count == 0 || flow.rx_stream >= windows.by_stream.size())
        continue;
      const auto& counts = windows.by_stream[flow.rx_stream];
      if (w >= counts.size()) continue;
      const WindowCounts& in = counts[w];
      if (kind == FaultKind::Loss && flow.has(FlowRecord::kCountsLoss)) {
        events.trials = std::min(in.received, kMaxCount) + std::min(in.lost, kMaxCount);
        events.events = std::min(in.lost, kMaxCount);
      } else if (kind == FaultKind::Damage && flow.has(FlowRecord::kCountsDamage)) {
        events.trials = std::min(in.received, kMaxCount);
        events.events = std::min(in.damaged, events.trials);
      }
      if (events.trials > 0 && events.links.empty()) events.links = fitted_links(f);
      any_events = any_events || events.events > 0;
    }
    if (!any_events) continue;
    for (LinkRate& rate : estimate_link_rates(flows, fitted_link_count(), budget)) {
      std::erase_if(rate.explains, [&](std::uint32_t f) { return !table_[f].has(FlowRecord::kFailing); });
      if (rate.explains.empty() || under_floor(rate, kind, confidence) || !keep_known_links(rate)) continue;
      for (const std::uint32_t link : rate.links) {
        WindowMarks& mark = marks[link];
        if (mark.count == 0) {
          mark.first = w;
          mark.group = rate.links;
          mark.flows = rate.flows;
        }
        mark.last = w;
        ++mark.count;
        mark.span_ms += windows.end_ms[w] - windows.start_ms[w];
        mark.met += static_cast<double>(rate.met);
        mark.trials += rate.trials;
        mark.events += rate.events;
        mark.evidence += rate.evidence;
        mark.explains.insert(rate.explains.begin(), rate.explains.end());
      }
    }
  }
  return marks;
}

const WindowMarks* Localiser::marks_of(const std::vector<std::uint32_t>& group,
                                       const std::map<std::uint32_t, WindowMarks>& marks) {
  for (const std::uint32_t link : group) {
    if (const auto found = marks.find(link); found != marks.end()) return &found->second;
  }
  return nullptr;
}

SuspectWindows Localiser::windows_of(const WindowMarks& marks) const {
  const FlowWindows& windows = *windows_;
  SuspectWindows out;
  out.first = marks.first;
  out.last = marks.last;
  out.count = marks.count;
  out.of = static_cast<std::uint32_t>(windows.size());
  out.first_start_ms = windows.start_ms[marks.first];
  out.last_end_ms = windows.end_ms[marks.last];
  const std::uint64_t whole = windows.end_ms.back() - windows.start_ms.front();
  out.share = whole > 0 ? static_cast<double>(marks.span_ms) / static_cast<double>(whole) : 0;
  return out;
}

std::string Localiser::windows_text(const SuspectWindows& windows) {
  if (windows.steady()) return fmt::format("; at fault in every one of the test's {} windows", windows.of);
  return fmt::format("; at fault in {} of the test's {} windows, from {} to {} into it ({:.0f} % of its time)",
                     windows.count, windows.of, at_text(windows.first_start_ms), at_text(windows.last_end_ms),
                     100 * windows.share);
}

void Localiser::name_in_time(std::vector<std::uint32_t> group, const WindowMarks& marks, FaultKind kind) {
  LinkRate rate;
  rate.links = group;
  rate.met = static_cast<std::uint64_t>(std::llround(marks.met));
  rate.trials = marks.trials;
  set_rate_from_met(rate);
  rate.events = marks.events;
  rate.evidence = marks.evidence;
  rate.flows = marks.flows;
  rate.explains.assign(marks.explains.begin(), marks.explains.end());
  const TwinPlacement placed = order_twins(group, rate.explains.front());
  if (told_apart(group, placed) && name_host_end(group.front(), rate, kind)) {
    add_windows(out_.hosts.back(), marks);
    out_.hosts.back().evidence += ": the rate is that of those windows";
    return;
  }
  LinkSuspect suspect = suspect_of(group, rate, kind, placed);
  add_windows(suspect, marks);
  suspect.evidence += ": the rate is that of those windows";
  out_.suspects.push_back(std::move(suspect));
  suspect_link_.push_back(group.front());
}

}  // namespace tusk::localiser
