#include "agent/rdma/rdma_engine.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstring>

#include "agent/rdma/check_load.hpp"
#include "agent/rdma/connect_data.hpp"
#include "agent/rdma/counters/netdev_counters.hpp"
#include "agent/rdma/discovery.hpp"
#include "agent/rdma/message_format.hpp"
#include "agent/rdma/pacing.hpp"
#include "agent/rdma/rdma_engine_internal.hpp"
#include "agent/rdma/rdma_plan.hpp"
#include "agent/rdma/roce_udp_port.hpp"
#include "common/clock.hpp"

// Set-up and teardown of the RDMA engine: the plan's checks, the listener, connecting every QP
// through rdma_cm, and stop. The CM thread's events are rdma_cm_events.cpp, the datapath
// rdma_datapath.cpp, sampling rdma_sampling.cpp.
namespace tusk::rdma {

namespace {

constexpr int kResolveTimeoutMs = 2000;
// A successor's link has just come back: a neighbour entry the outage left failed, or a first ARP
// that went nowhere, is tried again at once rather than waited out.
constexpr int kReconnectResolveTimeoutMs = 300;

// Peers prepare at the same time as this agent and may not listen yet: connects are retried this
// long. Under the controller's 30 s wait for every plan's answer, so a peer that never answers is
// named by this agent (which QP, which call, errno) rather than by the controller's timeout.
constexpr std::int64_t kConnectDeadlineNs = 20'000'000'000;
constexpr std::int64_t kRetryDelayNs = 250'000'000;
constexpr std::uint32_t kSenderCreditReceives = 64;
constexpr std::uint32_t kReceiverSendQueue = 64;

sockaddr_in ipv4_socket_address(const std::string& address, std::uint16_t port) {
  sockaddr_in out{};
  out.sin_family = AF_INET;
  out.sin_port = htons(port);
  inet_pton(AF_INET, address.c_str(), &out.sin_addr);
  return out;
}

bool is_ipv4(const std::string& address) {
  in_addr parsed{};
  return inet_pton(AF_INET, address.c_str(), &parsed) == 1;
}

// What rdma_cm's route gave `id` (resolved, or a connect request's), for refuse_route: only what
// the profile asks about is read.
ResolvedRoute resolved_route(rdma_cm_id* id, const proto::RdmaTest& test) {
  ResolvedRoute route;
  route.port = id->port_num;
  if (test.gid_index() != 0) {
    route.source_gid = gid_text(id->route.addr.addr.ibaddr.sgid);
    ibv_gid gid{};
    if (ibv_query_gid(id->verbs, id->port_num, static_cast<int>(test.gid_index()), &gid) == 0) {
      route.gid_at_profile_index = gid_text(gid);
    }
  }
  if (test.path_mtu() != 0) {
    ibv_port_attr port{};
    if (ibv_query_port(id->verbs, id->port_num, &port) == 0) route.active_mtu = 128u << port.active_mtu;
  }
  return route;
}

// RDMA READs a QP may have in flight, as initiator and as target: what the device allows, up to 16.
std::uint8_t read_depth(ibv_context* context) {
  ibv_device_attr attributes{};
  if (ibv_query_device(context, &attributes) != 0) return 1;
  return static_cast<std::uint8_t>(
      std::clamp(std::min(attributes.max_qp_init_rd_atom, attributes.max_qp_rd_atom), 1, 16));
}

using detail::address_text;
using detail::resolve_timeout_ms;

}  // namespace

namespace detail {

int resolve_timeout_ms(const Connection& connection) {
  return connection.generation > 0 ? kReconnectResolveTimeoutMs : kResolveTimeoutMs;
}

std::string flow_name(const Connection& connection) {
  return fmt::format("flow {} {} QP {} ({} qpn {})", connection.role == Connection::Role::Sender ? "to" : "from",
                     connection.peer, connection.flow_id, connection.device, connection.qp_num.load());
}

// An address as the plan writes it: IPv4 dotted (also one an IPv6 socket shows v4-mapped).
std::string address_text(const sockaddr* address) {
  char text[INET6_ADDRSTRLEN] = "";
  if (address == nullptr) return "";
  if (address->sa_family == AF_INET) {
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, text, sizeof text);
  } else if (address->sa_family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      inet_ntop(AF_INET, v6.s6_addr + 12, text, sizeof text);
    } else {
      inet_ntop(AF_INET6, &v6, text, sizeof text);
    }
  }
  return text;
}

}  // namespace detail

void Connection::release_resources() noexcept {
  qp.reset();
  cq.reset();
  mr.reset();
  buffer.reset();
  pd.reset();
  id.reset();
}

void RdmaEngine::prepare(const proto::Plan& plan, EngineEventSink events) {
  proto::RdmaTest test = resolve_rdma_plan(plan);
  const std::string& operation = test.operation();
  if (operation == "write") {
    // A checked WRITE tells the receiver about every message: it becomes a WRITE with immediate.
    operation_ = test.data_check() ? Operation::WriteImm : Operation::Write;
  } else if (operation == "write_imm") {
    operation_ = Operation::WriteImm;
  } else if (operation == "send") {
    operation_ = Operation::Send;
  } else {
    operation_ = Operation::Read;
  }
  plan_ = plan;
  *plan_.mutable_rdma() = test;
  receivers_accepted_ = 0;
  events_ = std::move(events);
  prepared_ns_ = realtime_ns();

  channel_ = create_event_channel();
  // Non-blocking, so the CM thread can poll it and notice stop().
  const int flags = fcntl(channel_->fd, F_GETFL);
  if (flags < 0 || fcntl(channel_->fd, F_SETFL, flags | O_NONBLOCK) != 0) {
    throw EngineError(fmt::format("rdma_cm: cannot make the event channel non-blocking: {}", std::strerror(errno)));
  }
  listener_ = create_cm_id(channel_.get(), nullptr, RDMA_PS_TCP);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_port = htons(static_cast<std::uint16_t>(test.cm_port()));
  if (rdma_bind_addr(listener_.get(), reinterpret_cast<sockaddr*>(&any)) != 0) {
    throw EngineError(
        fmt::format("rdma_cm: cannot listen on port {}: rdma_bind_addr: {}", test.cm_port(), std::strerror(errno)));
  }
  if (rdma_listen(listener_.get(), 64) != 0) {
    throw EngineError(fmt::format("rdma_cm: rdma_listen on port {}: {}", test.cm_port(), std::strerror(errno)));
  }

  // Rails: the planner named this agent's rail devices and each peer's address on every rail.
  const std::uint32_t rails = test.rails();  // at most kMaxRails, each with its device (resolve_rdma_plan)
  for (const auto& rail : test.rail_endpoints()) {
    if (!is_ipv4(rail.address())) {
      throw EngineError(
          fmt::format("rail device {} has no IPv4 address in the plan (got '{}')", rail.device(), rail.address()));
    }
  }
  for (const auto& peer : plan.peers()) {
    if (rails > 0 && static_cast<std::uint32_t>(peer.rail_addresses_size()) != rails) {
      throw EngineError(fmt::format("peer '{}' has {} rail addresses for {} rails", peer.agent_name(),
                                    peer.rail_addresses_size(), rails));
    }
    for (int r = rails > 0 ? 0 : -1; r < static_cast<int>(rails); ++r) {
      const std::string& address = r < 0 ? peer.address() : peer.rail_addresses(r);
      if (!is_ipv4(address)) {
        throw EngineError(fmt::format("peer '{}' has no RDMA address{} (got '{}'): does it have a RoCE IPv4 GID?",
                                      peer.agent_name(), r < 0 ? "" : fmt::format(" on rail {}", r), address));
      }
      for (std::uint32_t q = 0; q < test.qps_per_peer(); ++q) {
        auto connection = std::make_unique<Connection>();
        connection->role = Connection::Role::Sender;
        connection->peer = peer.agent_name();
        connection->address = address;
        connection->rail = r;
        if (r >= 0) connection->source = test.rail_endpoints(r).address();
        connection->flow_id = q;
        connection->connect_deadline_ns = prepared_ns_ + kConnectDeadlineNs;
        connections_.push_back(std::move(connection));
      }
    }
  }
  port_watch_ = std::make_unique<PortWatch>(
      [this](const std::string& key, const LinkChange& change) { on_port_change(key, change); });
  if (test.data_check()) check_ns_per_byte_ = check_ns_per_byte(test.message_size());
  for (auto& connection : connections_) begin_connect(*connection);
  cm_running_ = true;
  cm_thread_ = std::thread([this] { cm_loop(); });
}

bool RdmaEngine::ready() {
  // Every sending QP has connected, or has failed and said why: the test may start at T and the
  // datapath does nothing but post from then on. (The accepting side's QPs are the senders' peers:
  // each is established before its sender's ESTABLISHED, whose agent waits for it here.)
  std::lock_guard lock(mutex_);
  return std::none_of(connections_.begin(), connections_.end(), [](const auto& connection) {
    const auto state = connection->state.load();
    return connection->role == Connection::Role::Sender &&
           (state == Connection::State::Connecting || state == Connection::State::RetryWait);
  });
}

void RdmaEngine::set_id_options(rdma_cm_id* id) {
  const auto& test = plan_.rdma();
  if (test.ack_timeout() > 0) {
    auto timeout = static_cast<std::uint8_t>(std::min<std::uint32_t>(test.ack_timeout(), 31));
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout) != 0) {
      emit(proto::AgentEvent::NOTICE,
           fmt::format("rdma_cm: cannot set ACK timeout {}: {}", test.ack_timeout(), std::strerror(errno)));
    }
  }
  if (test.traffic_class() > 0) {
    auto tos = static_cast<std::uint8_t>(test.traffic_class());
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) != 0) {
      emit(proto::AgentEvent::NOTICE,
           fmt::format("rdma_cm: cannot set traffic class {}: {}", test.traffic_class(), std::strerror(errno)));
    }
  }
}

void RdmaEngine::begin_connect(Connection& connection) {
  connection.release_resources();
  connection.state = Connection::State::Connecting;
  ++connection.attempts;
  connection.id = create_cm_id(channel_.get(), &connection, RDMA_PS_TCP);
  set_id_options(connection.id.get());
  sockaddr_in destination = ipv4_socket_address(connection.address, static_cast<std::uint16_t>(plan_.rdma().cm_port()));
  // On a rail the QP leaves from that rail's address, which binds it to the rail's device.
  sockaddr_in source = ipv4_socket_address(connection.source, 0);
  if (rdma_resolve_addr(connection.id.get(), connection.source.empty() ? nullptr : reinterpret_cast<sockaddr*>(&source),
                        reinterpret_cast<sockaddr*>(&destination), resolve_timeout_ms(connection)) != 0) {
    retry_or_fail(connection, fmt::format("rdma_resolve_addr({}): {}", connection.address, std::strerror(errno)));
  }
}

void RdmaEngine::retry_or_fail(Connection& connection, const std::string& why) {
  if (connection.established_ns.load() != 0) {
    // Once established, the QP is the datapath's: a retry here would release its CQ under the
    // datapath's poll (seen: rdma_cm's late error on a flow stopped by a completion error, 3 s
    // after its port came back, and the agent died polling a null CQ). A broken flow is connected
    // again as a successor (recover()), never in place.
    fail_established(connection, why);
    return;
  }
  if (realtime_ns() < connection.connect_deadline_ns && cm_running_.load()) {
    connection.state = Connection::State::RetryWait;  // resources are released after the event is acked
    connection.retry_at_ns = realtime_ns() + connection.retry_delay_ns;
    connection.retry_delay_ns = std::min(2 * connection.retry_delay_ns, kRetryDelayNs);
    return;
  }
  connection.state = Connection::State::Failed;
  emit(proto::AgentEvent::ENGINE_FAULT,
       fmt::format("flow to {} ({}) QP {}: cannot connect after {} attempts: {}", connection.peer, connection.address,
                   connection.flow_id, connection.attempts, why),
       &connection);
}

void RdmaEngine::fail_established(Connection& connection, const std::string& why) {
  const std::string flow = detail::flow_name(connection);
  if (reconnects() && running_ &&
      break_flow(connection, proto::AgentEvent::NOTICE, "rdma_cm: " + why + "; reconnecting")) {
    return;  // recover() connects its successor
  }
  // Running, or failing while its establishment was noted (an exception there): it fails now,
  // once, whoever else (the datapath, on a completion error) would fail it too.
  for (auto running : {Connection::State::Established, Connection::State::Connecting, Connection::State::RetryWait}) {
    if (connection.state.compare_exchange_strong(running, Connection::State::Failed)) {
      emit(proto::AgentEvent::ENGINE_FAULT, fmt::format("{}: rdma_cm: {}; flow stopped", flow, why), &connection);
      return;
    }
  }
  // Stopped, broken or closed already, and said so then.
  spdlog::info("{}: rdma_cm: {} (the flow had already stopped)", flow, why);
}

void RdmaEngine::build_resources(Connection& connection, rdma_cm_id* id, std::uint32_t slots, bool receiver) {
  const auto& test = plan_.rdma();
  connection.device = ibv_get_device_name(id->verbs->device);
  connection.port_num = id->port_num;
  connection.slots = slots;
  connection.posted_ns.assign(slots, 0);
  connection.message_size = static_cast<std::uint32_t>(test.message_size());
  connection.pd = alloc_pd(id->verbs);
  const std::size_t bytes = std::size_t{slots} * connection.message_size;
  void* memory = nullptr;
  if (posix_memalign(&memory, 4096, std::max<std::size_t>(bytes, 4096)) != 0) {
    throw EngineError(fmt::format("{}: cannot allocate {} B of message buffers", connection.device, bytes));
  }
  connection.buffer.reset(static_cast<std::uint8_t*>(memory));
  std::memset(memory, 0, bytes);
  // The side whose memory is the source holds the messages: the sender, or for READs the acceptor,
  // whose slot s always holds message number s. Every slot has the same PRBS payload; only the
  // header changes from message to message.
  const bool source = receiver == (operation_ == Operation::Read);
  if (source && test.data_check()) {
    // One PRBS fill and CRC, copied: a connect (and a reconnect, whose time is a flow's downtime)
    // should not generate the same megabytes once per slot.
    connection.payload_crc = fill_message_payload(connection.buffer.get(), connection.message_size);
    for (std::uint32_t s = 0; s < slots; ++s) {
      std::uint8_t* message = connection.buffer.get() + std::size_t{s} * connection.message_size;
      if (s > 0) std::memcpy(message, connection.buffer.get(), connection.message_size);
      if (operation_ == Operation::Read) {
        write_message_header(message, {connection.flow_id, s, connection.message_size, connection.payload_crc});
      }
    }
  }
  const int access = !receiver                       ? IBV_ACCESS_LOCAL_WRITE
                     : operation_ == Operation::Read ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ
                                                     : IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
  connection.mr = register_memory(connection.pd.get(), memory, std::max<std::size_t>(bytes, 4096), access);
  const bool credits = consumes_receives();
  const std::uint32_t send_depth = receiver ? kReceiverSendQueue : test.outstanding() + test.signal_every();
  const std::uint32_t receive_depth = !credits ? 1 : receiver ? slots : kSenderCreditReceives;
  connection.cq = create_cq(id->verbs, static_cast<int>(send_depth + receive_depth), nullptr, 0);
  ibv_qp_init_attr attributes{};
  attributes.send_cq = connection.cq.get();
  attributes.recv_cq = connection.cq.get();
  attributes.qp_type = IBV_QPT_RC;
  attributes.cap.max_send_wr = send_depth;
  attributes.cap.max_recv_wr = receive_depth;
  attributes.cap.max_send_sge = 1;
  attributes.cap.max_recv_sge = 1;
  attributes.cap.max_inline_data = receiver ? 0 : test.inline_threshold();
  connection.qp = create_qp(id, connection.pd.get(), attributes);
  connection.qp_num = connection.qp.get()->qp_num;
  // Receive WRs before the connection is up, so no message ever finds none (RNR). A SEND lands in
  // the buffer its receive WR names: slot i.
  for (std::uint32_t i = 0; credits && i < receive_depth; ++i) {
    if (!post_receive(connection, i)) {
      throw EngineError(fmt::format("{}: QP {}: ibv_post_recv: {}", connection.device, connection.qp_num.load(),
                                    std::strerror(errno)));
    }
  }
}

std::string RdmaEngine::device_refusal(const Connection& connection, const std::string& device) const {
  if (connection.rail >= 0) {
    const auto& rail = plan_.rdma().rail_endpoints(connection.rail);
    if (device != rail.device()) {
      return fmt::format("goes through {}, not rail {}'s device {}", device, connection.rail, rail.device());
    }
  }
  if (!plan_.rdma().device().empty() && device != plan_.rdma().device()) {
    return fmt::format("goes through {}, not the profile's device {}", device, plan_.rdma().device());
  }
  if (!allowed_devices_.empty() &&
      std::find(allowed_devices_.begin(), allowed_devices_.end(), device) == allowed_devices_.end()) {
    return fmt::format("goes through {}, which this agent does not offer (--rdma-device {})", device,
                       fmt::join(allowed_devices_, ", "));
  }
  return {};
}

void RdmaEngine::on_route_resolved(Connection& connection) {
  // rdma_cm picks the device from the route to the peer's address; a profile that names a device
  // must get that one, or the test would load a NIC nobody asked for.
  const std::string device = ibv_get_device_name(connection.id->verbs->device);
  if (const auto refusal = device_refusal(connection, device); !refusal.empty()) {
    connection.state = Connection::State::Failed;
    emit(proto::AgentEvent::ENGINE_FAULT,
         fmt::format("flow to {} QP {}: the route to {} {}", connection.peer, connection.flow_id, connection.address,
                     refusal),
         &connection);
    return;
  }
  if (const auto refusal = refuse_route(plan_.rdma(), resolved_route(connection.id.get(), plan_.rdma()))) {
    connection.state = Connection::State::Failed;
    emit(proto::AgentEvent::ENGINE_FAULT,
         fmt::format("flow to {} QP {}: the route to {} on {} {}", connection.peer, connection.flow_id,
                     connection.address, device, *refusal),
         &connection);
    return;
  }
  if (!choose_pacing_for(connection)) return;
  build_resources(connection, connection.id.get(), slots_for(plan_.rdma()), false);
  ConnectRequestData request{};
  request.flow_id = connection.flow_id;
  request.rail_plus_one = static_cast<std::uint16_t>(connection.rail + 1);
  std::strncpy(request.sender, agent_name_.c_str(), sizeof(request.sender) - 1);
  rdma_conn_param parameters{};
  parameters.private_data = &request;
  parameters.private_data_len = sizeof request;
  parameters.responder_resources = read_depth(connection.id->verbs);
  parameters.initiator_depth = read_depth(connection.id->verbs);
  parameters.retry_count = 7;
  parameters.rnr_retry_count = 7;
  if (rdma_connect(connection.id.get(), &parameters) != 0) {
    retry_or_fail(connection, fmt::format("rdma_connect: {}", std::strerror(errno)));
  }
}

void RdmaEngine::on_connect_request(rdma_cm_event& event) {
  ConnectRequestData request{};
  if (event.param.conn.private_data != nullptr) {
    std::memcpy(&request, event.param.conn.private_data,
                std::min<std::size_t>(sizeof request, event.param.conn.private_data_len));
  }
  request.sender[sizeof(request.sender) - 1] = '\0';
  // Who may connect is the plan's to say: anyone else is refused before any memory is pinned or
  // any flow of a real sender is retired in its name, and said once per claimed name and reason.
  const std::string source = address_text(rdma_get_peer_addr(event.id));
  if (const auto refusal = refuse_connect_request(
          plan_, {request.sender, request.flow_id, request.rail_plus_one, source, receivers_accepted_})) {
    rdma_reject(event.id, nullptr, 0);
    refused_ids_.emplace_back(event.id);  // destroyed once this event is acked
    const std::string key = fmt::format("{}\n{}", request.sender, *refusal);
    if (refusals_reported_.size() < kMaxRefusalsReported && refusals_reported_.insert(key).second) {
      emit(proto::AgentEvent::ENGINE_FAULT,
           fmt::format("refused a connection claiming to be {} QP {}{}: {}", request.sender, request.flow_id,
                       source.empty() ? "" : " from " + source, *refusal));
    }
    return;
  }
  ++receivers_accepted_;
  auto connection = std::make_unique<Connection>();
  connection->role = Connection::Role::Receiver;
  connection->peer = request.sender;
  connection->flow_id = request.flow_id;
  connection->rail = static_cast<int>(request.rail_plus_one) - 1;
  // A sender's new QP for a flow this side already serves (it reconnected): the new connection
  // takes the flow over and ends its outage.
  if (const Connection* previous = replace_receiver(*connection)) {
    const auto successor = successor_of(*previous);
    connection->generation = successor->generation;
    connection->outage_since_ns = successor->outage_since_ns.load();
    connection->repairable_ns = successor->repairable_ns.load();
  }
  connection->id.reset(event.id);
  event.id->context = connection.get();
  try {
    if (const auto refusal = device_refusal(*connection, ibv_get_device_name(event.id->verbs->device));
        !refusal.empty()) {
      throw EngineError("the connection " + refusal);
    }
    if (const auto refusal = refuse_route(plan_.rdma(), resolved_route(event.id, plan_.rdma()))) {
      throw EngineError(fmt::format("the connection on {} {}", ibv_get_device_name(event.id->verbs->device), *refusal));
    }
    set_id_options(event.id);
    build_resources(*connection, event.id, slots_for(plan_.rdma()), true);
    AcceptData answer{};
    answer.address = reinterpret_cast<std::uintptr_t>(connection->buffer.get());
    answer.key = connection->mr->rkey;
    answer.slots = connection->slots;
    answer.message_size = connection->message_size;
    rdma_conn_param parameters{};
    parameters.private_data = &answer;
    parameters.private_data_len = sizeof answer;
    parameters.responder_resources = read_depth(event.id->verbs);
    parameters.initiator_depth = read_depth(event.id->verbs);
    parameters.retry_count = 7;  // the credits this side sends must survive a lost packet too
    parameters.rnr_retry_count = 7;
    if (rdma_accept(event.id, &parameters) != 0) {
      throw EngineError(fmt::format("rdma_accept from {}: {}", connection->peer, std::strerror(errno)));
    }
  } catch (const std::exception& e) {
    emit(proto::AgentEvent::ENGINE_FAULT,
         fmt::format("flow from {} QP {}: {}", connection->peer, connection->flow_id, e.what()), connection.get());
    rdma_reject(event.id, nullptr, 0);
    connection->state = Connection::State::Failed;
    // The id goes with the other connections at stop(), after this event has been acked.
  }
  std::lock_guard lock(mutex_);
  connections_.push_back(std::move(connection));
}

void RdmaEngine::emit(proto::AgentEvent::Kind kind, const std::string& message, const Connection* connection) {
  emit(kind, message, connection ? stream_id(*connection) : std::string());
}

void RdmaEngine::emit(proto::AgentEvent::Kind kind, const std::string& message, const std::string& stream_id) {
  spdlog::warn("{}", message);
  if (events_) events_(kind, message, stream_id);
}

std::string RdmaEngine::stream_id(const Connection& connection) const {
  const bool sender = connection.role == Connection::Role::Sender;
  const bool reads = operation_ == Operation::Read;
  if (connection.rail >= 0) {
    return fmt::format("{}:{}/rail{}/qp{}", stream_kind(sender, reads), connection.peer, connection.rail,
                       connection.flow_id);
  }
  return fmt::format("{}:{}/qp{}", stream_kind(sender, reads), connection.peer, connection.flow_id);
}

void RdmaEngine::stop() noexcept {
  if (stopped_ns_.load() == std::numeric_limits<std::int64_t>::max()) stopped_ns_ = realtime_ns();
  if (port_watch_) port_watch_->stop();  // its changes break flows: none once the teardown begins
  if (running_.exchange(false) && data_thread_.joinable()) data_thread_.join();
  if (tracing_thread_.joinable()) tracing_thread_.join();
  if (tracer_) tracer_->stop();
  // Not joined here: the CM thread may be destroying a retired QP, which can wait on the kernel.
  cm_running_ = false;
  // A stopped engine takes no connection, and the next test's engine listens on the same port at
  // once, while this one's QPs may take the kernel many seconds to destroy (the CI lab saw the next
  // plan refused: rdma_bind_addr EADDRNOTAVAIL, rdma_cm's word for a port another listener holds).
  // A listener has no QP: rxe never holds its destroy, and librdmacm's waits only for the CM
  // thread to ack the listener's events, which it does as it handles each.
  listener_.reset();
}

void RdmaEngine::release() noexcept {
  stop();
  if (cm_thread_.joinable()) cm_thread_.join();
  std::lock_guard lock(mutex_);
  for (auto& connection : connections_) {
    if (connection->id && connection->state == Connection::State::Established) rdma_disconnect(connection->id.get());
  }
  // The connections' counters stay for the final sample(); only their verbs resources go.
  for (auto& connection : connections_) connection->release_resources();
  refused_ids_.clear();  // the CM thread is gone: every event it took was acked
  listener_.reset();
  channel_.reset();
}

void add_rdma_engine(EngineCatalog& catalog, const std::string& agent_name, unsigned idle_sleep_us,
                     const std::vector<std::string>& allowed_devices) {
  // Discovered once per agent: the inventory reports these devices too.
  Discovery discovery = discover_devices();
  keep_allowed_devices(discovery, allowed_devices);
  auto& [devices, notes] = discovery;
  catalog.rdma_devices = std::move(devices);
  if (catalog.rdma_devices.empty()) {
    catalog.notes.push_back(notes.empty() ? "rdma engine: no RDMA device found"
                                          : "rdma engine: no RDMA device found (" + notes.front() + ")");
    return;
  }
  for (const auto& note : notes) catalog.notes.push_back("rdma engine: " + note);
  // Each Ethernet port's netdev, whose module and FEC the agent reads and whose LLDP neighbour lldpd
  // hears (the inventory carries both); an InfiniBand port has none.
  std::vector<KernelPort> kernel_ports;
  for (auto& device : catalog.rdma_devices) {
    for (auto& port : *device.mutable_ports()) {
      if (port.link_layer() != "Ethernet") continue;
      const PortNetdev netdev = find_port_netdev(device.name(), port.port_num());
      if (netdev.name.empty()) continue;
      for (const auto& gid : port.gids()) {  // the RoCE v2 GID's IPv4 address, as the flows use it
        if (gid.type() == "RoCE v2" && !gid.ip().empty() && gid.ip().find(':') == std::string::npos) {
          port.set_roce_ipv4(gid.ip());
          break;
        }
      }
      port.set_netdev(netdev.name);
      kernel_ports.push_back({fmt::format("{}/{}", device.name(), port.port_num()), port.netdev(), port.roce_ipv4()});
    }
  }
  // What one core checks of received messages, for `plan --inventory`: a millisecond or so.
  for (const std::size_t size : {std::size_t{4} << 10, std::size_t{64} << 10, std::size_t{256} << 10}) {
    if (const double ns = check_ns_per_byte(size); ns > 0) {
      auto& rate = *catalog.check_rates.add_rdma();
      rate.set_message_size(size);
      rate.set_bytes_per_s(1e9 / ns);
    }
  }
  catalog.engines["rdma"] = {[agent_name, idle_sleep_us, allowed_devices] {
                               return std::make_unique<RdmaEngine>(agent_name, idle_sleep_us, allowed_devices);
                             },
                             capped_bit_rate, std::move(kernel_ports)};
}

double capped_bit_rate(const proto::Plan& plan) {
  return resolve_rdma_plan(plan).rate_bps();
}

}  // namespace tusk::rdma
