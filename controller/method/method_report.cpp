#include "controller/method/method_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/units.hpp"

namespace tusk {
namespace {

using json = nlohmann::ordered_json;

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string latency_text(const std::optional<double>& ns) {
  return ns ? units::format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(*ns))) : "-";
}

// Each frame size's throughput search: its ceiling, NDR and PDR, and how they were found.
json throughput_json(const MethodResult& result) {
  json sizes = json::array();
  for (const auto& size : result.throughput) {
    sizes.push_back({{"frame_size", size.frame_size},
                     {"ceiling_bps", size.ceiling_bps},
                     {"ceiling_pps", size.ceiling_pps},
                     {"ndr_share", size.ndr_share},
                     {"ndr_bps", size.ndr_bps()},
                     {"ndr_pps", size.ndr_pps()},
                     {"ndr_failed_share", size.ndr_failed_share > 0 ? json(size.ndr_failed_share) : json(nullptr)},
                     {"pdr_share", size.pdr_share},
                     {"pdr_bps", size.pdr_bps()},
                     {"pdr_pps", size.pdr_pps()},
                     {"pdr_failed_share", size.pdr_failed_share > 0 ? json(size.pdr_failed_share) : json(nullptr)},
                     {"trials", size.trials},
                     {"resolved", size.resolved},
                     {"receiver_limited", size.receiver_limited},
                     {"sender_short", size.sender_short},
                     {"ndr_sent_bps", size.ndr_sent_bps},
                     {"latency_p50_ns", optional_number(size.latency_p50_ns)},
                     {"latency_p99_ns", optional_number(size.latency_p99_ns)},
                     {"latency_max_ns", optional_number(size.latency_max_ns)}});
  }
  return sizes;
}

// Each leaf's bytes per equal-cost uplink against what random hashing predicts.
json ecmp_balance_json(const EcmpBalanceResult& e) {
  json leaves = json::array();
  for (const auto& leaf : e.leaves) {
    json uplinks = json::array();
    for (const auto& uplink : leaf.uplinks) {
      uplinks.push_back({{"link", uplink.link}, {"bytes", uplink.bytes}, {"flows", uplink.flows}});
    }
    leaves.push_back({{"leaf", leaf.leaf},
                      {"flows", leaf.flows},
                      {"uplinks", uplinks},
                      {"max_over_mean", leaf.max_over_mean},
                      {"fairness", leaf.fairness},
                      {"predicted_max_over_mean",
                       leaf.predicted_max_over_mean > 0 ? json(leaf.predicted_max_over_mean) : json(nullptr)},
                      {"passed", leaf.passed},
                      {"verdict", leaf.verdict}});
  }
  return {{"leaves", leaves},
          {"max_imbalance", optional_number(e.max_imbalance)},
          {"min_fairness", optional_number(e.min_fairness)}};
}

// The failed link, when its command ran, and each flow: crossed it, lost, time to resume.
json link_failure_json(const LinkFailureResult& f) {
  json flows = json::array();
  for (const auto& flow : f.flows) {
    flows.push_back({{"sender", flow.sender},
                     {"receiver", flow.receiver},
                     {"flow", flow.flow},
                     {"crossed", flow.crossed},
                     {"lost_frames", flow.lost_frames},
                     {"gaps", flow.gaps},
                     {"resume_ms", optional_number(flow.resume_ms)},
                     {"resumed", flow.resumed}});
  }
  return {{"link", f.link},
          {"command", f.command},
          {"at_s", f.at_s},
          {"ran_at_s", optional_number(f.ran_at_s)},
          {"exit_status", f.exit_status ? json(*f.exit_status) : json(nullptr)},
          {"flows_crossed", f.crossed},
          {"flows_crossed_and_lost", f.crossed_and_lost},
          {"flows_lost_without_crossing", f.collateral},
          {"convergence_ms",
           {{"min", optional_number(f.convergence_min_ms)},
            {"median", optional_number(f.convergence_median_ms)},
            {"max", optional_number(f.convergence_max_ms)}}},
          {"max_convergence_ms", optional_number(f.max_convergence_ms)},
          {"flows", flows}};
}

}  // namespace

json method_json(const MethodResult& result, const std::function<json(const TestOutcome&)>& step_json) {
  json out;
  out["kind"] = std::string(to_string(result.kind));
  out["complete"] = result.complete;
  if (result.kind == MethodKind::Throughput) out["pdr_loss"] = result.pdr_loss;
  json steps = json::array();
  for (std::size_t i = 0; i < result.steps.size(); ++i) {
    const MethodStep& step = result.steps[i];
    json row{{"label", step.label},
             {"frame_size", step.frame_size},
             {"offered_bps", step.offered_bps},
             {"offered_pps", step.offered_pps},
             {"rate_share", step.rate_fraction},
             {"senders", step.senders},
             {"latency_trial", step.latency_trial},
             {"tx_frames", step.tx_frames},
             {"tx_messages", step.tx_messages},
             {"messages_per_s", step.messages_per_s},
             {"rx_frames", step.rx_frames},
             {"lost_frames", step.lost_frames},
             {"loss_ratio", step.loss_ratio},
             {"host_drops", step.host_drops},
             {"ce_marked", step.ce_marked},
             {"rx_bps", step.rx_bps},
             {"sent_bps", step.sent_bps},
             {"sender_short", step.sender_short},
             {"latency_p50_ns", optional_number(step.latency_p50_ns)},
             {"latency_p99_ns", optional_number(step.latency_p99_ns)},
             {"latency_max_ns", optional_number(step.latency_max_ns)},
             {"nic", step.nic},
             {"verdict", std::string(to_string(step.verdict))}};
    if (result.kind == MethodKind::Shift) {
      row["pairs"] = step.pairs;
      // Its judged streams; those that passed left memory when it ended (the series holds them).
      row["streams"] = step.streams;
      json not_covered = json::array();
      for (const auto& pair : step.not_covered) {
        not_covered.push_back({{"sender", pair.sender}, {"receiver", pair.receiver}, {"why", pair.why}});
      }
      row["not_covered"] = std::move(not_covered);
    }
    if (i < result.step_outcomes.size()) row["test"] = step_json(result.step_outcomes[i]);
    steps.push_back(std::move(row));
  }
  out["steps"] = std::move(steps);
  if (result.kind == MethodKind::Throughput) out["throughput"] = throughput_json(result);
  if (const auto& c = result.congestion) {
    out["congestion"] = {{"congested_agent", c->congested_agent},
                         {"congested_rx_frames", c->congested_rx_frames},
                         {"congested_lost_frames", c->congested_lost_frames},
                         {"congested_loss_ratio", c->congested_loss_ratio},
                         {"uncongested_agent", c->uncongested_agent},
                         {"uncongested_rx_frames", c->uncongested_rx_frames},
                         {"uncongested_lost_frames", c->uncongested_lost_frames},
                         {"uncongested_loss_ratio", c->uncongested_loss_ratio},
                         {"uncongested_loss_allowed", c->uncongested_loss_allowed},
                         {"head_of_line_blocking", c->head_of_line_blocking}};
  }
  if (const auto& e = result.ecmp_balance) out["ecmp_balance"] = ecmp_balance_json(*e);
  if (const auto& b = result.burst_absorption) {
    json trains = json::array();
    for (const auto& step : b->steps) {
      trains.push_back(
          {{"burst_frames", step.burst_frames}, {"rx_frames", step.rx_frames}, {"lost_frames", step.lost_frames}});
    }
    out["burst_absorption"] = {
        {"senders", b->senders},
        {"steps", trains},
        {"largest_absorbed", b->largest_absorbed > 0 ? json(b->largest_absorbed) : json(nullptr)},
        {"smallest_lost", b->smallest_lost > 0 ? json(b->smallest_lost) : json(nullptr)},
        {"min_absorbed", b->min_absorbed ? json(*b->min_absorbed) : json(nullptr)}};
  }
  if (const auto& f = result.link_failure) out["link_failure"] = link_failure_json(*f);
  return out;
}

std::vector<std::vector<std::string>> method_step_rows(const MethodResult& result) {
  // RDMA steps move messages, not frames: what each size sent, how many messages a second, and
  // how long a message took to complete.
  const bool messages = std::any_of(result.steps.begin(), result.steps.end(),
                                    [](const MethodStep& step) { return step.tx_messages > 0 && step.tx_frames == 0; });
  if (messages) {
    std::vector<std::vector<std::string>> rows{
        {"step", "sent", "messages/s", "latency p50", "latency p99", "latency max", "verdict"}};
    for (const auto& step : result.steps) {
      rows.push_back({step.label, units::format_bit_rate(step.sent_bps), fmt::format("{:.0f}", step.messages_per_s),
                      latency_text(step.latency_p50_ns), latency_text(step.latency_p99_ns),
                      latency_text(step.latency_max_ns), std::string(to_string(step.verdict))});
    }
    return rows;
  }
  std::vector<std::vector<std::string>> rows{
      {"step", "offered", "sent", "received", "lost", "loss", "CE", "latency p99", "verdict"}};
  for (const auto& step : result.steps) {
    rows.push_back(
        {step.label, step.offered_bps > 0 ? units::format_bit_rate(step.offered_bps) : "-",
         fmt::format("{}", step.tx_frames), fmt::format("{}", step.rx_frames), fmt::format("{}", step.lost_frames),
         fmt::format("{:.4g}%{}{}", step.loss_ratio * 100, step.host_drops > 0 ? " (host drops)" : "",
                     step.sender_short ? fmt::format(" (sent {})", units::format_bit_rate(step.sent_bps)) : ""),
         fmt::format("{}", step.ce_marked), latency_text(step.latency_p99_ns), std::string(to_string(step.verdict))});
  }
  return rows;
}

std::vector<std::vector<std::string>> method_throughput_rows(const MethodResult& result) {
  std::vector<std::vector<std::string>> rows;
  if (const auto& c = result.congestion) {
    rows.push_back({"port", "agent", "received", "lost", "loss"});
    rows.push_back({"congested", c->congested_agent, fmt::format("{}", c->congested_rx_frames),
                    fmt::format("{}", c->congested_lost_frames),
                    fmt::format("{:.4g}%", c->congested_loss_ratio * 100)});
    rows.push_back({"uncongested", c->uncongested_agent, fmt::format("{}", c->uncongested_rx_frames),
                    fmt::format("{}", c->uncongested_lost_frames),
                    fmt::format("{:.4g}%{}", c->uncongested_loss_ratio * 100,
                                c->head_of_line_blocking ? " HEAD-OF-LINE BLOCKING" : "")});
    return rows;
  }
  if (const auto& e = result.ecmp_balance) {
    rows.push_back({"leaf", "uplink", "flows", "bytes", "max/mean", "Jain", "random hashing stays under", "verdict"});
    for (const auto& leaf : e->leaves) {
      for (std::size_t i = 0; i < leaf.uplinks.size(); ++i) {
        const bool first = i == 0;
        rows.push_back(
            {first ? leaf.leaf : "", leaf.uplinks[i].link, fmt::format("{}", leaf.uplinks[i].flows),
             fmt::format("{}", leaf.uplinks[i].bytes), first ? fmt::format("{:.3f}", leaf.max_over_mean) : "",
             first ? fmt::format("{:.3f}", leaf.fairness) : "",
             first && leaf.predicted_max_over_mean > 0 ? fmt::format("{:.3f}", leaf.predicted_max_over_mean) : "",
             first ? (leaf.passed ? std::string("pass") : "FAIL: " + leaf.verdict) : ""});
      }
    }
    return rows;
  }
  if (const auto& b = result.burst_absorption) {
    rows.push_back({"train (frames per sender)", "senders", "received", "lost", "absorbed"});
    for (const auto& step : b->steps) {
      rows.push_back({fmt::format("{}", step.burst_frames), fmt::format("{}", b->senders),
                      fmt::format("{}", step.rx_frames), fmt::format("{}", step.lost_frames),
                      step.lost_frames == 0 && step.rx_frames > 0 ? "yes" : "no"});
    }
    rows.push_back({"longest absorbed", "", "", "",
                    b->largest_absorbed > 0 ? fmt::format("{} frames", b->largest_absorbed) : std::string("none")});
    return rows;
  }
  if (const auto& f = result.link_failure) {
    const auto ms = [](const std::optional<double>& v) { return v ? fmt::format("{:g} ms", *v) : std::string("-"); };
    rows.push_back({"link down", "at", "flows crossed", "of them lost", "lost without crossing", "convergence min",
                    "median", "max"});
    rows.push_back({f->link, f->ran_at_s ? fmt::format("+{:.3f} s", *f->ran_at_s) : "not run",
                    fmt::format("{}", f->crossed), fmt::format("{}", f->crossed_and_lost),
                    fmt::format("{}", f->collateral), ms(f->convergence_min_ms), ms(f->convergence_median_ms),
                    ms(f->convergence_max_ms)});
    return rows;
  }
  if (result.kind != MethodKind::Throughput) return rows;
  rows.push_back({"frame size", "NDR", "NDR frames/s", fmt::format("PDR (loss <= {:g}%)", result.pdr_loss * 100),
                  "trials", "latency p50 / p99 at NDR", "note"});
  for (const auto& size : result.throughput) {
    std::string note = size.resolved ? "" : "not resolved within the trials";
    if (size.ndr_failed_share == 0 && size.trials > 0) note = "no loss at the test's rate: the NDR is at least that";
    if (size.receiver_limited)
      note += (note.empty() ? "" : "; ") + std::string("the receiving host dropped frames: a tester limit");
    if (size.sender_short)
      note += (note.empty() ? "" : "; ") + std::string("a passing trial sent less than it offered: a tester limit");
    rows.push_back({fmt::format("{} B", size.frame_size), units::format_bit_rate(size.ndr_bps()),
                    units::format_packet_rate(size.ndr_pps()), units::format_bit_rate(size.pdr_bps()),
                    fmt::format("{}", size.trials),
                    fmt::format("{} / {}", latency_text(size.latency_p50_ns), latency_text(size.latency_p99_ns)),
                    note});
  }
  return rows;
}

}  // namespace tusk
