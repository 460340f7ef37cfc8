#include "agent/rdma/rdma_engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "agent/latency_gauges.hpp"
#include "agent/rdma/check_load.hpp"
#include "agent/rdma/counters/rdma_counter_names.hpp"
#include "agent/rdma/rdma_engine_internal.hpp"
#include "agent/rdma/roce_udp_port.hpp"
#include "common/clock.hpp"
#include "common/counter_names.hpp"

// The RDMA engine's counters: each connection's published atomics and each NIC port's counters.
namespace tusk::rdma {

namespace {

// A flow's connections (a broken QP and its successors) report as one stream: counts summed, the
// gauges (QP number, latency, connected) and the 5-tuple the newest QP's, when traffic began the
// first's.
void fold_successor(proto::StreamCounters& flow, proto::StreamCounters&& successor) {
  for (const auto& [name, value] : successor.counters()) (*flow.mutable_counters())[name] += value;
  const std::string started(counters::kTrafficStartDelayMs);
  for (const auto& [name, value] : successor.gauges()) {
    if (name != started || !flow.gauges().contains(started)) (*flow.mutable_gauges())[name] = value;
  }
  if (successor.has_flow()) *flow.mutable_flow() = successor.flow();
}

// The share of a receiving stream's bytes whose payload was checked, once its QPs' counters are
// folded together; a stream that checked nothing (no data_check) has no share.
void put_checked_share(proto::StreamCounters& stream) {
  namespace c = counters;
  const auto& counters = stream.counters();
  const auto checked = counters.find(std::string(c::kPayloadBytesChecked));
  const auto received = counters.find(std::string(c::kRxBytes));
  if (checked == counters.end() || received == counters.end() || received->second == 0) return;
  (*stream.mutable_gauges())[std::string(c::kPayloadCheckedShare)] =
      std::min(1.0, static_cast<double>(checked->second) / static_cast<double>(received->second));
}

// How long a connection's flow has carried nothing up to `until`: the outage a successor ended,
// or, for the flow's newest connection, the one still open (a successor not yet carrying, a QP
// broken or failed and not replaced).
std::int64_t downtime_ns(const Connection& c, bool newest, std::int64_t until) {
  const std::int64_t closed = c.downtime_ns.load();
  const std::int64_t since = c.outage_since_ns.load();
  if (!newest) return closed;
  if (since != 0) return closed + std::max<std::int64_t>(until - since, 0);
  const auto state = c.state.load();
  if ((state == Connection::State::Broken || state == Connection::State::Failed) && c.established_ns.load() > 0) {
    const std::int64_t broken = c.broken_progress_ns.load();
    const std::int64_t progress = broken != 0 ? broken : c.last_progress_ns.load(std::memory_order_relaxed);
    return closed + std::max<std::int64_t>(until - (progress != 0 ? progress : c.established_ns.load()), 0);
  }
  return closed;
}

// A NIC port as the sampler sees it: a port's reader and baseline never change once its entry
// exists, and entries are never removed, so these pointers stay good without the engine's lock.
struct NicPortView {
  std::string key;
  PortCounterReader* reader;
  const PortCounterSnapshot* baseline;
  NetdevCounterReader* netdev;
  const PortCounterSnapshot* netdev_baseline;
  const LinkWatch* link;
  std::vector<std::string> peers;
  QpCounterReader* qp_counters;  // null where the port has none
};

// A QP whose own counters the sampler reads after the engine's lock: which stream they go to, and
// what its packets are counted from (a flow that sends the data: WRITE and SEND initiators).
struct QpRead {
  std::size_t stream;  // in `out`
  std::string port;
  std::uint32_t qpn;
  bool sends_data;
  std::uint64_t messages, bytes;
  std::uint32_t path_mtu;
};

// Packets a flow's messages took: each message is split at the path MTU.
std::uint64_t packets_of(const QpRead& qp) {
  if (qp.messages == 0 || qp.path_mtu == 0) return 0;
  const std::uint64_t per_message = (qp.bytes / qp.messages + qp.path_mtu - 1) / qp.path_mtu;
  return qp.messages * std::max<std::uint64_t>(per_message, 1);
}

// Binds each QP to a counter of its own where the port's NIC can, reads the port's counters once,
// and adds each QP's retransmissions (and the packets they are a share of) to its flow's stream.
void add_qp_counters(const std::vector<NicPortView>& ports, const std::vector<QpRead>& qps,
                     std::vector<proto::StreamCounters>& out) {
  for (const auto& port : ports) {
    if (!port.qp_counters) continue;
    bool any = false;
    for (const auto& qp : qps) {
      if (qp.port == port.key) any = port.qp_counters->bind(qp.qpn) || any;
    }
    if (!any) continue;
    port.qp_counters->read();
    for (const auto& qp : qps) {
      if (qp.port != port.key) continue;
      const auto values = port.qp_counters->values(qp.qpn);
      if (!values) continue;
      auto& map = *out[qp.stream].mutable_counters();
      map[std::string(counters::kQpRetransmits)] += transport_retransmits(*values);
      if (qp.sends_data) map[std::string(counters::kQpTxPackets)] += packets_of(qp);
    }
  }
}

// A NIC port's stream: its counters since the test began (sysfs and ethtool), retransmits and
// link flaps as the verdict reads them, and the port's downs as the CM thread saw them. `note`:
// what the ethtool reader has to say, if anything.
proto::StreamCounters nic_port_stream(const NicPortView& port, std::int64_t until, std::optional<std::string>& note) {
  namespace c = counters;
  auto delta = port.reader ? counter_delta(*port.baseline, port.reader->read()) : PortCounterDelta{};
  if (port.netdev) {
    merge_netdev_counters(netdev_counter_delta(*port.netdev_baseline, port.netdev->read()).values, delta.values);
    note = port.netdev->take_note();
  }
  proto::StreamCounters stream;
  stream.set_stream_id("nic:" + port.key);
  stream.set_kind("nic");
  std::string peers;
  for (const auto& peer : port.peers) peers += (peers.empty() ? "" : ",") + peer;
  stream.set_peer(peers);
  auto& map = *stream.mutable_counters();
  for (const auto& [name, value] : delta.values) map[name] = value;
  // One number for "the transport had to send again". Without the sysfs counters (only ethtool's)
  // a 0 would read as "none", not as "not measured".
  if (port.reader) map[std::string(c::kRetransmits)] = transport_retransmits(delta.values);
  if (auto it = delta.values.find(counters::rdma::kLinkDowned); it != delta.values.end()) {
    map[std::string(c::kLinkFlaps)] = it->second;
  }
  // The port's state as the CM thread polled it: downs, and the time spent down (information;
  // link_downed above is what max_flaps judges).
  map[std::string(c::kPortLinkDowns)] = port.link->downs();
  map[std::string(c::kPortLinkDownMs)] = static_cast<std::uint64_t>(port.link->down_ns(until) / 1'000'000);
  return stream;
}

}  // namespace

void RdmaEngine::note_checks(std::vector<proto::StreamCounters>& streams) {
  std::uint64_t checked = 0;
  for (auto& stream : streams) {
    put_checked_share(stream);
    if (const auto found = stream.counters().find(std::string(counters::kPayloadBytesChecked));
        found != stream.counters().end()) {
      checked += found->second;
    }
  }
  const auto& test = plan_.rdma();
  if (!test.data_check() || check_share_said_) return;
  const std::int64_t now = steady_ns();
  if (checked_at_ns_ > 0 && now > checked_at_ns_ && checked > checked_before_) {
    if (auto notice = check_load_notice(static_cast<double>(checked - checked_before_),
                                        static_cast<double>(now - checked_at_ns_) / 1e9, check_ns_per_byte_,
                                        test.check_every(), test.message_size())) {
      check_share_said_ = true;
      emit(proto::AgentEvent::NOTICE, *notice);
    }
  }
  checked_before_ = checked;
  checked_at_ns_ = now;
}

std::vector<proto::StreamCounters> RdmaEngine::sample() {
  namespace c = counters;
  std::vector<proto::StreamCounters> out;
  // What the NIC ports' streams need, copied under the lock; their sysfs reads happen after it,
  // so a slow read never holds up the CM thread or the datapath's list of connections.
  std::vector<NicPortView> nic_ports;
  std::unique_lock lock(mutex_);
  for (auto& [key, port] : nic_ports_) {
    nic_ports.push_back({key, port.reader.get(), &port.baseline, port.netdev.get(), &port.netdev_baseline,
                         port.link.get(), port.peers, port.qp_counters.get()});
  }
  const std::int64_t until = std::max(std::min(realtime_ns(), stopped_ns_.load()), start_ns_);
  std::map<std::string, std::size_t> newest;  // stream id -> the flow's newest connection
  for (std::size_t i = 0; i < connections_.size(); ++i) newest[stream_id(*connections_[i])] = i;
  std::map<std::string, std::size_t> position;  // stream id -> its place in `out`
  std::vector<QpRead> qps;
  for (std::size_t i = 0; i < connections_.size(); ++i) {
    const auto& connection = connections_[i];
    const bool sender = connection->role == Connection::Role::Sender;
    proto::StreamCounters stream;
    stream.set_peer(connection->peer);
    // The initiator's QP is a "flow" (a "read" when it pulls the data and checks it itself); the
    // target's a "sink", or for READs a "source" with nothing to count but errors.
    const bool reads = operation_ == Operation::Read;
    const bool receives_data = sender == reads;
    stream.set_stream_id(stream_id(*connection));
    stream.set_kind(stream_kind(sender, reads));
    if (connection->established_ns > 0) stream.set_nic(fmt::format("{}/{}", connection->device, connection->port_num));
    if (connection->flow_known.load(std::memory_order_acquire)) {
      proto::Flow& flow = *stream.mutable_flow();
      flow.set_src_address(connection->flow_src);
      flow.set_dst_address(connection->flow_dst);
      flow.set_src_port(connection->udp_source_port);
      flow.set_dst_port(kRoceUdpPort);
      flow.set_protocol("udp");
    }
    if (tracer_) {
      const auto traced = std::find(traced_.begin(), traced_.end(), connection.get());
      if (traced != traced_.end())
        path::put_path(tracer_->hops(static_cast<std::size_t>(traced - traced_.begin())), stream);
    }
    auto& map = *stream.mutable_counters();
    map[std::string(receives_data ? c::kRxBytes : c::kTxBytes)] = connection->bytes.load(std::memory_order_relaxed);
    map[std::string(receives_data ? c::kRxMessages : c::kTxMessages)] =
        connection->messages.load(std::memory_order_relaxed);
    map[std::string(c::kCompletionErrors)] = connection->completion_errors.load(std::memory_order_relaxed);
    if (receives_data && plan_.rdma().data_check()) {
      map[std::string(c::kIntegrityErrors)] = connection->integrity_errors.load(std::memory_order_relaxed);
      map[std::string(c::kPayloadBytesChecked)] = connection->payload_bytes_checked.load(std::memory_order_relaxed);
    }
    map[std::string(c::kStalls)] = connection->stalls.load(std::memory_order_relaxed);
    const auto state = connection->state.load();
    // A QP that failed before it was ever established carried nothing, and its other counters
    // are all zero: without this a test whose every QP was refused read as clean.
    map[std::string(c::kConnectFailures)] =
        state == Connection::State::Failed && connection->established_ns == 0 ? 1 : 0;
    (*stream.mutable_gauges())["connected"] =
        connection->established_ns > 0 && state != Connection::State::Failed && state != Connection::State::Broken;
    for (std::size_t s = 0; s <= kCountedStatuses; ++s) {
      if (const auto n = connection->errors_by_status[s].load(std::memory_order_relaxed); n > 0) {
        map[s < kCountedStatuses ? detail::status_counter_name(static_cast<int>(s)) : "wc_other"] = n;
      }
    }
    put_latency_gauges(connection->latency.read(), stream);
    if (sender && !plan_.rdma().collective().empty()) {
      const auto steps = connection->steps_done.load(std::memory_order_relaxed);
      map[std::string(c::kStepsDone)] = steps;
      if (steps > 0) {
        (*stream.mutable_gauges())[std::string(c::kStepTimeMeanNs)] =
            static_cast<double>(connection->step_time_sum_ns.load(std::memory_order_relaxed)) /
            static_cast<double>(steps);
        (*stream.mutable_gauges())[std::string(c::kStepTimeMaxNs)] =
            static_cast<double>(connection->step_time_max_ns.load(std::memory_order_relaxed));
      }
    }
    // How long after it was due this stream first carried data: QPs connect during prepare, so
    // only the datapath's wake-up (and for a sink the way across) lies between; the controller
    // measures throughput from then. A replay's first post is due after its first compute phase.
    if (const auto first = connection->first_traffic_ns.load(std::memory_order_relaxed); first > 0) {
      const std::int64_t due =
          start_ns_ + std::int64_t{plan_.rdma().collective().empty() ? 0u : plan_.rdma().compute_ms()} * 1'000'000;
      (*stream.mutable_gauges())[std::string(c::kTrafficStartDelayMs)] =
          static_cast<double>(std::max<std::int64_t>(first - due, 0)) / 1e6;
    }
    (*stream.mutable_gauges())["qp_num"] = connection->qp_num.load();
    if (sender && connection->hw_rate_kbps > 0)
      (*stream.mutable_gauges())["hw_rate_limit_bps"] = connection->hw_rate_kbps * 1e3;
    (*stream.mutable_gauges())["path_mtu"] = connection->path_mtu.load();
    // The time the flow carried nothing after a break, and (recovery: reconnect) its new QPs.
    map[std::string(c::kDowntimeMs)] =
        static_cast<std::uint64_t>(downtime_ns(*connection, newest[stream.stream_id()] == i, until) / 1'000'000);
    if (reconnects()) {
      map[std::string(c::kReconnects)] = connection->generation > 0 && connection->established_ns > 0;
      map[std::string(c::kReconnectMs)] = static_cast<std::uint64_t>(connection->reconnect_ns.load() / 1'000'000);
    }
    const auto [at, added] = position.try_emplace(stream.stream_id(), out.size());
    if (const auto qpn = connection->qp_num.load(); qpn != 0 && connection->established_ns > 0) {
      qps.push_back({at->second, fmt::format("{}/{}", connection->device, connection->port_num), qpn, sender && !reads,
                     connection->messages.load(std::memory_order_relaxed),
                     connection->bytes.load(std::memory_order_relaxed), connection->path_mtu.load()});
    }
    if (added) {
      out.push_back(std::move(stream));
    } else {
      fold_successor(out[at->second], std::move(stream));
    }
  }
  lock.unlock();
  note_checks(out);
  add_qp_counters(nic_ports, qps, out);
  for (const auto& port : nic_ports) {
    std::optional<std::string> note;
    out.push_back(nic_port_stream(port, until, note));
    if (note) emit(proto::AgentEvent::NOTICE, *note);
    if (port.qp_counters) {
      if (auto refusal = port.qp_counters->take_refusal()) emit(proto::AgentEvent::NOTICE, *refusal);
    }
  }
  return out;
}

}  // namespace tusk::rdma
