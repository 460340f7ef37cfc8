#include "agent/dpdk/dpdk_engine.hpp"

#include <rte_ethdev.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <stdexcept>
#include <unordered_map>

#include "agent/dpdk/cpu_list.hpp"
#include "agent/dpdk/frame_room.hpp"
#include "agent/dpdk/neighbour_resolver.hpp"
#include "agent/dpdk/queue_plan.hpp"
#include "agent/dpdk/send_rate.hpp"
#include "agent/payload/prbs.hpp"
#include "agent/latency_gauges.hpp"
#include "agent/dpdk/stream_tracker.hpp"
#include "common/clock.hpp"
#include "common/counter_names.hpp"

namespace tusk::dpdk {

namespace {

constexpr std::uint16_t kBurst = 32;
// No frame from a stream for this long while the test runs is a traffic gap (a flap on ports
// whose driver cannot report link state, such as af_packet), unless its frames come further apart.
constexpr std::int64_t kGapThresholdNs = 50'000'000;
constexpr double kGapFrameIntervals = 20;
// A poll that comes later than this after the one before means the RX thread was not running (a
// busy host descheduled it): frames waited in the ring meanwhile, so that time is no link's gap.
constexpr std::int64_t kPollSlackNs = 1'000'000;
constexpr unsigned kAnswerRingSize = 256;

// An RX stream's key: its sender (the source MAC of ethernet frames; the source IPv4 address of
// ipv4_udp ones, whose source MAC is the last router's) and the sender's stream id.
std::uint64_t stream_key(const MacAddress& mac, std::uint32_t address, std::uint16_t stream_id) {
  std::uint64_t sender = address;
  if (address == 0) {
    for (const std::uint8_t byte : mac) sender = (sender << 8) | byte;
  }
  return (sender << 16) | stream_id;
}

// The plan's IPv4/UDP fields, bounded by check_dpdk_plan.
Ipv4UdpSpec ipv4_fields(const proto::DpdkTest& test, std::uint32_t source) {
  Ipv4UdpSpec ip;
  ip.src_address = source;
  ip.dscp = static_cast<std::uint8_t>(test.dscp());
  ip.ecn = static_cast<std::uint8_t>(test.ecn());
  if (test.ttl() > 0) ip.ttl = static_cast<std::uint8_t>(test.ttl());
  if (test.udp_port() > 0) ip.dst_port = static_cast<std::uint16_t>(test.udp_port());
  return ip;
}

void set_flow(proto::StreamCounters& stream, std::uint32_t src, std::uint16_t src_port, std::uint32_t dst,
              std::uint16_t dst_port, std::uint8_t dscp) {
  proto::Flow& flow = *stream.mutable_flow();
  flow.set_dscp(dscp);
  flow.set_src_address(ipv4_to_string(src));
  flow.set_dst_address(ipv4_to_string(dst));
  flow.set_src_port(src_port);
  flow.set_dst_port(dst_port);
  flow.set_protocol("udp");
}

void sleep_us(unsigned us) {
  if (us > 0) std::this_thread::sleep_for(std::chrono::microseconds(us));
}

void pin_to(std::optional<int> cpu, const char* thread) {
  if (cpu && !pin_current_thread(*cpu)) {
    spdlog::warn("DPDK {} thread: cannot pin to CPU {}: {}; it runs unpinned", thread, *cpu, std::strerror(errno));
  }
}

}  // namespace

DpdkContext::DpdkContext(const DpdkAgentOptions& options)
    : eal_(options.eal), idle_sleep_us_(options.idle_sleep_us), cpus_(parse_cpu_list(options.eal.lcores)) {
  if (options.addresses.size() > options.ports.size()) {
    throw EngineError(fmt::format("{} IPv4 addresses (--dpdk-address) for {} DPDK ports: one per port, in order",
                                  options.addresses.size(), options.ports.size()));
  }
  for (std::size_t i = 0; i < options.ports.size(); ++i) {
    const std::string interface = i < options.kernel_interfaces.size() ? options.kernel_interfaces[i] : "";
    // Ports are the vdevs first, then the PCI devices (main.cpp); a PCI port has no vdev text.
    const std::string vdev = i < options.eal.vdevs.size() ? options.eal.vdevs[i] : "";
    PortOptions port_options;
    port_options.mbuf_data_room = mbuf_data_room(vdev, options.max_frame);
    port_options.queues = port_queues(vdev, options.queues);
    // A NIC takes jumbo frames once its MTU allows them; net_af_packet follows its kernel interface.
    if (options.max_frame > 1514 && interface.empty()) {
      port_options.mtu = options.max_frame - static_cast<std::uint32_t>(kEthernetHeaderLength);
    }
    ports_.push_back(std::make_unique<Port>(options.ports[i], port_options, interface));
    Ipv4Interface address = i < options.addresses.size() ? options.addresses[i] : Ipv4Interface{};
    address.mac = ports_.back()->mac();
    addresses_.push_back(address);
  }
}

const Ipv4Interface& DpdkContext::address(const Port& port) const {
  for (std::size_t i = 0; i < ports_.size(); ++i) {
    if (ports_[i].get() == &port) return addresses_[i];
  }
  throw EngineError(fmt::format("DPDK port '{}' is not one of this agent's ports", port.name()));
}

Port& DpdkContext::port(const std::string& name) {
  if (ports_.empty()) throw EngineError("this agent has no DPDK port");
  if (name.empty()) return *ports_.front();
  for (auto& port : ports_) {
    if (port->name() == name) return *port;
  }
  throw EngineError(fmt::format("DPDK port '{}' is not one of this agent's ports", name));
}

void DpdkEngine::prepare(const proto::Plan& plan, EngineEventSink events) {
  check_dpdk_plan(plan);  // every bound that needs no port, before the port is touched
  const auto& test = plan.dpdk();
  port_ = &context_.port(test.port());
  FrameSpec spec;
  spec.src = port_->mac();
  // A PCP without a VLAN id is an 802.1p priority-tagged frame: VLAN 0 carrying the priority.
  spec.tagged = test.vlan() != 0 || test.pcp() != 0;
  spec.vlan = static_cast<std::uint16_t>(test.vlan());
  spec.pcp = static_cast<std::uint8_t>(test.pcp());
  spec.ethertype = test.ethertype() > 0 ? static_cast<std::uint16_t>(test.ethertype()) : kDefaultEtherType;
  interface_ = context_.address(*port_);
  if (test.encapsulation() == "ipv4_udp") {
    if (interface_.address == 0) {
      throw EngineError(fmt::format("DPDK port {}: ipv4_udp frames need its IPv4 address: start the agent with "
                                    "--dpdk-address ADDRESS/PREFIX[,gw=GATEWAY]",
                                    port_->name()));
    }
    spec.encapsulation = Encapsulation::Ipv4Udp;
    spec.ip = ipv4_fields(test, interface_.address);
    // Each flow writes its own destination; until the flows are known the spec is checked with ours.
    spec.ip.dst_address = interface_.address;
  }
  // A size there is (check_dpdk_plan): a default here would send frames the safety check never saw.
  const std::vector<std::uint32_t> sizes(test.frame_sizes().begin(), test.frame_sizes().end());
  std::optional<FrameSizeCycle> cycle;
  try {
    cycle.emplace(spec, test.frame_size(), sizes);  // validates spec too
  } catch (const std::invalid_argument& e) {
    throw EngineError(fmt::format("DPDK port {}: {}", port_->name(), e.what()));
  }
  const std::uint64_t largest = cycle->largest_frame_bytes();
  if (largest > port_->mbuf_room()) {
    throw EngineError(fmt::format("DPDK port {}: {} B frames do not fit its {} B mbufs: start the agent with "
                                  "--dpdk-max-frame {} or more",
                                  port_->name(), largest, port_->mbuf_room(), largest));
  }
  // The kernel under net_af_packet drops, without a word, every frame longer than its interface's
  // MTU allows (an 802.1Q tag is allowed on top): the test would read as 100 % loss.
  const std::uint64_t needed_mtu = largest - kEthernetHeaderLength - (spec.tagged ? kVlanTagLength : 0);
  if (const auto mtu = port_->kernel_mtu(); mtu && needed_mtu > *mtu) {
    throw EngineError(fmt::format("DPDK port {}: {} B frames need an MTU of {} on interface {}, which has {} "
                                  "(ip link set {} mtu {})",
                                  port_->name(), largest, needed_mtu, port_->kernel_interface(), *mtu,
                                  port_->kernel_interface(), needed_mtu));
  }
  frame_spec_ = spec;
  plan_ = plan;
  events_ = std::move(events);
  targets_.clear();
  std::vector<FlowTarget> flows;
  try {
    flows = flow_targets(plan, interface_, [&](std::uint32_t hop) { return resolve_mac(*port_, interface_, hop); });
  } catch (const EngineError& e) {
    throw EngineError(fmt::format("DPDK port {}: {}", port_->name(), e.what()));
  }
  for (const FlowTarget& flow : flows) {
    auto target = std::make_unique<TxTarget>();
    target->flow = flow;
    targets_.push_back(std::move(target));
  }
  tracer_.reset();
  if (ipv4() && test.trace_rate() > 0) {
    std::vector<TracedFlow> traced;
    for (const FlowTarget& flow : flows) traced.push_back({flow.address, flow.src_port});
    tracer_ = std::make_unique<PathTracer>(std::move(traced), test.trace_rate());
  }
  peers_ = peer_names(plan);
  answers_.reset();
  if (interface_.address != 0) answers_ = std::make_unique<MbufRing>(kAnswerRingSize);
  tx_sizes_.assign(targets_.size(), *cycle);
  std::vector<QueueWorker> queue_plan;
  try {
    queue_plan = plan_queues({test.queues(), port_->queues(), context_.cpus(), context_.idle_sleep_us() == 0,
                              port_->name()});
  } catch (const std::invalid_argument& e) {
    throw EngineError(e.what());
  }
  workers_.clear();
  for (std::size_t w = 0; w < queue_plan.size(); ++w) {
    auto worker = std::make_unique<Worker>();
    worker->queues = queue_plan[w];
    worker->targets = targets_of_worker(targets_.size(), queue_plan.size(), w);
    workers_.push_back(std::move(worker));
  }
  // Each stream's frames come every (sender's targets / port rate); a sender has as many targets
  // (peers times flows) as this agent in every topology but incast and a pipeline's end, where it
  // has fewer.
  port_pps_ = send_rate(test).pps;
  const double stream_interval_ns = port_pps_ > 0 ? 1e9 * static_cast<double>(targets_.size()) / port_pps_ : 0;
  gap_threshold_ns_ = std::max(kGapThresholdNs, static_cast<std::int64_t>(kGapFrameIntervals * stream_interval_ns));
}

std::string DpdkEngine::peer_name(const RxStreamCounters& stream) const {
  if (ipv4()) {
    const auto peer = peers_.by_address.find(stream.flow.src_address);
    return peer != peers_.by_address.end() ? peer->second : ipv4_to_string(stream.flow.src_address);
  }
  const auto peer = peers_.by_mac.find(stream.source);
  return peer != peers_.by_mac.end() ? peer->second : mac_text(stream.source);
}

std::string DpdkEngine::rx_stream_id(const RxStreamCounters& stream) const {
  return fmt::format("rx:{}/{}", peer_name(stream), stream.stream_id);
}

void DpdkEngine::send_answers() {
  rte_mbuf* answers[kBurst];
  const unsigned got = answers_->pop(answers, kBurst);
  if (got == 0) return;
  const std::uint16_t sent = rte_eth_tx_burst(port_->id(), 0, answers, static_cast<std::uint16_t>(got));
  if (sent < got) rte_pktmbuf_free_bulk(answers + sent, got - sent);  // the next request gets the next answer
}

void DpdkEngine::send_probes(FrameSpec& spec) {
  // A few per call at most: the test's frames come first.
  for (int i = 0; i < 4; ++i) {
    const auto probe = tracer_->next_probe(realtime_ns());
    if (!probe) return;
    rte_mbuf* mbuf = rte_pktmbuf_alloc(port_->mempool());
    if (mbuf == nullptr) return;
    auto* frame = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(mbuf, kMaxProbeFrameLength));
    const FlowTarget& flow = targets_[probe->flow]->flow;
    spec.dst = flow.mac;
    spec.ip.dst_address = flow.address;
    spec.ip.src_port = flow.src_port;
    const std::size_t length = write_probe(spec, probe->ttl, probe->sequence, frame);
    rte_pktmbuf_trim(mbuf, static_cast<std::uint16_t>(kMaxProbeFrameLength - length));
    // A probe the port refuses is lost like one dropped on the way: the tracer counts it unanswered.
    if (rte_eth_tx_burst(port_->id(), 0, &mbuf, 1) == 0) rte_pktmbuf_free(mbuf);
  }
}

void DpdkEngine::start(std::int64_t start_ns) {
  start_ns_ = start_ns;
  stop_requested_ns_ = std::numeric_limits<std::int64_t>::max();
  start_host_drops_ = port_->host_drops();
  start_xstats_ = port_->xstats();
  running_ = true;
  rx_done_ = false;
  for (auto& worker : workers_) {
    Worker& w = *worker;
    w.rx_thread = std::thread([this, &w] { rx_loop(w); });
    w.tx_thread = std::thread([this, &w] { tx_loop(w); });
  }
  link_thread_ = std::thread([this] { watch_link(); });
}

void DpdkEngine::watch_link() {
  const std::string stream_id = "port:" + port_->name();
  while (running_) {
    const std::int64_t now = realtime_ns();
    if (const auto change = link_watch_.on_poll(port_->link().up, now); change && events_) {
      if (change->up) {
        events_(proto::AgentEvent::LINK_UP,
                fmt::format("port {}: link up after {} ms down", port_->name(), change->down_for_ns / 1'000'000),
                stream_id);
      } else {
        events_(proto::AgentEvent::LINK_DOWN, fmt::format("port {}: link down (the driver reports it)", port_->name()),
                stream_id);
      }
    }
    std::this_thread::sleep_for(std::chrono::nanoseconds(kLinkPollNs));
  }
}

void DpdkEngine::stop() noexcept {
  if (!running_.exchange(false)) return;
  stop_requested_ns_ = realtime_ns();
  for (auto& worker : workers_) {
    if (worker->tx_thread.joinable()) worker->tx_thread.join();
  }
  if (link_thread_.joinable()) link_thread_.join();
  // Let frames still in flight arrive before the receivers stop counting.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  rx_done_ = true;
  for (auto& worker : workers_) {
    if (worker->rx_thread.joinable()) worker->rx_thread.join();
  }
  if (port_) host_drops_ = port_->host_drops() - start_host_drops_;
}

void DpdkEngine::tx_loop(Worker& worker) {
  // The first worker's TX queue also carries the ARP and ping answers and the path-trace probes.
  const bool first = &worker == workers_.front().get();
  if (!first && worker.targets.empty()) return;
  pin_to(worker.queues.tx_cpu, "TX");
  if (rte_thread_register() != 0) spdlog::warn("DPDK TX thread not registered with EAL: mempool caches unused");
  const auto& test = plan_.dpdk();
  FrameSpec spec = frame_spec_;
  const std::size_t header = header_length(spec);
  const payload::Pattern pattern = *payload::pattern_from_name(test.pattern().empty() ? "prbs31" : test.pattern());
  // Frames per second for the whole port (port_pps_), shared out over the targets in turn; each
  // worker sends its targets' share.
  const std::vector<std::size_t>& mine = worker.targets;
  const double worker_pps =
      targets_.empty() ? 0 : port_pps_ * static_cast<double>(mine.size()) / static_cast<double>(targets_.size());
  const double ns_per_frame = worker_pps > 0 ? 1e9 / worker_pps : 0;
  const std::uint16_t queue = worker.queues.tx_queue;

  // One sequence for the port, not one per flow: every frame's header says where its payload
  // starts, so a receiver needs no continuity, and one 16 KiB generator buffer stays in L1 where
  // one per flow did not (8 flows sent 20 % fewer 1500 B frames than 1).
  payload::PrbsGenerator generator(pattern, test.invert(), payload::default_state(pattern));
  // Arrays, not vectors: GCC 12 at -O3 warned (free-nonheap-object, falsely) on three vectors here.
  // Indexed by position in `mine`.
  const auto sequence = std::make_unique<std::uint64_t[]>(mine.size());
  const auto sent_by_target = std::make_unique<std::uint64_t[]>(mine.size());
  const auto bytes_by_target = std::make_unique<std::uint64_t[]>(mine.size());

  while (running_ && realtime_ns() < start_ns_) sleep_us(100);
  if (mine.empty()) {
    // A receiver only (an incast's sink, or idle in a re-test): it still answers ARP and ping.
    while (running_) {
      if (answers_) send_answers();
      sleep_us(std::max(context_.idle_sleep_us(), 100u));
    }
    return;
  }
  const std::int64_t begin = realtime_ns();
  std::uint64_t sent_total = 0;
  std::uint64_t slots_skipped = 0;  // frame slots that passed while the port took nothing
  // Behind by more than a millisecond of frames (two bursts at least) is a stall, not jitter.
  const auto max_lag = std::max<std::uint64_t>(2 * kBurst, ns_per_frame > 0 ? static_cast<std::uint64_t>(1e6 / ns_per_frame) : 0);
  std::size_t next_target = 0;
  rte_mbuf* burst[kBurst];
  std::uint16_t burst_frame_bytes[kBurst];
  while (running_) {
    if (first && answers_) send_answers();
    if (first && tracer_) send_probes(spec);
    std::uint16_t count = kBurst;
    if (ns_per_frame > 0) {
      // Paced: send what the clock allows, in bursts of at most kBurst. After a stall (the port
      // refused frames while its link was down, or this thread was descheduled) the missed slots
      // are skipped, not sent at once: a burst at line rate would overrun the receiver.
      const auto due = static_cast<std::uint64_t>((realtime_ns() - begin) / ns_per_frame) + 1 - slots_skipped;
      if (due <= sent_total) {
        sleep_us(std::max(context_.idle_sleep_us(), 10u));
        continue;
      }
      if (due - sent_total > max_lag) slots_skipped += due - sent_total - kBurst;
      count = static_cast<std::uint16_t>(std::min<std::uint64_t>(kBurst, due - sent_total));
    }
    if (rte_pktmbuf_alloc_bulk(port_->mempool(), burst, count) != 0) {
      sleep_us(10);  // the driver has not returned sent mbufs yet
      continue;
    }
    // One timestamp per burst: the frames of a burst leave together.
    const std::int64_t now = realtime_ns();
    const std::size_t first_target = next_target;
    for (std::uint16_t i = 0; i < count; ++i) {
      const std::size_t m = next_target;
      next_target = (next_target + 1) % mine.size();
      const std::size_t t = mine[m];
      const FrameSize& size = tx_sizes_[t].next();
      // prepare() checked that the largest size fits an mbuf, so the append cannot fail.
      auto* frame = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(burst[i], size.frame));
      const FlowTarget& flow = targets_[t]->flow;
      spec.dst = flow.mac;
      spec.ip.dst_address = flow.address;
      spec.ip.src_port = flow.src_port;
      spec.ip.dscp = flow.dscp;
      TuskHeader tusk;
      tusk.flags = test.invert() ? kFlagPayloadInverted : 0;
      tusk.stream_id = flow.stream_id;
      tusk.seq = sequence[m]++;
      tusk.tx_timestamp_ns = static_cast<std::uint64_t>(now);
      tusk.prbs_state = generator.state();
      tusk.payload_length = size.payload;
      write_headers(spec, tusk, frame);
      generator.fill(frame + header, size.payload);
      burst_frame_bytes[i] = size.frame;
    }
    std::uint16_t done = 0;
    while (done < count && running_) {
      done += rte_eth_tx_burst(port_->id(), queue, burst + done, static_cast<std::uint16_t>(count - done));
      if (done < count) sleep_us(context_.idle_sleep_us());
    }
    if (done < count) rte_pktmbuf_free_bulk(burst + done, count - done);
    // Count what the driver took, per target, and publish once per burst, not once per frame.
    for (std::uint16_t i = 0; i < done; ++i) {
      const std::size_t m = (first_target + i) % mine.size();
      ++sent_by_target[m];
      bytes_by_target[m] += burst_frame_bytes[i];
    }
    for (std::size_t m = 0; m < mine.size(); ++m) {
      targets_[mine[m]]->frames.store(sent_by_target[m], std::memory_order_relaxed);
      targets_[mine[m]]->bytes.store(bytes_by_target[m], std::memory_order_relaxed);
    }
    sent_total += done;
  }
}

void DpdkEngine::rx_loop(Worker& worker) {
  pin_to(worker.queues.rx_cpu, "RX");
  auto& rx_streams = worker.rx_streams;
  const std::vector<std::uint16_t>& queues = worker.queues.rx_queues;
  std::size_t next_queue = 0, empty_polls = 0;
  if (rte_thread_register() != 0) spdlog::warn("DPDK RX thread not registered with EAL: mempool caches unused");
  const auto& test = plan_.dpdk();
  const payload::Pattern pattern = *payload::pattern_from_name(test.pattern().empty() ? "prbs31" : test.pattern());
  const FrameMatch match = match_for(frame_spec_);
  const bool by_address = ipv4();
  // Trackers, histograms and per-stream receive state belong to this thread alone; counts that
  // sample() reads are kept here and stored (not read-modify-written) into the atomics.
  struct RxState {
    StreamTracker tracker;
    LatencyHistogram latency;
    std::int64_t last_arrival_ns = 0;
    std::int64_t unpolled_at_last_arrival_ns = 0;
    std::uint64_t last_tx_ns = 0, gap_lost = 0;
    std::int64_t clock_correction_ns = 0;  // the sender's clock minus ours (peer_names)
    std::uint64_t bytes = 0, bits_compared = 0, negative_latencies = 0, vlan_tagged = 0, vlan_mismatches = 0,
                  pcp_changes = 0, ce_marked = 0, dscp_rewrites = 0;
    bool latency_changed = false;
    bool vlan_reported = false;
    bool rewrite_reported = false;
  };
  std::vector<std::unique_ptr<RxState>> state;
  std::unordered_map<std::uint64_t, std::size_t> index_of_stream;  // stream_key -> rx_streams_ index
  index_of_stream.reserve(kMaxRxStreams);
  std::int64_t last_publish_ns = realtime_ns();
  const auto publish_latency = [&] {
    for (std::size_t i = 0; i < state.size(); ++i) {
      if (!state[i]->latency_changed) continue;
      rx_streams[i].latency.publish(state[i]->latency.summary());
      state[i]->latency_changed = false;
    }
  };
  rte_mbuf* burst[kBurst];
  std::vector<std::uint8_t> linear(kLargestMaxFrame + kVlanTagLength);  // a chained frame, made contiguous
  std::int64_t last_poll_ns = 0, unpolled_ns = 0;  // time this thread was not polling, summed
  while (!rx_done_) {
    // The worker's queues in turn; it sleeps (labs) only when a whole round found nothing.
    const std::uint16_t queue = queues[next_queue];
    next_queue = next_queue + 1 == queues.size() ? 0 : next_queue + 1;
    const std::uint16_t got = rte_eth_rx_burst(port_->id(), queue, burst, kBurst);
    const std::int64_t now = realtime_ns();
    if (last_poll_ns != 0 && now - last_poll_ns > kPollSlackNs) unpolled_ns += now - last_poll_ns - kPollSlackNs;
    last_poll_ns = now;
    for (std::uint16_t i = 0; i < got; ++i) {
      const rte_mbuf* mbuf = burst[i];
      ParsedFrame parsed;
      // A driver that scatters a long frame over several mbufs hands a chain: it is read as one
      // run of bytes (copied only then), so headers and PRBS are checked across segments.
      const std::uint32_t length = rte_pktmbuf_pkt_len(mbuf);
      if (mbuf->nb_segs > 1 && length > linear.size()) {
        bad_headers_.fetch_add(1, std::memory_order_relaxed);
        rte_pktmbuf_free(burst[i]);
        continue;
      }
      const auto* data = static_cast<const std::uint8_t*>(rte_pktmbuf_read(mbuf, 0, length, linear.data()));
      const auto status = parse_headers(data, length, parsed, match);
      if (status == ParseStatus::NotTusk) {
        // Someone else's frame: not test traffic, not counted; a reply to one of our path-trace
        // probes is booked; ARP, a ping or a probe for our address is answered (the TX thread
        // sends it: it owns the TX queue).
        std::optional<ProbeReply> reply;
        if (tracer_) reply = parse_probe_reply(interface_, data, length);
        if (reply) {
          tracer_->on_reply(*reply);
        } else if (answers_) {
          if (rte_mbuf* answer = answer_for_us(*port_, interface_, mbuf); answer && !answers_->push(answer)) {
            rte_pktmbuf_free(answer);
          }
        }
      } else if (status != ParseStatus::Ok) {
        bad_headers_.fetch_add(1, std::memory_order_relaxed);
      } else if (by_address && parsed.ip.dst_address != interface_.address) {
        // Another host's test frame: a switch flooded it (unknown unicast) or mirrored it here.
        // Counting it would make a stream of a flow this host was never sent.
        misaddressed_frames_.fetch_add(1, std::memory_order_relaxed);
      } else {
        MacAddress source;
        std::copy(data + 6, data + 12, source.begin());
        const std::uint64_t key =
            stream_key(source, by_address ? parsed.ip.src_address : 0, parsed.header.stream_id);
        std::size_t index;
        if (const auto known = index_of_stream.find(key); known != index_of_stream.end()) {
          index = known->second;
        } else {
          index = worker.rx_stream_count.load(std::memory_order_relaxed);
          if (index == kMaxRxStreams) {
            rte_pktmbuf_free(burst[i]);
            continue;
          }
          rx_streams[index].source = source;
          rx_streams[index].stream_id = parsed.header.stream_id;
          rx_streams[index].flow = parsed.ip;
          if (by_address) rx_streams[index].sent_dscp = flow_dscp(test, parsed.ip.src_port);
          index_of_stream.emplace(key, index);
          state.push_back(std::make_unique<RxState>());  // once per new stream, not per frame
          state.back()->clock_correction_ns = peers_.latency_correction_ns(peer_name(rx_streams[index]));
          worker.rx_stream_count.store(index + 1, std::memory_order_release);
        }
        RxState& rx = *state[index];
        RxStreamCounters& counters = rx_streams[index];
        const bool inverted = parsed.header.flags & kFlagPayloadInverted;
        const std::uint64_t errors =
            payload::count_bit_errors(pattern, inverted, parsed.header.prbs_state, parsed.payload, parsed.payload_length);
        // Nothing arrived for a while, and not because this thread was descheduled: a gap, unless
        // the sender paused (the frames on both sides of it are consecutive, sent that far apart).
        const std::int64_t silent_ns = rx.last_arrival_ns == 0
                                           ? 0
                                           : (now - rx.last_arrival_ns) - (unpolled_ns - rx.unpolled_at_last_arrival_ns);
        const auto sent_apart_ns = static_cast<std::int64_t>(parsed.header.tx_timestamp_ns - rx.last_tx_ns);
        rx.last_arrival_ns = now;
        rx.unpolled_at_last_arrival_ns = unpolled_ns;
        rx.last_tx_ns = parsed.header.tx_timestamp_ns;
        bool gap = silent_ns > gap_threshold_ns_;
        const std::uint64_t lost_before = gap ? rx.tracker.counts().lost : 0;  // rare: off the per-frame path

        // One-way latency from the sender's TX stamp to our RX time, less the two clocks' offset as
        // the controller estimated it before the test (its error is within half the round trip of
        // its probes, report.json starts[].clock_rtt_ns). What still comes out negative is that
        // error showing: kept as 0 ns, and counted.
        rx.negative_latencies += rx.latency.record_clamped(
            now - static_cast<std::int64_t>(parsed.header.tx_timestamp_ns) + rx.clock_correction_ns);
        rx.latency_changed = true;

        // The kernel under af_packet always moves a received tag into packet metadata; DPDK's
        // af_packet PMD reads it from the ring and puts it back in the frame (setting
        // RTE_MBUF_F_RX_VLAN) unless VLAN stripping was asked for, which Port does not. Drivers that
        // strip anyway report the tag in the mbuf: either way the tag is seen.
        const bool stripped = mbuf->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED;
        const ArrivedTag tag = arrived_tag(parsed, stripped, mbuf->vlan_tci);
        rx.vlan_tagged += tag.tagged;
        const TagCheck tag_check = check_tag(frame_spec_, tag);
        if (tag_check == TagCheck::VlanMismatch) {
          ++rx.vlan_mismatches;
          if (!rx.vlan_reported && events_) {
            rx.vlan_reported = true;
            events_(proto::AgentEvent::NOTICE,
                    fmt::format("{} stream {} arrives {}, expected {}", peer_name(rx_streams[index]), parsed.header.stream_id,
                                tag.tagged ? fmt::format("on VLAN {}", tag.vlan) : std::string("untagged"),
                                frame_spec_.tagged ? fmt::format("VLAN {}", frame_spec_.vlan) : std::string("untagged")),
                    rx_stream_id(rx_streams[index]));
          }
        } else if (tag_check == TagCheck::PcpChanged) {
          ++rx.pcp_changes;
        }
        // What the switches did to the TOS byte: a congestion mark, or another traffic class.
        if (by_address) {
          rx.ce_marked += parsed.ip.ecn == kEcnCe;
          const auto& sent_dscp = rx_streams[index].sent_dscp;
          if (sent_dscp && parsed.ip.dscp != *sent_dscp) {
            ++rx.dscp_rewrites;
            if (!rx.rewrite_reported && events_) {
              rx.rewrite_reported = true;
              events_(proto::AgentEvent::NOTICE,
                      fmt::format("{} stream {} arrives with DSCP {}, sent with {}: a switch rewrote its class",
                                  peer_name(rx_streams[index]), parsed.header.stream_id, parsed.ip.dscp, *sent_dscp),
                      rx_stream_id(rx_streams[index]));
            }
          }
        }

        rx.tracker.on_frame(parsed.header.seq, errors > 0, errors);
        const auto counts = rx.tracker.counts();
        if (gap) {
          const std::uint64_t lost_in_gap = counts.lost > lost_before ? counts.lost - lost_before : 0;
          if (lost_in_gap == 0 && sent_apart_ns > gap_threshold_ns_) {
            gap = false;  // the sender sent nothing meanwhile: its host paused, the link did not fail
            if (events_) {
              events_(proto::AgentEvent::NOTICE,
                      fmt::format("{} stream {}: the sender sent nothing for {} ms (its host paused; no frame lost)",
                                  peer_name(rx_streams[index]), parsed.header.stream_id, sent_apart_ns / 1'000'000),
                      rx_stream_id(rx_streams[index]));
            }
          }
          if (gap) {
            rx.gap_lost += lost_in_gap;
            counters.traffic_gaps.fetch_add(1, std::memory_order_relaxed);
            counters.gap_lost.store(rx.gap_lost, std::memory_order_relaxed);
            if (events_) {
              events_(proto::AgentEvent::LINK_DOWN,
                      fmt::format("traffic gap on {} stream {}: nothing for {} ms, resumed ({} frames lost in it)",
                                  peer_name(rx_streams[index]), parsed.header.stream_id, silent_ns / 1'000'000, lost_in_gap),
                      rx_stream_id(rx_streams[index]));
            }
          }
        }
        rx.bytes += length + (stripped ? kVlanTagLength : 0);  // as on the wire
        rx.bits_compared += std::uint64_t{parsed.payload_length} * 8;
        counters.frames.store(counts.received, std::memory_order_relaxed);
        counters.bytes.store(rx.bytes, std::memory_order_relaxed);
        counters.bits_compared.store(rx.bits_compared, std::memory_order_relaxed);
        counters.bit_errors.store(counts.bit_errors, std::memory_order_relaxed);
        counters.errored_frames.store(counts.errored_frames, std::memory_order_relaxed);
        // A late frame can fill a hole counted in a gap: never report less than zero outside gaps.
        counters.lost.store(counts.lost > rx.gap_lost ? counts.lost - rx.gap_lost : 0, std::memory_order_relaxed);
        counters.duplicates.store(counts.duplicates, std::memory_order_relaxed);
        counters.reordered.store(counts.reordered, std::memory_order_relaxed);
        counters.error_bursts.store(counts.error_bursts, std::memory_order_relaxed);
        counters.negative_latencies.store(rx.negative_latencies, std::memory_order_relaxed);
        counters.vlan_tagged.store(rx.vlan_tagged, std::memory_order_relaxed);
        counters.vlan_mismatches.store(rx.vlan_mismatches, std::memory_order_relaxed);
        counters.pcp_changes.store(rx.pcp_changes, std::memory_order_relaxed);
        counters.ce_marked.store(rx.ce_marked, std::memory_order_relaxed);
        counters.dscp_rewrites.store(rx.dscp_rewrites, std::memory_order_relaxed);
      }
      rte_pktmbuf_free(burst[i]);
    }
    if (now - last_publish_ns >= kLatencyPublishNs) {
      publish_latency();
      last_publish_ns = now;
    }
    empty_polls = got == 0 ? empty_polls + 1 : 0;
    if (empty_polls >= queues.size()) {
      sleep_us(context_.idle_sleep_us());
      empty_polls = 0;
    }
  }
  publish_latency();  // stop() joins this thread before the final sample: that one is exact

  // A stream silent since well before the test's end never resumed: a gap that did not close.
  const std::int64_t end_ns = start_ns_ + std::int64_t{plan_.duration_ms()} * 1'000'000;
  for (std::size_t i = 0; i < state.size(); ++i) {
    const RxState& rx = *state[i];
    const std::int64_t until_ns = std::min({end_ns, last_poll_ns, stop_requested_ns_.load()});
    const std::int64_t silent_ns =
        (until_ns - rx.last_arrival_ns) - (unpolled_ns - rx.unpolled_at_last_arrival_ns);
    if (silent_ns > gap_threshold_ns_) {
      rx_streams[i].open_gap.store(1, std::memory_order_relaxed);
      if (events_) {
        events_(proto::AgentEvent::LINK_DOWN,
                fmt::format("nothing from {} stream {} in the last {} ms of the test: its traffic stopped and did not "
                            "resume (a link that went down and stayed down, or a sender that stopped)",
                            peer_name(rx_streams[i]), rx_streams[i].stream_id, silent_ns / 1'000'000),
                rx_stream_id(rx_streams[i]));
      }
    }
  }
}

std::vector<proto::StreamCounters> DpdkEngine::sample() {
  namespace c = counters;
  std::vector<proto::StreamCounters> out;
  for (const auto& target : targets_) {
    proto::StreamCounters stream;
    const FlowTarget& flow = target->flow;
    // One flow per peer keeps the plain name; several are told apart by stream id, as at the receiver.
    stream.set_stream_id(targets_.size() > 1 && plan_.dpdk().flows_per_peer() > 1
                             ? fmt::format("tx:{}/{}", flow.peer, flow.stream_id)
                             : fmt::format("tx:{}", flow.peer));
    stream.set_peer(flow.peer);
    stream.set_sender_stream_id(flow.stream_id);
    if (ipv4()) {
      set_flow(stream, frame_spec_.ip.src_address, flow.src_port, flow.address, frame_spec_.ip.dst_port, flow.dscp);
    }
    if (tracer_) put_path(tracer_->hops(static_cast<std::size_t>(&target - targets_.data())), stream);
    stream.set_kind("tx");
    auto& map = *stream.mutable_counters();
    map[std::string(c::kTxFrames)] = target->frames.load(std::memory_order_relaxed);
    map[std::string(c::kTxBytes)] = target->bytes.load(std::memory_order_relaxed);
    out.push_back(std::move(stream));
  }
  // A flow's frames stay on one RX queue, so a stream is normally one worker's. A driver that moves
  // frames to another queue when one is full splits a flow: its parts are added up and a notice
  // says so, because each part's sequence tracker counts the other part's frames as lost.
  std::vector<std::vector<const RxStreamCounters*>> groups;
  std::unordered_map<std::uint64_t, std::size_t> group_of;
  for (const auto& worker : workers_) {
    const std::size_t streams = worker->rx_stream_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < streams; ++i) {
      const RxStreamCounters& part = worker->rx_streams[i];
      const auto [at, added] =
          group_of.emplace(stream_key(part.source, ipv4() ? part.flow.src_address : 0, part.stream_id), groups.size());
      if (added) groups.emplace_back();
      groups[at->second].push_back(&part);
    }
  }
  for (const auto& parts : groups) {
    const RxStreamCounters& rx = *parts.front();
    const auto sum = [&parts](std::atomic<std::uint64_t> RxStreamCounters::*counter) {
      std::uint64_t total = 0;
      for (const RxStreamCounters* part : parts) total += (part->*counter).load(std::memory_order_relaxed);
      return total;
    };
    if (parts.size() > 1 && split_reported_.insert(group_of.at(stream_key(rx.source, ipv4() ? rx.flow.src_address : 0,
                                                                            rx.stream_id)))
                                .second &&
        events_) {
      events_(proto::AgentEvent::NOTICE,
              fmt::format("{} stream {} arrives on {} RX queues (the driver moved frames off a full queue): its loss, "
                          "reorder and gap counts are not exact",
                          peer_name(rx), rx.stream_id, parts.size()),
              rx_stream_id(rx));
    }
    proto::StreamCounters stream;
    stream.set_peer(peer_name(rx));
    stream.set_stream_id(rx_stream_id(rx));
    stream.set_sender_stream_id(rx.stream_id);
    stream.set_kind("rx");
    if (ipv4()) {
      set_flow(stream, rx.flow.src_address, rx.flow.src_port, rx.flow.dst_address, rx.flow.dst_port,
               rx.sent_dscp.value_or(rx.flow.dscp));
    }
    auto& map = *stream.mutable_counters();
    map[std::string(c::kRxFrames)] = sum(&RxStreamCounters::frames);
    map[std::string(c::kRxBytes)] = sum(&RxStreamCounters::bytes);
    map[std::string(c::kBitsCompared)] = sum(&RxStreamCounters::bits_compared);
    map[std::string(c::kBitErrors)] = sum(&RxStreamCounters::bit_errors);
    map[std::string(c::kErroredFrames)] = sum(&RxStreamCounters::errored_frames);
    map[std::string(c::kLostFrames)] = sum(&RxStreamCounters::lost);
    map[std::string(c::kGapLostFrames)] = sum(&RxStreamCounters::gap_lost);
    map[std::string(c::kDuplicates)] = sum(&RxStreamCounters::duplicates);
    map[std::string(c::kReordered)] = sum(&RxStreamCounters::reordered);
    map[std::string(c::kErrorBursts)] = sum(&RxStreamCounters::error_bursts);
    // A gap that closed (down, then up) is counted as a flap, whatever the driver says of the link
    // (a switch port that stops forwarding keeps carrier); one still open at the end is a traffic
    // gap of its own. The port's own link changes are events and counts on its port stream.
    const std::uint64_t flaps = sum(&RxStreamCounters::traffic_gaps);
    map[std::string(c::kTrafficGaps)] = flaps + sum(&RxStreamCounters::open_gap);
    map[std::string(c::kLinkFlaps)] = flaps;
    map[std::string(c::kHostDrops)] = host_drops_.load(std::memory_order_relaxed);
    map[std::string(c::kBadHeaders)] = bad_headers_.load(std::memory_order_relaxed);
    map[std::string(c::kNegativeLatencies)] = sum(&RxStreamCounters::negative_latencies);
    map[std::string(c::kVlanTaggedFrames)] = sum(&RxStreamCounters::vlan_tagged);
    map[std::string(c::kVlanMismatches)] = sum(&RxStreamCounters::vlan_mismatches);
    map[std::string(c::kPcpChanges)] = sum(&RxStreamCounters::pcp_changes);
    if (ipv4()) {
      map[std::string(c::kCeMarked)] = sum(&RxStreamCounters::ce_marked);
      map[std::string(c::kDscpRewrites)] = sum(&RxStreamCounters::dscp_rewrites);
    }
    std::vector<LatencySummary> latencies;
    for (const RxStreamCounters* part : parts) latencies.push_back(part->latency.read());
    put_latency_gauges(merge_summaries(latencies), stream);
    out.push_back(std::move(stream));
  }
  // The port's own extended statistics (CRC errors, missed, FEC where the driver has them) as
  // deltas over the test; informational, so no threshold judges this stream.
  if (port_) {
    proto::StreamCounters stream;
    stream.set_stream_id("port:" + port_->name());
    stream.set_kind("port");
    auto& map = *stream.mutable_counters();
    for (const auto& [name, value] : port_->xstats()) {
      const auto before = start_xstats_.find(name);
      const std::uint64_t base = before == start_xstats_.end() ? 0 : before->second;
      map[name] = value >= base ? value - base : value;  // a reset counter counts from zero
    }
    map[std::string(c::kMisaddressedFrames)] = misaddressed_frames_.load(std::memory_order_relaxed);
    map[std::string(c::kPortLinkDowns)] = link_watch_.downs();
    const std::int64_t until = std::min(realtime_ns(), stop_requested_ns_.load());
    map[std::string(c::kPortLinkDownMs)] = static_cast<std::uint64_t>(link_watch_.down_ns(until) / 1'000'000);
    out.push_back(std::move(stream));
  }
  return out;
}

void add_dpdk_engine(EngineCatalog& catalog, const DpdkAgentOptions& options) {
  if (options.ports.empty()) {
    catalog.notes.push_back("dpdk engine: no DPDK port configured (--dpdk-vdev or --dpdk-pci)");
    return;
  }
  std::shared_ptr<DpdkContext> context;
  try {
    context = std::make_shared<DpdkContext>(options);
  } catch (const std::exception& e) {
    catalog.notes.push_back(fmt::format("dpdk engine unavailable: {}", e.what()));
    return;
  }
  for (const auto& port : context->ports()) {
    proto::DpdkPort entry;
    entry.set_name(port->name());
    entry.set_mac(mac_text(port->mac()));
    if (const Ipv4Interface& address = context->address(*port); address.address != 0) {
      entry.set_ipv4(cidr_text(address));
      if (address.gateway != 0) entry.set_gateway(ipv4_to_string(address.gateway));
    }
    entry.set_queues(port->queues());
    catalog.dpdk_ports.push_back(entry);
  }
  catalog.engines["dpdk"] = {[context] { return std::make_unique<DpdkEngine>(*context); }, capped_bit_rate};
}

}  // namespace tusk::dpdk
