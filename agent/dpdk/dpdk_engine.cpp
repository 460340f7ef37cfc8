#include "agent/dpdk/dpdk_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <stdexcept>
#include <thread>

#include "agent/dpdk/cpu_list.hpp"
#include "agent/dpdk/frame_check_rate.hpp"
#include "agent/dpdk/frame_room.hpp"
#include "agent/dpdk/neighbour_resolver.hpp"
#include "agent/dpdk/queue_plan.hpp"
#include "agent/dpdk/send_rate.hpp"
#include "agent/process_capabilities.hpp"
#include "common/clock.hpp"
#include "common/loopback_peer.hpp"

// The engine's set-up: its ports, a test's plan made into frames, flows and workers, and starting
// and stopping the threads. The threads' loops are dpdk_datapath.cpp's, sample() dpdk_sampling.cpp's.
namespace tusk::dpdk {

namespace {

// No frame from a stream for this long while the test runs is a traffic gap (a flap on ports
// whose driver cannot report link state, such as af_packet), unless its frames come further apart.
constexpr std::int64_t kGapThresholdNs = 50'000'000;
constexpr double kGapFrameIntervals = 20;
constexpr unsigned kAnswerRingSize = 256;

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
  std::vector<Port*> ports;
  for (const auto& port : ports_) ports.push_back(port.get());
  listener_ = std::make_unique<IdlePortListener>(std::move(ports), addresses_);
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
  listener_pause_.emplace(context_.listener());
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
      throw EngineError(
          fmt::format("DPDK port {}: ipv4_udp frames need its IPv4 address: start the agent with "
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
    throw EngineError(
        fmt::format("DPDK port {}: {} B frames do not fit its {} B mbufs: start the agent with "
                    "--dpdk-max-frame {} or more",
                    port_->name(), largest, port_->mbuf_room(), largest));
  }
  // The kernel under net_af_packet drops, without a word, every frame longer than its interface's
  // MTU allows (an 802.1Q tag is allowed on top): the test would read as 100 % loss.
  const std::uint64_t needed_mtu = largest - kEthernetHeaderLength - (spec.tagged ? kVlanTagLength : 0);
  if (const auto mtu = port_->kernel_mtu(); mtu && needed_mtu > *mtu) {
    throw EngineError(fmt::format(
        "DPDK port {}: {} B frames need an MTU of {} on interface {}, which has {} "
        "(ip link set {} mtu {})",
        port_->name(), largest, needed_mtu, port_->kernel_interface(), *mtu, port_->kernel_interface(), needed_mtu));
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
    std::vector<path::TracedFlow> traced;
    for (const FlowTarget& flow : flows) traced.push_back({flow.address, flow.src_port});
    tracer_ = std::make_unique<path::PathTracer>(std::move(traced), test.trace_rate());
  }
  peers_ = peer_names(plan);
  // A loopback test's frames come from this port itself: its receiver names them
  // wire::kLoopbackPeer, as its sender does, so the controller pairs the two and sees a plug that
  // returned nothing.
  if (std::any_of(flows.begin(), flows.end(),
                  [](const FlowTarget& flow) { return flow.peer == tusk::wire::kLoopbackPeer; })) {
    peers_.by_mac.emplace(interface_.mac, tusk::wire::kLoopbackPeer);
    if (interface_.address != 0) peers_.by_address.emplace(interface_.address, tusk::wire::kLoopbackPeer);
  }
  answers_.reset();
  if (interface_.address != 0) answers_ = std::make_unique<MbufRing>(kAnswerRingSize);
  tx_sizes_.assign(targets_.size(), *cycle);
  std::vector<QueueWorker> queue_plan;
  try {
    queue_plan =
        plan_queues({test.queues(), port_->queues(), context_.cpus(), context_.idle_sleep_us() == 0, port_->name()});
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
    return peer != peers_.by_address.end() ? peer->second : path::ipv4_to_string(stream.flow.src_address);
  }
  const auto peer = peers_.by_mac.find(stream.source);
  return peer != peers_.by_mac.end() ? peer->second : mac_text(stream.source);
}

std::string DpdkEngine::rx_stream_id(const RxStreamCounters& stream) const {
  return fmt::format("rx:{}/{}", peer_name(stream), stream.stream_id);
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
  if (!running_.exchange(false)) {
    listener_pause_.reset();  // prepared, never started
    return;
  }
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
  listener_pause_.reset();
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
    catalog.notes.push_back(fmt::format("dpdk engine unavailable: {}{}{}", e.what(),
                                        missing_capabilities_note(capabilities_for_ports()), locked_memory_note()));
    return;
  }
  for (const auto& port : context->ports()) {
    proto::DpdkPort entry;
    entry.set_name(port->name());
    entry.set_mac(mac_text(port->mac()));
    if (const Ipv4Interface& address = context->address(*port); address.address != 0) {
      entry.set_ipv4(cidr_text(address));
      if (address.gateway != 0) entry.set_gateway(path::ipv4_to_string(address.gateway));
    }
    entry.set_queues(port->queues());
    entry.set_speed_mbps(port->link().speed_mbps);
    const std::size_t index = catalog.dpdk_ports.size();
    if (index < options.kernel_interfaces.size()) entry.set_netdev(options.kernel_interfaces[index]);
    catalog.dpdk_ports.push_back(entry);
  }
  std::vector<KernelPort> kernel_ports;
  for (const auto& port : catalog.dpdk_ports) {
    if (!port.netdev().empty()) {
      kernel_ports.push_back({port.name(), port.netdev(), port.ipv4().substr(0, port.ipv4().find('/'))});
    }
  }
  if (const double ns = frame_check_ns_per_byte(1500); ns > 0) catalog.check_rates.set_dpdk_frame_bytes_per_s(1e9 / ns);
  catalog.engines["dpdk"] = {[context] { return std::make_unique<DpdkEngine>(*context); }, capped_bit_rate,
                             std::move(kernel_ports)};
  catalog.heard_lldp = [context](const std::string& port) { return context->listener().heard().neighbour(port); };
}

}  // namespace tusk::dpdk
