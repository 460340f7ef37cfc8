// The RDMA engine's CM thread after a connect was sent: each rdma_cm event moves a QP's
// connection on (route, established, errors, disconnects), and what the engine learns of an
// established QP (its pacing, the NIC's rate limit, ACK timeout, path MTU, flow, NIC port) is
// noted on it. Set-up is rdma_engine.cpp.
#include <poll.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "agent/rdma/check_load.hpp"
#include "agent/rdma/connect_data.hpp"
#include "agent/rdma/discovery.hpp"
#include "agent/rdma/pacing.hpp"
#include "agent/rdma/rdma_engine.hpp"
#include "agent/rdma/rdma_engine_internal.hpp"
#include "agent/rdma/roce_udp_port.hpp"
#include "common/clock.hpp"

namespace tusk::rdma {

namespace {

using detail::address_text;
using detail::resolve_timeout_ms;

}  // namespace

bool RdmaEngine::choose_pacing_for(Connection& connection) {
  const auto& test = plan_.rdma();
  // The rate is the agent's, shared by every QP it sends on.
  const double qps = static_cast<double>(std::max(plan_.peers_size(), 1)) * test.qps_per_peer();
  const auto choice =
      choose_pacing(test.pacing(), test.rate_bps() / qps, test.burst_period_ms() > 0,
                    query_pacing_caps(connection.id->verbs), ibv_get_device_name(connection.id->verbs->device));
  if (!choice.refusal.empty()) {
    connection.state = Connection::State::Failed;
    emit(proto::AgentEvent::ENGINE_FAULT,
         fmt::format("flow to {} QP {}: {}", connection.peer, connection.flow_id, choice.refusal), &connection);
    return false;
  }
  connection.hw_rate_kbps = choice.hardware ? choice.kbps : 0;
  // Said once. The NIC pacing the flows is news (and its stream's hw_rate_limit_bps gauge says it);
  // the agent pacing them, as every NIC without packet pacing has it, goes to the log only.
  if (test.rate_bps() > 0 && !pacing_reported_.exchange(true)) {
    if (choice.hardware) {
      emit(proto::AgentEvent::NOTICE, "pacing: " + choice.reason);
    } else {
      spdlog::info("pacing: {}", choice.reason);
    }
  }
  return true;
}

bool RdmaEngine::set_hardware_rate(Connection& connection) {
  ibv_qp_rate_limit_attr limit{};
  limit.rate_limit = connection.hw_rate_kbps;
  if (const int error = ibv_modify_qp_rate_limit(connection.qp.get(), &limit); error != 0) {
    // The device said it could; if it will not after all, the datapath paces (auto) or the flow
    // may not run unpaced (hardware).
    const std::string what = fmt::format("{} qpn {}: ibv_modify_qp_rate_limit({} kbit/s): {}", connection.device,
                                         connection.qp_num.load(), connection.hw_rate_kbps, std::strerror(error));
    connection.hw_rate_kbps = 0;
    if (plan_.rdma().pacing() == "hardware") {
      connection.state = Connection::State::Failed;
      emit(proto::AgentEvent::ENGINE_FAULT,
           fmt::format("flow to {} QP {}: {}", connection.peer, connection.flow_id, what), &connection);
      return false;
    }
    emit(proto::AgentEvent::NOTICE, what + "; the agent paces this QP", &connection);
  }
  return true;
}

void RdmaEngine::note_ack_timeout(Connection& connection) {
  ibv_qp_attr attributes{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(connection.qp.get(), &attributes, IBV_QP_TIMEOUT, &init) != 0) return;
  // 4.096 us x 2^timeout; 0 is "wait forever", which never retransmits: the floor applies.
  if (attributes.timeout == 0 || attributes.timeout > 31) return;
  const double ack_timeout_ns = 4096.0 * static_cast<double>(std::uint64_t{1} << attributes.timeout);
  connection.gap_ns = std::max<std::int64_t>(connection.gap_ns, static_cast<std::int64_t>(1.5 * ack_timeout_ns));
}

void RdmaEngine::note_path_mtu(Connection& connection) {
  ibv_qp_attr attributes{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(connection.qp.get(), &attributes, IBV_QP_PATH_MTU, &init) != 0) return;
  connection.path_mtu = static_cast<std::uint32_t>(128) << attributes.path_mtu;  // IBV_MTU_256 is 1
  // rdma_cm sets the path MTU from the port's active MTU; a profile asking for another is told.
  if (const auto wanted = plan_.rdma().path_mtu(); wanted != 0 && wanted != connection.path_mtu) {
    emit(proto::AgentEvent::NOTICE,
         fmt::format("flow {} {} QP {}: path MTU is {} (rdma_cm's, from {} port {}), not the "
                     "profile's {}",
                     connection.role == Connection::Role::Sender ? "to" : "from", connection.peer, connection.flow_id,
                     connection.path_mtu.load(), connection.device, connection.port_num, wanted),
         &connection);
  }
}

void RdmaEngine::note_flow(Connection& connection) {
  ibv_qp_attr attributes{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(connection.qp.get(), &attributes, IBV_QP_AV | IBV_QP_DEST_QPN, &init) != 0) return;
  connection.udp_source_port =
      roce_udp_source_port(attributes.ah_attr.grh.flow_label, connection.qp_num.load(), attributes.dest_qp_num);
  const std::string local = address_text(rdma_get_local_addr(connection.id.get()));
  const std::string peer = address_text(rdma_get_peer_addr(connection.id.get()));
  const bool sends = connection.role == Connection::Role::Sender;
  connection.flow_src = sends ? local : peer;
  connection.flow_dst = sends ? peer : local;
  connection.flow_known.store(true, std::memory_order_release);
}

void RdmaEngine::open_qp_counters(const Connection& connection, NicPort& port) {
  ibv_device_attr attributes{};
  if (const int rc = ibv_query_device(connection.id.get()->verbs, &attributes); rc != 0) {
    emit(proto::AgentEvent::NOTICE, fmt::format("{}: ibv_query_device failed ({}); its transport counters are per "
                                                "port only",
                                                connection.device, std::strerror(rc)));
    return;
  }
  if (auto refusal = software_device_refusal(connection.device, attributes.vendor_id)) {
    emit(proto::AgentEvent::NOTICE, *refusal);
    return;
  }
  port.qp_counters = std::make_unique<QpCounterReader>(connection.device, connection.port_num);
}

void RdmaEngine::note_check_capacity(const Connection& connection) {
  const auto& test = plan_.rdma();
  const bool reads = operation_ == Operation::Read;
  const bool receives = (connection.role == Connection::Role::Sender) == reads;
  if (!test.data_check() || !receives || check_capacity_said_) return;
  check_capacity_said_ = true;
  ibv_port_attr attributes{};
  const double port_gbps =
      ibv_query_port(connection.id.get()->verbs, static_cast<std::uint8_t>(connection.port_num), &attributes) == 0
          ? port_speed_gbps(attributes)
          : 0;
  const int senders = reads ? plan_.peers_size() : plan_.senders_size();
  // Each sender's whole rate, as if it sent to this agent alone: the most it may ask.
  const CheckDemand demand = check_demand(fmt::format("{}/{}", connection.device, connection.port_num), port_gbps,
                                          test.rate_bps() * senders, senders_whence(senders, test.rate_bps()));
  if (demand.bytes_per_s <= 0) return;
  if (auto notice = check_capacity_notice(demand.bytes_per_s, demand.whence, check_ns_per_byte_, test.check_every(),
                                          test.message_size())) {
    emit(proto::AgentEvent::NOTICE, *notice);
  }
}

void RdmaEngine::note_nic_port(const Connection& connection) {
  const std::string key = fmt::format("{}/{}", connection.device, connection.port_num);
  bool known = false;
  {
    std::lock_guard lock(mutex_);
    known = nic_ports_.contains(key);
  }
  // Only this (the CM) thread adds ports, so the entry cannot appear meanwhile; the sysfs reads
  // that make it happen outside the lock the datapath takes.
  NicPort port;
  port.device = connection.device;
  port.port = connection.port_num;
  if (!known) {
    try {
      port.reader = std::make_unique<PortCounterReader>(connection.device, connection.port_num);
      port.baseline = port.reader->read();
    } catch (const std::exception& e) {
      emit(proto::AgentEvent::NOTICE, fmt::format("NIC counters of {} unavailable: {}", key, e.what()));
    }
    open_qp_counters(connection, port);
    note_check_capacity(connection);
    // The Ethernet side (ethtool) is read apart: a port may have one and not the other.
    std::string why;
    port.netdev = open_port_netdev_counters(connection.device, connection.port_num, why);
    if (port.netdev) {
      port.netdev_baseline = port.netdev->read();
      if (auto note = port.netdev->take_note()) emit(proto::AgentEvent::NOTICE, *note);
    } else {
      emit(proto::AgentEvent::NOTICE, fmt::format("ethtool counters of {} not read: {}", key, why));
    }
  }
  LinkWatch* link = nullptr;
  {
    std::lock_guard lock(mutex_);
    const auto it = nic_ports_.try_emplace(key, std::move(port)).first;
    if (std::find(it->second.peers.begin(), it->second.peers.end(), connection.peer) == it->second.peers.end()) {
      it->second.peers.push_back(connection.peer);
    }
    link = it->second.link.get();
  }
  if (!known) port_watch_->watch(connection.device, connection.port_num, *link);
}

void RdmaEngine::handle_cm_event(rdma_cm_event& event) {
  refused_ids_.clear();  // their connect requests were acked before this event was taken
  if (event.event == RDMA_CM_EVENT_CONNECT_REQUEST) {
    on_connect_request(event);
    return;
  }
  auto* connection = static_cast<Connection*>(event.id->context);
  if (connection == nullptr) return;  // the listener's own events
  const std::string what = rdma_event_str(event.event);
  try {
    switch (event.event) {
      case RDMA_CM_EVENT_ADDR_RESOLVED:
        if (rdma_resolve_route(event.id, resolve_timeout_ms(*connection)) != 0) {
          retry_or_fail(*connection, fmt::format("rdma_resolve_route: {}", std::strerror(errno)));
        }
        break;
      case RDMA_CM_EVENT_ROUTE_RESOLVED:
        on_route_resolved(*connection);
        break;
      case RDMA_CM_EVENT_ESTABLISHED:
        if (connection->role == Connection::Role::Sender) {
          AcceptData answer{};
          std::memcpy(&answer, event.param.conn.private_data,
                      std::min<std::size_t>(sizeof answer, event.param.conn.private_data_len));
          connection->remote_address = answer.address;
          connection->remote_key = answer.key;
          connection->slots = std::min(connection->slots, answer.slots);
        }
        // The NIC's rate limit needs the QP in RTS; a flow that must have it and cannot has failed.
        if (connection->hw_rate_kbps > 0 && !set_hardware_rate(*connection)) break;
        connection->established_ns = realtime_ns();
        // A successor paces from now, not from the start: the outage's bytes are not owed.
        if (connection->generation > 0 && start_ns_ > 0) {
          connection->paced_from_ns = std::max<std::int64_t>(connection->established_ns - start_ns_, 0);
        }
        note_path_mtu(*connection);
        note_ack_timeout(*connection);
        note_flow(*connection);
        note_nic_port(*connection);
        connection->state = Connection::State::Established;
        connections_version_.fetch_add(1, std::memory_order_release);
        spdlog::info("RDMA {} {} QP {} ({} port {}, qpn {}, udp source port {}) established",
                     connection->role == Connection::Role::Sender ? "flow to" : "flow from", connection->peer,
                     connection->flow_id, connection->device, connection->port_num, connection->qp_num.load(),
                     connection->udp_source_port);
        if (start_ns_ > 0 && connection->established_ns > start_ns_ && connection->generation == 0) {
          emit(proto::AgentEvent::NOTICE,
               fmt::format("flow {} {} QP {} connected {} ms after the start",
                           connection->role == Connection::Role::Sender ? "to" : "from", connection->peer,
                           connection->flow_id, (connection->established_ns.load() - start_ns_) / 1'000'000),
               connection);
        }
        break;
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_REJECTED:
        if (connection->role == Connection::Role::Sender && connection->state != Connection::State::Established) {
          // A negative status is an errno (ETIMEDOUT from an unreachable peer); a positive one the
          // IB CM's reject reason (28: nobody listens on the port yet).
          retry_or_fail(*connection, event.status < 0 ? fmt::format("{} ({})", what, std::strerror(-event.status))
                                                      : fmt::format("{} (status {})", what, event.status));
        }
        break;
      case RDMA_CM_EVENT_DISCONNECTED: {
        connection->disconnected = true;
        // A peer that disconnects in the test's last half second is stopping, a few milliseconds
        // before this agent: an orderly end, not a fault.
        const bool ending = realtime_ns() >= start_ns_ + std::int64_t{plan_.duration_ms()} * 1'000'000 - 500'000'000;
        // Under reconnect a peer that disconnects mid-test broke the flow (its port went down and
        // came back, or its QP failed): connect again.
        if (reconnects() && running_ && !ending) {
          if (break_flow(*connection, proto::AgentEvent::NOTICE,
                         connection->role == Connection::Role::Sender
                             ? "the peer disconnected; reconnecting"
                             : "the peer disconnected; waiting for it to reconnect")) {
            break;
          }
        }
        if (connection->state == Connection::State::Broken) break;  // recover() takes it from here
        if (connection->state == Connection::State::Established && running_ && !ending) {
          emit(proto::AgentEvent::ENGINE_FAULT,
               fmt::format("flow {} {} QP {}: peer disconnected",
                           connection->role == Connection::Role::Sender ? "to" : "from", connection->peer,
                           connection->flow_id),
               connection);
        }
        connection->state = Connection::State::Closed;
        break;
      }
      default:
        break;
    }
  } catch (const std::exception& e) {
    retry_or_fail(*connection, e.what());
  }
}

void RdmaEngine::cm_loop() {
  while (cm_running_) {
    // Every 10 ms at most: broken flows and connect retries wait on this loop.
    pollfd descriptor{channel_->fd, POLLIN, 0};
    if (poll(&descriptor, 1, 10) > 0) {
      rdma_cm_event* raw = nullptr;
      while (rdma_get_cm_event(channel_.get(), &raw) == 0) {
        CmEvent event(raw);  // acked when this scope ends, before any id it names is destroyed
        handle_cm_event(*event);
      }
    }
    recover();
    release_retired();
    // Retries happen here, after the failed attempt's events were acked.
    std::vector<Connection*> due;
    {
      std::lock_guard lock(mutex_);
      for (auto& connection : connections_) {
        if (connection->state == Connection::State::RetryWait && realtime_ns() >= connection->retry_at_ns) {
          due.push_back(connection.get());
        }
      }
    }
    for (Connection* connection : due) {
      try {
        begin_connect(*connection);
      } catch (const std::exception& e) {
        retry_or_fail(*connection, e.what());
      }
    }
  }
}

}  // namespace tusk::rdma
