// Naming the bad links. Every flow of a routed test has a path (the hops its path-trace probes
// found), what it counted (frames sent, lost, damaged) and a verdict; localisation turns them into
// "these links, at these rates, with this evidence":
//   - for each kind of fault (loss, damage, and failures that no count shows) the links' rates are
//     fitted to every flow's, passing flows included (link_rates.hpp: a likelihood fit that keeps
//     the fewest links that explain what the flows saw, as NetBouncer, NSDI'19, does with probes);
//     every link whose rate is significantly above zero and explains a failing flow is a suspect,
//     so several faults at once, of different kinds, are each named;
//   - links crossed by exactly the same flows (in a two-tier fabric, a leaf's uplink to a spine and
//     that spine's downlink to the other leaf) cannot be told apart by flows; the probes can: a
//     probe that expires at hop k crossed the link into k and no further, so loss or damage that
//     starts at hop k (more than at hop k-1) is on the link into k;
//   - faults that belong to a host are named as such: a receiver that dropped frames itself (its
//     flows vote for no link), and a host's own link, where every flow through it starts or ends.
// The result is plain data in the test's outcome: the flows and their paths, the ranked suspects
// with their rates and evidence, confidence and what a technician checks next, and one conclusion.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "controller/profile/localisation_settings.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/switch_counters.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {

// One flow with its names (FlowTable::traced): its streams, in TestOutcome::streams, where the test
// still keeps them (a schedule keeps a finished step's failing streams only).
struct TracedFlowPath {
  std::optional<std::size_t> rx_stream;  // the receiver's judged stream
  std::optional<std::size_t> tx_stream;  // the sender's stream, which carries the trace
  std::string sender, receiver;          // agents
  std::vector<std::string> node_names;   // the topology's device for each node of the path, else its address
  std::vector<std::string> links;        // the links between consecutive nodes, by NamedLink::key
  bool reached = false;                  // the trace reached the destination with no unknown hop
  bool failing = false;
  bool host_side = false;           // failed for a reason at a host: votes for no link
  bool host_drops = false;          // among them its receiver's own drops
  std::vector<std::string> faults;  // the metrics a failing flow failed on
};

// Probes that expired at the link's far end against those that expired one hop before, summed
// over every flow through the link. Loss on the link persists at every hop past it; a router that
// answers fewer probes itself (an ICMP policer, a busy control plane) shows its deficit at its own
// hop alone, on every flow that reaches it. So a deficit at the far end is loss starting on the link
// only where it persists one hop further, or, at the last hop that answers (an RDMA NIC answers no
// probe), where the far end answers the flows that reach it by its other links as it answered
// before.
struct ProbeEvidence {
  std::uint64_t probes = 0, answers = 0, damaged = 0;
  std::uint64_t probes_before = 0, answers_before = 0, damaged_before = 0;
  bool first_hop = false;  // "before" is the sender itself: nothing lost there
  // One hop past the far end, over the flows whose path goes on past it.
  std::uint64_t probes_after = 0, answers_after = 0;
  // The far end's answers to the flows that reach it by its other links, and their hop before
  // (the sender counts as answering all).
  std::uint64_t probes_elsewhere = 0, answers_elsewhere = 0;
  std::uint64_t probes_elsewhere_before = 0, answers_elsewhere_before = 0;
  double loss_z = 0;  // how far more probes went unanswered here than a hop before, in standard errors
  double damage_z = 0;
  double persist_z = 0;    // how far more went unanswered one hop past than a hop before
  double elsewhere_z = 0;  // how far this deficit is above the far end's deficit by its other links
  double lost_share() const { return probes ? 1.0 - static_cast<double>(answers) / static_cast<double>(probes) : 0; }
  double lost_share_before() const;
  double lost_share_after() const;
  double damaged_share() const { return answers ? static_cast<double>(damaged) / static_cast<double>(answers) : 0; }
  double damaged_share_before() const;
  // Loss or damage starts on this link: 3 standard errors above the hop before, and a loss that
  // the hop past it or the far end's other links show is the link's, not the router's.
  bool starts_here() const { return damage_starts() || (loss_z >= 3 && loss_is_the_links()); }
  // More probes come back damaged here than a hop before: policing drops answers, it damages none.
  bool damage_starts() const { return damage_z >= 3; }
  bool loss_is_the_links() const;
  // The far end is the last hop that answered (nothing past it to see the loss persist).
  bool last_answered() const { return probes_after == 0; }
};

enum class Confidence { Low, Medium, High };
const char* to_string(Confidence confidence);

// What a suspect does to what crosses it: loses frames, damages them (bit errors), or fails flows
// that count neither (RDMA QPs slower than their siblings, latency).
enum class FaultKind { Loss, Damage, Failure };
const char* to_string(FaultKind kind);
// A second kind of fault the same link shows, beside the one it is named for (a link that damages
// frames also loses those whose headers it hit).
struct OtherFault {
  FaultKind kind = FaultKind::Loss;
  double rate = 0, rate_low = 0, rate_high = 0;
  std::size_t explains = 0;  // failing flows whose events of this kind it accounts for
  Confidence confidence = Confidence::Low;
};

// The windows of the test in which a suspect was significant on its own (localisation in time:
// flow_windows.hpp): when it began and ended, how often, and what share of the test they span.
struct SuspectWindows {
  std::uint32_t first = 0, last = 0;  // from 0
  std::uint32_t count = 0, of = 0;
  std::uint64_t first_start_ms = 0, last_end_ms = 0;  // into the test
  double share = 0;                                   // of the test's time
  bool steady() const { return count == of; }
};

struct LinkSuspect {
  std::string key;   // the link and its direction, as NamedLink::key
  std::string name;  // with its cable
  FaultKind kind = FaultKind::Failure;
  double rate = 0;                     // the share of frames crossing it that it loses or damages
  double rate_low = 0, rate_high = 0;  // its 95 % interval
  double likelihood_ratio = 0;         // 2 log LR of the fit with it against the best fit without it
  std::vector<std::size_t> explains;   // failing flows whose events it accounts for, in whole or part
  std::vector<std::size_t> failing;    // into Localisation::flows: every flow through it
  std::vector<std::size_t> passing;
  std::uint64_t passing_summed = 0;  // clean flows through it that a schedule summed, not listed
  double votes = 0;                  // the failing flows it explains: a score to compare runs by
  ProbeEvidence probes;
  Confidence confidence = Confidence::Low;
  std::vector<std::string> faults;   // what the failing flows failed on
  std::vector<std::string> cleared;  // links the same flows crossed that the probes clear
  std::vector<std::string> tied;     // links nothing tells apart from this one
  // Links the same flows cross after this one where loss or damage starts again, with their probes.
  std::vector<std::string> lossier_past_it;
  // What the switches at its ends counted over the test, when they were read (switch_counters.hpp),
  // and whether that confirms it: they counted loss there (CountedDirection::counts_loss).
  std::optional<CountedDirection> counted;
  bool confirmed_by_counters = false;
  std::vector<OtherFault> also;  // the other kinds it is significant for, the strongest first
  // The windows it was significant in, when the test's flows were counted window by window.
  std::optional<SuspectWindows> windows;
  std::string evidence;  // one line
  std::vector<std::string> next_steps;
};

struct HostSuspect {
  std::string agent;
  std::string problem;  // "receiver cannot keep up", "NIC or cable (receive side)", ...
  std::string evidence;
  std::vector<std::string> next_steps;
  std::optional<SuspectWindows> windows;  // as LinkSuspect's, for a host's own link
};

// A link the fit found losing or damaging frames at a rate not above the noise floor with 99.9 %
// confidence: its events are reported as noise, never as a suspect.
struct NoiseLink {
  std::string key, name;  // the likeliest of the links nothing tells apart (as LinkSuspect's)
  std::vector<std::string> tied;
  FaultKind kind = FaultKind::Loss;
  std::uint64_t events = 0;  // the flows' events the fit gives it
  double rate = 0, rate_low = 0, rate_high = 0;
};

class FlowTable;

// A link that adds delay to its flows: their latency risen together above their siblings' (the
// flows between the same hosts on other paths), by more than the floor's delay with 99.9 %
// confidence (link_delays.hpp). Named whether or not a flow failed: a queue fails no threshold.
struct DelaySuspect {
  std::string key, name;
  std::vector<std::string> tied;   // links nothing tells apart from it
  double added_ns = 0;             // to each flow through it
  double low_ns = 0, high_ns = 0;  // its 95 % interval
  double z = 0;                    // in standard errors of the flows' scatter
  std::uint32_t flows = 0, siblings = 0;
  std::string evidence;  // one line
};

struct Localisation {
  std::shared_ptr<const FlowTable> flows;  // the flows (flow_table.hpp); the indexes below are into it
  std::vector<LinkSuspect> suspects;       // ranked; the first is named when its confidence is not low
  std::vector<HostSuspect> hosts;
  std::vector<DelaySuspect> delays;  // the most added first
  bool delays_complete = true;       // false: the delay fit stopped at its budget; more may add delay
  NoiseFloor floor;                  // what the links' rates were judged against
  std::vector<NoiseLink> noise;      // the largest rate first
  std::string noise_text;            // "" when there is none
  std::string conclusion;            // one line; "" when no flow failed
  const LinkSuspect* top() const {
    return !suspects.empty() && suspects.front().confidence != Confidence::Low ? &suspects.front() : nullptr;
  }
};

struct FlowWindows;

// `topology` may be null: links are then named by the hops' addresses. `counters` (null when no
// switch was read) confirm suspects and split links the same flows cross. A link whose loss or
// damage is not above `floor` with 99.9 % confidence is noise. `windows` (null: none) are the
// flows' counts window by window: each suspect is also fitted in each window, and says which it
// was significant in; a link significant in some windows is named even where the whole test's
// counts dilute it under the floor (a cable that went bad for five minutes of a night).
Localisation localise(const std::vector<StreamVerdict>& streams, const FabricTopology* topology,
                      const SwitchCounterEvidence* counters = nullptr, const NoiseFloor& floor = {},
                      const FlowWindows* windows = nullptr);
// Every flow of `found` with its names: for one test's few flows (a method's judge, a test); a
// schedule's are read from the table a flow at a time.
std::vector<TracedFlowPath> traced_flows(const Localisation& found);

// The same, over flows already gathered (a schedule's steps, each added as it ended).
Localisation localise(std::shared_ptr<const FlowTable> flows, const FabricTopology* topology,
                      const SwitchCounterEvidence* counters = nullptr, const NoiseFloor& floor = {},
                      const FlowWindows* windows = nullptr);

}  // namespace tusk
