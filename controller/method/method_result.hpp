// What a method test came to (controller/method/): one row per step, each step's own outcome, and
// for a throughput search the NDR and PDR of each frame size. Every report reads these numbers;
// none works them out again.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/outcome/run_outcome.hpp"
#include "controller/verdict/flow_table.hpp"

namespace tusk {

// A sender-receiver pair a shift schedule planned that did not run to its step's end.
struct UncoveredPair {
  std::string sender, receiver;
  std::string why;  // "l2h1 not connected", "l2h1 lost during the step"
};

// One step's row: what it offered and what arrived, summed over the step's streams.
struct MethodStep {
  std::string label;             // "256 B at 50% (8 Mbit/s)", "fan-in 3"
  std::uint32_t frame_size = 0;  // 0: the test's own sizes
  double offered_bps = 0;        // per sender, as asked (0: the test's rate, when it has none)
  double offered_pps = 0;
  double rate_fraction = 0;  // of the test's rate; 0 where the step has a rate of its own
  std::uint32_t senders = 0;
  std::uint32_t pairs = 0;                 // shift: sender-receiver pairs planned
  std::uint32_t streams = 0;               // shift: streams judged (the passing leave memory with the step)
  std::vector<UncoveredPair> not_covered;  // shift: planned pairs an agent away or lost left out
  bool latency_trial = false;              // throughput: the trial at the NDR that measures latency
  std::uint32_t burst_frames = 0;          // burst_absorption: the train length, per sender
  std::uint64_t tx_frames = 0;
  std::uint64_t tx_messages = 0;  // RDMA: messages the senders' QPs completed
  double messages_per_s = 0;      // tx_messages over the step, summed over senders
  std::uint64_t rx_frames = 0;
  std::uint64_t lost_frames = 0;
  std::uint64_t host_drops = 0;  // frames the receiving hosts dropped themselves: not the device's loss
  std::uint64_t ce_marked = 0;
  double loss_ratio = 0;  // lost / (received + lost)
  double rx_bps = 0;      // received, summed over the receivers
  // What each sending agent really sent, on average over them (bytes sent × 8 / the step's
  // duration): below offered_bps, the tester could not offer what the step asked.
  double sent_bps = 0;
  bool sender_short = false;  // sent_bps under 98 % of offered_bps
  // The worst stream's latency (largest p50, p99, max), where the engine measures it: one way at a
  // DPDK receiver, completion latency at an RDMA sender.
  std::optional<double> latency_p50_ns, latency_p99_ns, latency_max_ns;
  // NIC counters over the step, summed over ports (out_of_sequence, np_cnp_sent, ...).
  std::map<std::string, double> nic;
  TestVerdict verdict = TestVerdict::Incomplete;
};

// RFC 2544 throughput of one frame size: the highest share of the test's rate that lost nothing
// (NDR) and that lost at most pdr_loss (PDR), and the lowest share that did worse.
struct SizeThroughput {
  std::uint32_t frame_size = 0;
  double ceiling_bps = 0;  // the test's rate at this size: what share 1 offers
  double ceiling_pps = 0;
  double ndr_share = 0, ndr_failed_share = 0;  // failed 0: no trial failed (the NDR is the ceiling or above)
  double pdr_share = 0, pdr_failed_share = 0;
  std::uint32_t trials = 0;
  bool resolved = false;          // both brackets within the resolution (or at the ceiling)
  bool receiver_limited = false;  // a failed trial had host drops: the bound is the tester's, not the device's
  bool sender_short = false;      // a passing trial sent less than it offered: the NDR may be above what was sent
  double ndr_sent_bps = 0;        // what the trial that set the NDR really sent, per sending agent
  std::optional<double> latency_p50_ns, latency_p99_ns, latency_max_ns;  // at the NDR, when asked
  double ndr_bps() const { return ndr_share * ceiling_bps; }
  double ndr_pps() const { return ndr_share * ceiling_pps; }
  double pdr_bps() const { return pdr_share * ceiling_bps; }
  double pdr_pps() const { return pdr_share * ceiling_pps; }
};

// RFC 2889 5.5: what reached the congested port and the uncongested one. The uncongested flow
// losing more than it may is head-of-line blocking: the device let one port's congestion hold
// back traffic bound elsewhere.
struct CongestionResult {
  std::string congested_agent, uncongested_agent;
  std::uint64_t congested_rx_frames = 0, congested_lost_frames = 0;
  double congested_loss_ratio = 0;
  std::uint64_t uncongested_rx_frames = 0, uncongested_lost_frames = 0;
  double uncongested_loss_ratio = 0;
  double uncongested_loss_allowed = 0;
  bool head_of_line_blocking = false;
};

// ecmp_balance: one leaf's equal-cost uplinks and what the test's flows put on each.
struct UplinkLoad {
  std::string link;  // the direction out of the leaf, "leaf1:swp1 -> spine1:swp3"
  std::uint64_t bytes = 0;
  std::size_t flows = 0;
};
struct LeafBalance {
  std::string leaf;
  std::vector<UplinkLoad> uplinks;
  std::size_t flows = 0;     // flows that left the leaf over one of them
  double max_over_mean = 0;  // the busiest uplink's bytes over the mean
  double fairness = 0;       // Jain's index of the bytes: 1 is even, 1/n is all on one
  // The max/mean that hashing `flows` flows at random onto the uplinks exceeds with probability
  // 0.1 %; 0 when so few flows can put everything on one uplink more often than that.
  double predicted_max_over_mean = 0;
  bool passed = true;
  std::string verdict;  // why it passed or failed, one line
};
struct EcmpBalanceResult {
  std::vector<LeafBalance> leaves;
  std::optional<double> max_imbalance, min_fairness;  // the profile's, when given
  std::vector<std::string> problems, warnings;
};

// link_failure: when the link went down and what each flow saw.
struct FailedLinkFlow {
  std::string sender, receiver, flow;  // flow: its 5-tuple as text
  bool crossed = false;                // its traced path crossed the link (before or after it failed)
  std::uint64_t lost_frames = 0;       // in gaps and outside them
  std::uint64_t gaps = 0;
  std::optional<double> resume_ms;  // the longest gap that closed: the time to resume on another path
  bool resumed = true;              // false: its traffic stopped and never came back
};
struct LinkFailureResult {
  std::string link, command;
  double at_s = 0;                 // into the test, as planned
  std::optional<double> ran_at_s;  // when the command started, into the test; none: it never ran
  std::optional<int> exit_status;  // the command's (128 + signal for a signal); none: it did not end
  std::vector<FailedLinkFlow> flows;
  std::size_t crossed = 0, crossed_and_lost = 0, collateral = 0;  // collateral: lost without crossing it
  std::optional<double> convergence_min_ms, convergence_median_ms, convergence_max_ms;
  std::optional<double> max_convergence_ms;
  std::vector<std::string> problems, warnings;
};

// burst_absorption: what each train length cost at the port the senders shared.
struct BurstStep {
  std::uint32_t burst_frames = 0;  // per sender, back to back
  std::uint64_t rx_frames = 0, lost_frames = 0;
};
struct BurstAbsorptionResult {
  std::uint32_t senders = 0;
  std::vector<BurstStep> steps;
  std::uint32_t largest_absorbed = 0;  // the longest train no frame of which was lost; 0: none
  std::uint32_t smallest_lost = 0;     // the shortest that lost frames; 0: none did
  std::optional<std::uint32_t> min_absorbed;
  std::vector<std::string> problems, warnings;
};

struct MethodResult {
  MethodKind kind = MethodKind::Sweep;
  double pdr_loss = 0;
  std::vector<MethodStep> steps;
  std::vector<TestOutcome> step_outcomes;                 // one per step, in order: each step's streams and problems
  std::shared_ptr<FlowTable> schedule_flows;              // shift: every step's flows, added as each ended
  std::vector<SizeThroughput> throughput;                 // kind throughput: one per frame size
  std::optional<CongestionResult> congestion;             // kind congestion_control
  std::optional<EcmpBalanceResult> ecmp_balance;          // kind ecmp_balance
  std::optional<LinkFailureResult> link_failure;          // kind link_failure
  std::optional<BurstAbsorptionResult> burst_absorption;  // kind burst_absorption
  bool complete = true;  // false: a step could not run to its end (agent lost, plan refused)
};

}  // namespace tusk
