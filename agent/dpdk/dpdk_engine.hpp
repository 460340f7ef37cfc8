// The DPDK engine: sends Tusk frames with PRBS payloads to each peer at the planned rate (one
// frame size, or a mix such as IMIX cycled frame by frame; optionally 802.1Q-tagged) and checks
// every frame and bit that arrives, per stream (a sender and its stream id), with sequence
// accounting, one-way latency, the VLAN tag seen, traffic-gap detection and the port's host-side
// drops.
//
// Ownership: a DpdkContext (EAL plus the agent's ports) lives as long as the agent; each test's
// DpdkEngine borrows it and owns only its threads, which it joins in stop(): a TX and an RX thread
// per queue the test uses (queue_plan.hpp), and a link watcher.
// Hot loops hold no locks and make no virtual calls; sample() reads what they publish in atomics.
// Set-up is dpdk_engine.cpp, the threads' loops dpdk_datapath.cpp, sample() dpdk_sampling.cpp.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/dpdk/dpdk_plan.hpp"
#include "agent/dpdk/eal.hpp"
#include "agent/dpdk/flow_targets.hpp"
#include "agent/dpdk/frame_format.hpp"
#include "agent/dpdk/frame_size_cycle.hpp"
#include "agent/dpdk/idle_port_listener.hpp"
#include "agent/dpdk/mbuf_ring.hpp"
#include "agent/dpdk/neighbour.hpp"
#include "agent/dpdk/port.hpp"
#include "agent/dpdk/queue_plan.hpp"
#include "agent/engine.hpp"
#include "agent/link_watch.hpp"
#include "agent/path/path_tracer.hpp"
#include "common/latency_histogram.hpp"

namespace tusk::dpdk {

struct DpdkAgentOptions {
  EalOptions eal;
  std::vector<std::string> ports;              // DPDK device names, e.g. "net_af_packet0"
  std::vector<std::string> kernel_interfaces;  // per port: af_packet's iface=, else ""
  std::vector<Ipv4Interface> addresses;        // per port, in order: its IPv4 address (MAC filled in later)
  // Sleep this long when a poll finds nothing. 0 busy-polls (real hosts); labs on few cores need
  // a pause so agents and the kernel path between them do not starve each other.
  unsigned idle_sleep_us = 0;
  // The largest frame the ports carry (frame_room.hpp); 0: DPDK's default 2 KiB mbufs.
  std::uint32_t max_frame = 0;
  // Queues per port (--dpdk-queues; 0: net_af_packet's qpairs=, else 1): queue_plan.hpp.
  std::uint16_t queues = 0;
};

class DpdkContext {
 public:
  explicit DpdkContext(const DpdkAgentOptions& options);
  Port& port(const std::string& name);  // "" = the first port; throws EngineError
  const std::vector<std::unique_ptr<Port>>& ports() const { return ports_; }
  // The port's own IPv4 address (address 0 when it was given none), with its MAC.
  const Ipv4Interface& address(const Port& port) const;
  unsigned idle_sleep_us() const { return idle_sleep_us_; }
  // The EAL lcore list. With two or more CPUs the datapath threads are pinned as testpmd pins its
  // forwarding cores (queue_plan.hpp): measured, a floating TX thread ran at 0.67 or 1.1 Mpps from
  // run to run, depending on where the kernel put it. With one (labs, where agents share few
  // cores) the threads float.
  const std::vector<int>& cpus() const { return cpus_; }
  // Reads the ports between tests (their LLDP neighbours, ARP and ping); a test pauses it.
  IdlePortListener& listener() { return *listener_; }

 private:
  Eal eal_;  // first: ports are destroyed before the EAL
  std::vector<std::unique_ptr<Port>> ports_;
  std::vector<Ipv4Interface> addresses_;  // in ports_ order
  unsigned idle_sleep_us_;
  std::vector<int> cpus_;
  std::unique_ptr<IdlePortListener> listener_;  // last: it stops before the ports close
};

// Counters one RX stream publishes for sample(); written only by one RX thread.
struct RxStreamCounters {
  MacAddress source{};
  std::uint16_t stream_id = 0;
  Ipv4UdpSpec flow;                       // ipv4_udp: the addresses and ports of its first frame (the sender's flow)
  std::optional<std::uint8_t> sent_dscp;  // ipv4_udp: the class the sender gave the flow (flow_dscp)
  std::atomic<std::uint64_t> frames{0}, bytes{0}, bits_compared{0}, bit_errors{0}, errored_frames{0}, lost{0},
      gap_lost{0}, duplicates{0}, reordered{0}, error_bursts{0}, traffic_gaps{0}, negative_latencies{0}, vlan_tagged{0},
      vlan_mismatches{0}, pcp_changes{0}, ce_marked{0}, dscp_rewrites{0}, bad_headers{0};
  // Set once the test is over when nothing arrived in its last gap_threshold: a gap that never
  // closed, so no flap (down then up) but a link that stayed down or a sender that stopped.
  std::atomic<std::uint64_t> open_gap{0};
  std::atomic<std::uint64_t> longest_gap_ms{0};  // of the gaps that closed
  PublishedLatency latency;                      // the RX thread's histogram, summarised every kLatencyPublishNs
};

// The RX thread of one worker (dpdk_datapath.cpp).
class RxThread;

class DpdkEngine final : public Engine {
 public:
  explicit DpdkEngine(DpdkContext& context) : context_(context) {}
  ~DpdkEngine() override { stop(); }

  void prepare(const proto::Plan& plan, EngineEventSink events) override;
  void start(std::int64_t start_ns) override;
  std::vector<proto::StreamCounters> sample() override;
  void stop() noexcept override;

  // How stale the latency gauges of a running test may be; the final sample is exact.
  static constexpr std::int64_t kLatencyPublishNs = 50'000'000;
  // How often the port's link state is read: a link event's time is this close to the change.
  static constexpr std::int64_t kLinkPollNs = 10'000'000;

 private:
  struct TxTarget {
    FlowTarget flow;
    std::atomic<std::uint64_t> frames{0}, bytes{0};
    std::atomic<std::uint64_t> skipped{0};  // frame slots let pass after the sender fell behind
  };
  // One queue's threads: the RX thread owns its streams, the TX thread its targets (flows).
  struct Worker {
    QueueWorker queues;
    std::vector<std::size_t> targets;  // indexes into targets_
    std::array<RxStreamCounters, kMaxRxStreams> rx_streams;
    std::atomic<std::size_t> rx_stream_count{0};
    std::atomic<std::int64_t> tx_began_ns{0};  // when its TX thread sent its first frame slot; 0: not yet
    std::thread tx_thread, rx_thread;
  };

  // The datapath (dpdk_datapath.cpp): a worker's TX and RX threads; RxThread is the RX thread's
  // state and the steps of each frame.
  friend class RxThread;
  void tx_loop(Worker& worker);
  // Adds `skipped` slots to the targets `mine` whose turns they were, from `next_target` on; the
  // next target's turn after them.
  std::size_t owe_skipped(const std::vector<std::size_t>& mine, std::size_t next_target, std::uint64_t skipped);
  void rx_loop(Worker& worker);
  // Polls the port's link state every kLinkPollNs and reports each change as an event.
  void watch_link();
  // sample()'s parts (dpdk_sampling.cpp): each flow as sent, each stream as received (a stream
  // split over RX queues added up, once noticed), and the port's own statistics over the test.
  void add_tx_streams(std::vector<proto::StreamCounters>& out) const;
  void add_rx_streams(std::vector<proto::StreamCounters>& out);
  proto::StreamCounters port_stream() const;
  // Sends the ARP and ping answers the RX thread queued; the TX thread's, between bursts.
  void send_answers();
  // Sends the path-trace probes due now; the TX thread's, between bursts.
  void send_probes(FrameSpec& spec);
  // The agent a stream comes from (a peer or a sender of the plan), else its source address as text.
  std::string peer_name(const RxStreamCounters& stream) const;
  std::string rx_stream_id(const RxStreamCounters& stream) const;
  bool ipv4() const { return frame_spec_.encapsulation == Encapsulation::Ipv4Udp; }

  DpdkContext& context_;
  Port* port_ = nullptr;
  proto::Plan plan_;
  EngineEventSink events_;
  FrameSpec frame_spec_;     // this port's frames: source MAC, VLAN tag, EtherType or IPv4/UDP fields
  Ipv4Interface interface_;  // this port's IPv4 address (0: none), for ipv4_udp and ARP
  std::vector<std::unique_ptr<TxTarget>> targets_;
  std::vector<FrameSizeCycle> tx_sizes_;  // one per target, in targets_ order; the TX thread's once started
  PeerNames peers_;
  std::unique_ptr<MbufRing> answers_;             // RX thread to TX thread; only when the port has an address
  std::unique_ptr<path::PathTracer> tracer_;      // ipv4_udp with a trace rate: one entry per target
  std::vector<std::unique_ptr<Worker>> workers_;  // one per queue the test uses
  std::set<std::size_t> split_reported_;          // sample()'s: streams already reported split over queues
  std::atomic<std::uint64_t> bad_headers_{0};
  std::atomic<std::uint64_t> misaddressed_frames_{0};  // test frames for another host's address
  std::uint64_t start_host_drops_ = 0;
  std::map<std::string, std::uint64_t> start_xstats_;
  std::atomic<std::uint64_t> host_drops_{0};
  std::int64_t start_ns_ = 0;
  // No frame from a stream for this long is a gap: 50 ms, or 20 of its frame intervals at low rates.
  std::int64_t gap_threshold_ns_ = 0;
  double port_pps_ = 0;                             // frames per second for the whole port (send_rate); 0: line rate
  std::atomic<std::int64_t> stop_requested_ns_{0};  // a test stopped early ends there, not at its duration
  std::atomic<bool> running_{false};
  std::atomic<bool> rx_done_{false};
  std::thread link_thread_;
  LinkWatch link_watch_;
  // From prepare to stop the port's queues are this engine's, not the idle listener's.
  std::optional<IdlePortListener::Pause> listener_pause_;
};

// Registers the "dpdk" engine when the agent was given DPDK ports; otherwise notes why not.
void add_dpdk_engine(EngineCatalog& catalog, const DpdkAgentOptions& options);

}  // namespace tusk::dpdk
