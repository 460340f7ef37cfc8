// The switches' own counts of a test: for every cable of the topology file with a switch at one
// end or both, what each end's port counted between the readings before and after the test, and
// per direction what went missing between one end's out and the other's in. Localisation takes
// these as evidence besides the flows and the probes: a switch counts every frame, probes or not,
// so it sees what ICMP policing (CoPP) hides and splits links that the same flows cross.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/switches/switch_reading.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {

// One direction of a cable, out of one port and into the other, as NamedLink::key names it.
struct CountedDirection {
  std::string key;                 // "leaf1:swp3 -> spine2:swp1"
  bool sender_read = false;        // the port it leaves was read before and after
  bool receiver_read = false;      // the port it enters
  std::uint64_t sent = 0;          // out packets of the sending port
  std::uint64_t received = 0;      // in packets of the receiving port
  std::uint64_t in_errors = 0;     // at the receiver: damaged frames (FCS, symbol errors)
  std::uint64_t in_discards = 0;   // at the receiver: frames it threw away
  std::uint64_t out_errors = 0;    // at the sender
  std::uint64_t out_discards = 0;  // at the sender (its queue overflowed)
  // Sent and never counted at the other end (in packets, errors or discards): a cable that loses
  // whole frames. 0 unless both ends were read. Agents that count discarded frames in their in
  // packets (Linux does) and those that do not (IF-MIB's own definition) both give the same.
  std::uint64_t vanished() const;
  // What the counters say this direction lost or damaged.
  std::uint64_t lost() const { return in_errors + in_discards + vanished(); }
  // Whether that is loss and not a port's background (kMinCountedLoss, kMinCountedShare).
  bool counts_loss() const;
  // "0 in errors, 347 in discards, 0 of 17554 sent never counted in" (the last where the sender was read).
  std::string counts_text() const;
};

struct LinkCounters {
  LinkEnd a_end, b_end;                    // as the topology file writes the cable
  std::string cable;                       // "" when the file names none
  std::string name;                        // "leaf1:swp3 <-> spine2:swp1, cable C-017"
  std::optional<SwitchPortCounters> a, b;  // each end's deltas, when it is a switch that was read
  CountedDirection a_to_b, b_to_a;
};

struct SwitchCounterEvidence {
  std::vector<LinkCounters> links;      // cables with a switch end that was read, in the file's order
  std::vector<std::string> unreadable;  // "switch l3 (198.18.0.13): no answer (timed out)"
  std::vector<std::string> warnings;    // a port the switch does not have, a counter that went back
  bool any_read() const { return !links.empty(); }
  bool empty() const { return links.empty() && unreadable.empty() && warnings.empty(); }
  // One line: "switch counters: 12 cables read, loss counted on l1:s2 -> s2:l1 (160 in discards);
  // 1 switch could not be read".
  std::string text() const;
  // The direction `key` names (NamedLink::key), when its counts were read.
  const CountedDirection* direction(const std::string& key) const;
};

// Frames a direction must count lost before it is evidence, in number and as a share of what it
// carried: a port's background (a control frame a second it discards, a few at link-up) stays
// below both over a test of any length at any rate; a lossy cable passes both.
inline constexpr std::uint64_t kMinCountedLoss = 5;
inline constexpr double kMinCountedShare = 1e-3;

// What the switches counted over one interval of a long test (--snmp-interval): only its
// directions whose receiving port counted errors or discards (frames that vanish between two
// switches are the whole test's evidence: mid-traffic the two ends are not read at one instant),
// so a night of intervals stays small and says when loss began.
struct SwitchInterval {
  std::int64_t from_ns = 0, to_ns = 0;  // when the two readings were taken (realtime)
  std::vector<CountedDirection> lossy;  // at most kMaxLossyPerInterval, the most lost first
  std::size_t lossy_dropped = 0;        // past that bound
  std::size_t unreadable = 0;           // switches one of the two readings could not read
};

inline constexpr std::size_t kMaxLossyPerInterval = 32;

// `before` and `after` are readings of the same switches (matched by device).
SwitchCounterEvidence count_switch_links(const FabricTopology& topology, const std::vector<SwitchReading>& before,
                                         const std::vector<SwitchReading>& after);

SwitchInterval count_switch_interval(const FabricTopology& topology, const std::vector<SwitchReading>& before,
                                     std::int64_t from_ns, const std::vector<SwitchReading>& after, std::int64_t to_ns);

// "switch counters per interval: 144 intervals, loss counted in 12, first in the one ending
// 2026-12-01T10:04:05.000Z on l1:s2 -> s2:l1"; "" for none.
std::string switch_intervals_text(const std::vector<SwitchInterval>& intervals);

}  // namespace tusk
