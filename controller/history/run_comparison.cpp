#include "controller/history/run_comparison.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <map>

#include "common/units.hpp"

namespace tusk {

namespace {

std::string stream_key(const std::string& test, const std::string& agent, const std::string& stream_id,
                       const std::string& peer) {
  return fmt::format("{}\n{}\n{}\n{}", test, agent, stream_id, peer);
}

// The comparisons of one stream present in both runs, each appending what got worse.
class StreamComparison {
 public:
  StreamComparison(const StreamRow& before, const StreamRow& after, const WorseThresholds& thresholds,
                   std::vector<Regression>& out)
      : a_(before), b_(after), t_(thresholds), out_(out) {}

  void run() {
    if (a_.passed && !b_.passed) add("passed", 1, 0, "passed -> failed");
    bit_errors();
    loss();
    if (a_.retransmits && b_.retransmits && *b_.retransmits >= t_.retransmits_factor * *a_.retransmits &&
        *b_.retransmits - *a_.retransmits >= t_.retransmits_absolute) {
      add("retransmits", *a_.retransmits, *b_.retransmits,
          fmt::format("retransmits {} -> {}", stored_count_text(*a_.retransmits), stored_count_text(*b_.retransmits)));
    }
    if (a_.throughput_bps && b_.throughput_bps && *a_.throughput_bps > 0 &&
        *b_.throughput_bps <= *a_.throughput_bps * (1 - t_.throughput_drop)) {
      add("throughput_bps", *a_.throughput_bps, *b_.throughput_bps,
          fmt::format("throughput {} -> {} ({:+.1f} %)", units::format_bit_rate(*a_.throughput_bps),
                      units::format_bit_rate(*b_.throughput_bps),
                      percent_change(*a_.throughput_bps, *b_.throughput_bps)));
    }
    if (a_.latency_p99_ns && b_.latency_p99_ns && *a_.latency_p99_ns > 0 &&
        *b_.latency_p99_ns >= *a_.latency_p99_ns * (1 + t_.latency_p99_rise)) {
      add("latency_p99_ns", *a_.latency_p99_ns, *b_.latency_p99_ns,
          fmt::format("latency p99 {} -> {} ({:+.1f} %)", stored_latency_text(*a_.latency_p99_ns),
                      stored_latency_text(*b_.latency_p99_ns), percent_change(*a_.latency_p99_ns, *b_.latency_p99_ns)));
    }
    // A completion error is a failed work request: any where there were none counts.
    if (a_.completion_errors && b_.completion_errors && *b_.completion_errors > *a_.completion_errors &&
        (*a_.completion_errors == 0 || *b_.completion_errors >= t_.retransmits_factor * *a_.completion_errors)) {
      add("completion_errors", *a_.completion_errors, *b_.completion_errors,
          fmt::format("completion errors {} -> {}", stored_count_text(*a_.completion_errors),
                      stored_count_text(*b_.completion_errors)));
    }
  }

 private:
  static double percent_change(double before, double after) { return (after - before) / before * 100; }

  void add(std::string metric, double before, double after, std::string text) {
    Regression regression;
    regression.test = b_.test;
    regression.agent = b_.agent;
    regression.stream_id = b_.stream_id;
    regression.peer = b_.peer;
    regression.link = b_.link;
    regression.flow = b_.flow;
    regression.metric = std::move(metric);
    regression.before = before;
    regression.after = after;
    regression.text = std::move(text);
    out_.push_back(std::move(regression));
  }

  // Errors where there were none always count. Otherwise the bound must rise by the factor, with
  // errors seen: with none, a higher bound only means fewer bits were compared.
  void bit_errors() {
    const auto bound_text = [&] {
      if (!a_.ber_upper_bound || !b_.ber_upper_bound) return std::string();
      return fmt::format("BER bound {} -> {}", units::format_ratio(*a_.ber_upper_bound),
                         units::format_ratio(*b_.ber_upper_bound));
    };
    if (a_.bit_errors && b_.bit_errors && *a_.bit_errors == 0 && *b_.bit_errors > 0) {
      const std::string bound = bound_text();
      add("bit_errors", 0, *b_.bit_errors,
          fmt::format("bit errors 0 -> {}{}", stored_count_text(*b_.bit_errors), bound.empty() ? "" : ", " + bound));
      return;
    }
    if (a_.ber_upper_bound && b_.ber_upper_bound && b_.bit_errors.value_or(0) > 0 &&
        *b_.ber_upper_bound >= t_.ber_bound_factor * *a_.ber_upper_bound) {
      add("ber_upper_bound", *a_.ber_upper_bound, *b_.ber_upper_bound,
          fmt::format("{} (x{:.3g}, {} bit errors)", bound_text(),
                      *a_.ber_upper_bound > 0 ? *b_.ber_upper_bound / *a_.ber_upper_bound : INFINITY,
                      stored_count_text(*b_.bit_errors)));
    }
  }

  void loss() {
    if (!a_.loss_ratio || !b_.loss_ratio) return;
    const double before = *a_.loss_ratio, after = *b_.loss_ratio;
    if (after - before > t_.loss_ratio_absolute && after > t_.loss_ratio_factor * before) {
      std::string text = fmt::format("loss ratio {} -> {}", units::format_ratio(before), units::format_ratio(after));
      if (a_.lost_frames && b_.lost_frames) {
        text += fmt::format(" ({} -> {} frames lost)", stored_count_text(*a_.lost_frames),
                            stored_count_text(*b_.lost_frames));
      }
      add("loss_ratio", before, after, std::move(text));
    }
  }

  const StreamRow& a_;
  const StreamRow& b_;
  const WorseThresholds& t_;
  std::vector<Regression>& out_;
};

bool named_suspect(const LinkRow& link) {
  return link.role == "suspect" && (link.confidence == "medium" || link.confidence == "high");
}

}  // namespace

std::string Regression::subject() const {
  if (agent.empty()) return fmt::format("{} link {}", test, link);
  std::string named = fmt::format("{} {} {}", test, agent, stream_id);
  if (!link.empty()) named += fmt::format(" ({})", link);
  return named;
}

Comparison compare_runs(const RunRows& before, const RunRows& after, const WorseThresholds& thresholds) {
  Comparison comparison;
  std::map<std::string, std::size_t> later;
  for (std::size_t i = 0; i < after.streams.size(); ++i) {
    const StreamRow& row = after.streams[i];
    later.try_emplace(stream_key(row.test, row.agent, row.stream_id, row.peer), i);
  }
  std::vector<bool> matched(after.streams.size(), false);
  for (const StreamRow& a : before.streams) {
    const auto found = later.find(stream_key(a.test, a.agent, a.stream_id, a.peer));
    if (found == later.end()) {
      Regression missing;
      missing.test = a.test;
      missing.agent = a.agent;
      missing.stream_id = a.stream_id;
      missing.peer = a.peer;
      missing.link = a.link;
      missing.flow = a.flow;
      missing.metric = "missing";
      missing.text = "in the earlier run, missing from the later one";
      comparison.regressions.push_back(std::move(missing));
      continue;
    }
    if (matched[found->second]) continue;  // a stream listed twice in the earlier run compares once
    matched[found->second] = true;
    ++comparison.compared_streams;
    StreamComparison(a, after.streams[found->second], thresholds, comparison.regressions).run();
  }
  for (std::size_t i = 0; i < after.streams.size(); ++i) {
    if (matched[i]) continue;
    const StreamRow& b = after.streams[i];
    comparison.new_streams.push_back(fmt::format("{} {} {}", b.test, b.agent, b.stream_id));
  }

  // A fabric link that localisation now names and did not before.
  std::map<std::string, const LinkRow*> earlier_links;
  for (const LinkRow& link : before.links) earlier_links.try_emplace(link.test + "\n" + link.key, &link);
  for (const LinkRow& link : after.links) {
    if (!named_suspect(link)) continue;
    const auto found = earlier_links.find(link.test + "\n" + link.key);
    if (found != earlier_links.end() && named_suspect(*found->second)) continue;
    Regression suspect;
    suspect.test = link.test;
    suspect.link = link.name;
    suspect.metric = "suspect";
    suspect.before = found == earlier_links.end() ? 0.0 : found->second->votes;
    suspect.after = link.votes;
    suspect.text = fmt::format("localisation now names it ({} confidence; {} of {} flows through it failed)",
                               link.confidence, link.failing_flows, link.flows);
    comparison.regressions.push_back(std::move(suspect));
  }
  return comparison;
}

}  // namespace tusk
