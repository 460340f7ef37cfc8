// The routed flows a localisation reads, kept compact: per flow its ends, its counts, its flags and
// its path as link ids (about 80 bytes, where the judged streams it came from hold kilobytes), and
// per link what every flow's probes saw there, summed as the flows are added, and per sender what
// its probes saw along each path (probe_hops.hpp). A schedule adds each step's flows as the step
// ends and lets the step's streams go: the combined localisation and the link coverage of a night
// read this table alone.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/link_localisation.hpp"
#include "controller/verdict/link_rates.hpp"
#include "controller/verdict/probe_hops.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {

// A flow's stream that the test no longer keeps (a passing stream of a finished schedule step).
inline constexpr std::uint32_t kNoStream = std::numeric_limits<std::uint32_t>::max();

struct FlowRecord {
  enum Flag : std::uint8_t {
    kFailing = 1,
    kHostSide = 2,       // failed for a reason at a host: votes for no link
    kReached = 4,        // its trace reached the destination with no unknown hop
    kCountsLoss = 8,     // its receiver counted frames received and lost
    kCountsDamage = 16,  // and frames damaged
    kHostDrops = 32      // host-side because its receiver dropped frames itself
  };
  std::uint64_t loss_trials = 0, loss_events = 0;  // frames that could have been lost, and were
  std::uint64_t damage_trials = 0, damage_events = 0;
  std::uint32_t rx_stream = kNoStream;     // the judged stream, in the test's streams
  std::uint32_t tx_stream = kNoStream;     // the sender's, which carries the trace
  std::uint32_t sender = 0, receiver = 0;  // FlowTable::agent
  std::uint32_t links_at = 0;              // its links: FlowTable's path links from here
  std::uint32_t faults = 0;                // FlowTable::faults: what it failed on
  std::uint32_t step = 0;                  // the schedule's step (1-based); 0 outside a schedule
  float latency_ns = -1;                   // its median latency (one-way, or an RDMA completion's); < 0: none
  std::uint8_t link_count = 0;
  std::uint8_t flags = 0;
  bool has(Flag flag) const { return (flags & flag) != 0; }
  // Passed, counted no frame lost or damaged, and not the host's doing: what a schedule sums.
  bool clean() const { return !has(kFailing) && !has(kHostSide) && loss_events == 0 && damage_events == 0; }
};

// A link some flow's path crossed, and what every flow's probes saw there (ProbeEvidence's counts:
// its z-scores are the localisation's to compute, over all the flows).
struct FlowLink {
  static constexpr std::uint32_t kMixed = std::numeric_limits<std::uint32_t>::max();
  NamedLink named;
  std::string near_end, far_end;  // the devices (or addresses) it leaves and enters
  ProbeEvidence probes;           // over the flows that vote for links (not host-side)
  std::uint64_t moved = 0;        // probes past it that another address answered
  // The clean flows through it that the table summed rather than kept (FlowTable::append), by
  // FaultKind: what each adds to that kind's fit. Every clean flow is one trial of kind Failure.
  std::array<CleanFlows, 3> clean{};
  // Of those, the ones whose first link it is, and their one sender (kMixed: more than one); the
  // ones whose last link it is and that reached their receiver, and their one receiver.
  std::uint64_t clean_first = 0, clean_last = 0;
  std::uint32_t clean_sender = kMixed, clean_receiver = kMixed;
  std::uint64_t clean_flows() const { return clean[2].flows; }
};

class FlowTable {
 public:
  // Adds the routed flows of `streams` (one test's, or one step's): one flow per 5-tuple, whatever
  // judges it (the receiver's stream, or both ends of a QP), its path from the sender's trace.
  // `step`: its place in a schedule (0: none). The flows refer to the streams by their index.
  void add(const std::vector<StreamVerdict>& streams, const FabricTopology* topology, std::uint32_t step = 0);

  // Adds another table's flows (a finished step's), their streams renumbered by `stream_index`
  // (kNoStream for a stream no longer kept) and their step set to `step`. With `sum_clean`, a clean
  // flow (passed, no event counted, not the host's) is not kept but summed into its links
  // (FlowLink::clean): a schedule keeps what its night got wrong, and only counts what went right.
  // `other` keeps every flow it was given (its clean flows were never summed).
  void append(const FlowTable& other, std::uint32_t step, const std::vector<std::uint32_t>& stream_index,
              bool sum_clean = false);

  std::size_t size() const { return flows_.size(); }
  bool empty() const { return flows_.empty(); }
  const FlowRecord& operator[](std::size_t f) const { return flows_[f]; }
  std::span<const std::uint32_t> links_of(std::size_t f) const {
    return {path_links_.data() + flows_[f].links_at, flows_[f].link_count};
  }
  const std::string& agent(std::uint32_t id) const { return agents_[id]; }
  std::size_t link_count() const { return links_.size(); }
  const FlowLink& link(std::uint32_t id) const { return links_[id]; }
  // What every sender's probes saw at each hop of each path (the flows that vote for links).
  const ProbeHops& probe_hops() const { return probe_hops_; }
  const std::vector<std::string>& faults(std::uint32_t set) const { return fault_sets_[set]; }
  // The flow with its names, for what reads a few flows at a time (a report, a method's judge).
  TracedFlowPath traced(std::size_t f) const;

  // Per receiving agent, its flows and those it dropped frames of itself.
  struct ReceiverTally {
    std::uint32_t flows = 0, host_drops = 0;
  };
  const std::map<std::uint32_t, ReceiverTally>& receivers() const { return receivers_; }
  // Failing flows that vote for links but had no path trace.
  std::size_t untraced_failing() const { return untraced_failing_; }
  // The clean flows summed, not kept, and how many of them had a path trace that missed a hop.
  std::uint64_t clean_flows() const { return clean_flows_; }
  std::uint64_t clean_partial_paths() const { return clean_partial_; }
  // What it holds, in bytes (its vectors' capacity; the names' tables are small).
  std::size_t bytes() const;

 private:
  friend struct FlowTableLedger;  // a schedule's ledger keeps it whole (controller/method/schedule_ledger.hpp)

  std::uint32_t agent_id(const std::string& name);
  std::uint32_t link_id(const NamedLink& named, const std::string& near_end, const std::string& far_end);
  std::uint32_t fault_set_id(std::vector<std::string> faults);
  void tally(const FlowRecord& flow, const proto::StreamCounters* tx);
  void sum_clean_flow(const FlowRecord& flow, std::span<const std::uint32_t> links);

  std::vector<FlowRecord> flows_;
  std::vector<std::uint32_t> path_links_;
  std::vector<std::string> agents_;
  std::unordered_map<std::string, std::uint32_t> agent_ids_;
  std::vector<FlowLink> links_;
  ProbeHops probe_hops_;
  std::unordered_map<std::string, std::uint32_t> link_ids_;
  std::vector<std::vector<std::string>> fault_sets_{{}};  // set 0: none
  std::map<std::vector<std::string>, std::uint32_t> fault_set_ids_{{{}, 0}};
  std::map<std::uint32_t, ReceiverTally> receivers_;
  std::size_t untraced_failing_ = 0;
  std::uint64_t clean_flows_ = 0, clean_partial_ = 0;
};

}  // namespace tusk
