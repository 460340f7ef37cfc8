// Traces the path of every flow of a test while it runs, as mtr does for one: paced probes
// (agent/dpdk/path_probe.hpp builds them as frames, agent/rdma/socket_path_tracer sends them from a socket) cycle over
// the flows and, per flow, over the TTLs from 1 to the one that reached the destination, so each hop of each flow is
// asked again and again. What comes back is counted per flow and TTL: who answered (the hop; a second address when the
// path changed), how many probes went unanswered (lost on the way out or back, or a hop that does not answer) and how
// many arrived damaged. A TTL nobody answered is an unknown hop, never a guess.
//
// Threads: next_probe() is one TX thread's, on_reply() any RX thread's (one per queue), hops()
// anyone's; counters are atomics, so no hot loop takes a lock.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "agent/path/probe.hpp"
#include "tusk.pb.h"

namespace tusk::path {

// One flow's destination and UDP source port: what a quoted probe names.
struct TracedFlow {
  std::uint32_t dst_address = 0;
  std::uint16_t src_port = 0;
};

struct TracedHop {
  std::uint8_t ttl = 0;
  std::uint32_t address = 0;  // who answered most; 0: nobody (an unknown hop)
  std::uint64_t probes = 0;
  std::uint64_t answers = 0;        // from address
  std::uint64_t damaged = 0;        // of those, quoting a damaged probe
  std::uint64_t unreachable = 0;    // of those, "no route" rather than time-exceeded
  std::uint32_t other_address = 0;  // a second responder: the path changed during the test
  std::uint64_t other_answers = 0;  // from any other address
  bool destination = false;         // address is the flow's destination: the path ends here
};

class PathTracer {
 public:
  // probes_per_second: all flows together (0: no tracing). max_ttl: the last TTL tried until the
  // destination answers (1..kMaxProbeTtl); a destination that never answers (an RDMA NIC drops
  // what it cannot parse) makes every TTL up to it a probe each round.
  PathTracer(std::vector<TracedFlow> flows, double probes_per_second, std::uint8_t max_ttl = kMaxProbeTtl);

  bool enabled() const { return ns_per_probe_ > 0 && !flows_.empty(); }

  struct Probe {
    std::size_t flow = 0;
    std::uint8_t ttl = 0;
    std::uint16_t sequence = 0;
  };
  // TX thread: the next probe when one is due at now_ns (paced; a late caller gets up to kCatchUp
  // at once, and probes missed beyond that are skipped), else nullopt. Counts it as sent.
  std::optional<Probe> next_probe(std::int64_t now_ns);

  // RX threads: books a reply to one of our probes; replies naming no flow of ours are ignored.
  void on_reply(const ProbeReply& reply);

  // Any thread: one flow's hops, TTL 1 up to the destination (or the last TTL tried).
  std::vector<TracedHop> hops(std::size_t flow) const;

  std::size_t flows() const { return flows_.size(); }

 private:
  static constexpr std::size_t kResponders = 2;
  static constexpr std::uint64_t kCatchUp = 16;  // probes sent at once when behind
  struct HopState {
    std::atomic<std::uint64_t> probes{0};
    std::array<std::atomic<std::uint32_t>, kResponders> address{};
    std::array<std::atomic<std::uint64_t>, kResponders> answers{};
    std::array<std::atomic<std::uint64_t>, kResponders> damaged{};
    std::array<std::atomic<std::uint64_t>, kResponders> unreachable{};
    std::array<std::atomic<bool>, kResponders> destination{};
    std::atomic<std::uint64_t> beyond{0};  // answers from a third address or more
  };
  struct FlowState {
    std::array<HopState, kMaxProbeTtl> hops;
    // The smallest TTL the destination answered (0: none yet): TTLs past it are not probed.
    std::atomic<std::uint8_t> destination_ttl{0};
    std::uint8_t next_ttl = 1;  // the TX thread's
  };
  static std::uint64_t key(std::uint32_t dst_address, std::uint16_t src_port) {
    return (std::uint64_t{dst_address} << 16) | src_port;
  }

  std::vector<TracedFlow> flows_;
  std::unique_ptr<FlowState[]> state_;
  std::unordered_map<std::uint64_t, std::size_t> index_;  // read-only once constructed
  double ns_per_probe_ = 0;
  std::uint8_t max_ttl_ = kMaxProbeTtl;
  // TX thread's pacing
  std::int64_t begin_ns_ = 0;
  std::uint64_t sent_ = 0;
  std::uint64_t skipped_ = 0;
  std::size_t next_flow_ = 0;
  std::uint16_t sequence_ = 0;
};

// A flow's hops as its stream reports them (StreamCounters.path).
void put_path(const std::vector<TracedHop>& hops, proto::StreamCounters& stream);

}  // namespace tusk::path
