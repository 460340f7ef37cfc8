#include "agent/rdma/rdma_engine.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <poll.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "agent/latency_gauges.hpp"
#include "agent/rdma/discovery.hpp"
#include "agent/rdma/message_format.hpp"
#include "common/clock.hpp"
#include "common/counter_names.hpp"
#include "common/rdma_counter_names.hpp"

namespace tusk::rdma {

namespace {

constexpr std::uint16_t kDefaultCmPort = 7471;
constexpr int kResolveTimeoutMs = 2000;
constexpr std::int64_t kConnectDeadlineNs = 30'000'000'000;  // peers may still be preparing
constexpr std::int64_t kRetryDelayNs = 250'000'000;
constexpr std::int64_t kDefaultStallNs = 5'000'000'000;
constexpr std::uint64_t kReceiveTag = std::uint64_t{1} << 63;  // wr_id of receive WRs
constexpr std::uint32_t kSenderCreditReceives = 64;
constexpr std::uint32_t kReceiverSendQueue = 64;
constexpr std::uint32_t kSignalCreditEvery = 16;
constexpr int kPollBatch = 32;
constexpr int kPostBatch = 16;

// What a sender tells the acceptor in the connect request, and what the acceptor answers with.
struct ConnectRequestData {
  std::uint32_t flow_id;
  char sender[48];
};
struct AcceptData {
  std::uint64_t address;
  std::uint32_t key;
  std::uint32_t slots;
  std::uint32_t message_size;
};
static_assert(sizeof(ConnectRequestData) <= 56 && sizeof(AcceptData) <= 56, "RC private data is 56 bytes");

std::string status_counter_name(int status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR: return "wc_transport_retries_exhausted";  // ACK timeouts ran out
    case IBV_WC_RNR_RETRY_EXC_ERR: return "wc_rnr_retries_exhausted";
    case IBV_WC_REM_ACCESS_ERR: return "wc_remote_access_error";
    case IBV_WC_REM_OP_ERR: return "wc_remote_operation_error";
    case IBV_WC_REM_INV_REQ_ERR: return "wc_remote_invalid_request";
    case IBV_WC_WR_FLUSH_ERR: return "wc_flushed";
    case IBV_WC_LOC_LEN_ERR: return "wc_local_length_error";
    case IBV_WC_LOC_PROT_ERR: return "wc_local_protection_error";
    case IBV_WC_LOC_QP_OP_ERR: return "wc_local_qp_operation_error";
    case IBV_WC_GENERAL_ERR: return "wc_general_error";
    default: return fmt::format("wc_status_{}", status);
  }
}

std::uint64_t unwrap32(std::uint64_t previous, std::uint32_t low) {
  return previous + static_cast<std::uint32_t>(low - static_cast<std::uint32_t>(previous));
}

// RDMA READs a QP may have in flight, as initiator and as target: what the device allows, up to 16.
std::uint8_t read_depth(ibv_context* context) {
  ibv_device_attr attributes{};
  if (ibv_query_device(context, &attributes) != 0) return 1;
  return static_cast<std::uint8_t>(std::clamp(std::min(attributes.max_qp_init_rd_atom, attributes.max_qp_rd_atom), 1, 16));
}

std::uint32_t slots_for(const proto::RdmaTest& test) {
  return std::max<std::uint32_t>(2 * test.outstanding(), test.outstanding() + test.signal_every());
}

}  // namespace

void Connection::release_resources() noexcept {
  qp.reset();
  cq.reset();
  mr.reset();
  buffer.reset();
  pd.reset();
  id.reset();
}

// ---- prepare: validate, listen, start connecting ----------------------------------------------

void RdmaEngine::prepare(const proto::Plan& plan, EngineEventSink events) {
  if (!plan.has_rdma()) throw EngineError("plan has no rdma parameters");
  proto::RdmaTest test = plan.rdma();
  const std::string operation = test.operation().empty() ? "write" : test.operation();
  if (operation == "write") {
    // A checked WRITE tells the receiver about every message: it becomes a WRITE with immediate.
    operation_ = test.data_check() ? Operation::WriteImm : Operation::Write;
  } else if (operation == "write_imm") {
    operation_ = Operation::WriteImm;
  } else if (operation == "send") {
    operation_ = Operation::Send;
  } else if (operation == "read") {
    operation_ = Operation::Read;
  } else {
    throw EngineError(fmt::format("unknown RDMA operation '{}' (write, write_imm, send, read)", operation));
  }
  test.set_operation(operation);
  if (!test.collective().empty()) {
    if (operation_ == Operation::Read) {
      throw EngineError("a collective replay sends its bytes: use write, write_imm or send, not read");
    }
    if (test.steps() == 0 || test.step_period_ms() == 0) {
      throw EngineError(fmt::format("collective {} needs steps and a step period", test.collective()));
    }
  }
  if (test.message_sizes_size() > 0) throw EngineError("RDMA message size sweeps are not built yet; use message_size");
  if (test.message_size() < kMessageHeaderBytes && test.data_check()) {
    throw EngineError(fmt::format("message_size {} B cannot hold the {} B header the data check needs",
                                  test.message_size(), kMessageHeaderBytes));
  }
  if (test.outstanding() == 0) test.set_outstanding(16);
  if (test.qps_per_peer() == 0) test.set_qps_per_peer(1);
  test.set_signal_every(std::clamp<std::uint32_t>(test.signal_every(), 1, test.outstanding()));
  if (test.cm_port() == 0) test.set_cm_port(kDefaultCmPort);
  plan_ = plan;
  *plan_.mutable_rdma() = test;
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
    throw EngineError(fmt::format("rdma_cm: cannot listen on port {}: rdma_bind_addr: {}", test.cm_port(),
                                  std::strerror(errno)));
  }
  if (rdma_listen(listener_.get(), 64) != 0) {
    throw EngineError(fmt::format("rdma_cm: rdma_listen on port {}: {}", test.cm_port(), std::strerror(errno)));
  }

  for (const auto& peer : plan.peers()) {
    in_addr parsed{};
    if (inet_pton(AF_INET, peer.address().c_str(), &parsed) != 1) {
      throw EngineError(fmt::format("peer '{}' has no RDMA address (got '{}'): does it have a RoCE IPv4 GID?",
                                    peer.agent_name(), peer.address()));
    }
    for (std::uint32_t q = 0; q < test.qps_per_peer(); ++q) {
      auto connection = std::make_unique<Connection>();
      connection->role = Connection::Role::Sender;
      connection->peer = peer.agent_name();
      connection->address = peer.address();
      connection->flow_id = q;
      connections_.push_back(std::move(connection));
    }
  }
  for (auto& connection : connections_) begin_connect(*connection);
  cm_running_ = true;
  cm_thread_ = std::thread([this] { cm_loop(); });
}

void RdmaEngine::set_id_options(rdma_cm_id* id) {
  const auto& test = plan_.rdma();
  if (test.ack_timeout() > 0) {
    auto timeout = static_cast<std::uint8_t>(std::min<std::uint32_t>(test.ack_timeout(), 31));
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_ACK_TIMEOUT, &timeout, sizeof timeout) != 0) {
      emit(proto::AgentEvent::NOTICE, fmt::format("rdma_cm: cannot set ACK timeout {}: {}", test.ack_timeout(),
                                                  std::strerror(errno)));
    }
  }
  if (test.traffic_class() > 0) {
    auto tos = static_cast<std::uint8_t>(test.traffic_class());
    if (rdma_set_option(id, RDMA_OPTION_ID, RDMA_OPTION_ID_TOS, &tos, sizeof tos) != 0) {
      emit(proto::AgentEvent::NOTICE, fmt::format("rdma_cm: cannot set traffic class {}: {}", test.traffic_class(),
                                                  std::strerror(errno)));
    }
  }
}

void RdmaEngine::begin_connect(Connection& connection) {
  connection.release_resources();
  connection.state = Connection::State::Connecting;
  ++connection.attempts;
  connection.id = create_cm_id(channel_.get(), &connection, RDMA_PS_TCP);
  set_id_options(connection.id.get());
  sockaddr_in destination{};
  destination.sin_family = AF_INET;
  destination.sin_port = htons(static_cast<std::uint16_t>(plan_.rdma().cm_port()));
  inet_pton(AF_INET, connection.address.c_str(), &destination.sin_addr);
  if (rdma_resolve_addr(connection.id.get(), nullptr, reinterpret_cast<sockaddr*>(&destination), kResolveTimeoutMs) !=
      0) {
    retry_or_fail(connection, fmt::format("rdma_resolve_addr({}): {}", connection.address, std::strerror(errno)));
  }
}

void RdmaEngine::retry_or_fail(Connection& connection, const std::string& why) {
  if (realtime_ns() - prepared_ns_ < kConnectDeadlineNs && cm_running_.load()) {
    connection.state = Connection::State::RetryWait;  // resources are released after the event is acked
    connection.retry_at_ns = realtime_ns() + kRetryDelayNs;
    return;
  }
  connection.state = Connection::State::Failed;
  emit(proto::AgentEvent::ENGINE_FAULT, fmt::format("flow to {} ({}) QP {}: cannot connect after {} attempts: {}",
                                                    connection.peer, connection.address, connection.flow_id,
                                                    connection.attempts, why),
       &connection);
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
    for (std::uint32_t s = 0; s < slots; ++s) {
      std::uint8_t* message = connection.buffer.get() + std::size_t{s} * connection.message_size;
      connection.payload_crc = fill_message_payload(message, connection.message_size);
      if (operation_ == Operation::Read) {
        write_message_header(message, {connection.flow_id, s, connection.message_size, connection.payload_crc});
      }
    }
  }
  const int access = !receiver                      ? IBV_ACCESS_LOCAL_WRITE
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

void RdmaEngine::on_route_resolved(Connection& connection) {
  // rdma_cm picks the device from the route to the peer's address; a profile that names a device
  // must get that one, or the test would load a NIC nobody asked for.
  const std::string device = ibv_get_device_name(connection.id->verbs->device);
  if (!plan_.rdma().device().empty() && device != plan_.rdma().device()) {
    connection.state = Connection::State::Failed;
    emit(proto::AgentEvent::ENGINE_FAULT,
         fmt::format("flow to {} QP {}: the route to {} goes through {}, not the profile's device {}", connection.peer,
                     connection.flow_id, connection.address, device, plan_.rdma().device()),
         &connection);
    return;
  }
  build_resources(connection, connection.id.get(), slots_for(plan_.rdma()), false);
  ConnectRequestData request{};
  request.flow_id = connection.flow_id;
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
  auto connection = std::make_unique<Connection>();
  connection->role = Connection::Role::Receiver;
  ConnectRequestData request{};
  std::memcpy(&request, event.param.conn.private_data,
              std::min<std::size_t>(sizeof request, event.param.conn.private_data_len));
  request.sender[sizeof(request.sender) - 1] = '\0';
  connection->peer = request.sender;
  connection->flow_id = request.flow_id;
  connection->id.reset(event.id);
  event.id->context = connection.get();
  try {
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
    emit(proto::AgentEvent::ENGINE_FAULT, fmt::format("flow from {} QP {}: {}", connection->peer, connection->flow_id, e.what()),
         connection.get());
    rdma_reject(event.id, nullptr, 0);
    connection->state = Connection::State::Failed;
    // The id goes with the other connections at stop(), after this event has been acked.
  }
  std::lock_guard lock(mutex_);
  connections_.push_back(std::move(connection));
}

void RdmaEngine::note_path_mtu(Connection& connection) {
  ibv_qp_attr attributes{};
  ibv_qp_init_attr init{};
  if (ibv_query_qp(connection.qp.get(), &attributes, IBV_QP_PATH_MTU, &init) != 0) return;
  connection.path_mtu = static_cast<std::uint32_t>(128) << attributes.path_mtu;  // IBV_MTU_256 is 1
  // rdma_cm sets the path MTU from the port's active MTU; a profile asking for another is told.
  if (const auto wanted = plan_.rdma().path_mtu(); wanted != 0 && wanted != connection.path_mtu) {
    emit(proto::AgentEvent::NOTICE, fmt::format("flow {} {} QP {}: path MTU is {} (rdma_cm's, from {} port {}), not the "
                                                "profile's {}", connection.role == Connection::Role::Sender ? "to" : "from",
                                                connection.peer, connection.flow_id, connection.path_mtu.load(),
                                                connection.device, connection.port_num, wanted),
         &connection);
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
  if (!known) {
    try {
      port.reader = std::make_unique<PortCounterReader>(connection.device, connection.port_num);
      port.baseline = port.reader->read();
    } catch (const std::exception& e) {
      emit(proto::AgentEvent::NOTICE, fmt::format("NIC counters of {} unavailable: {}", key, e.what()));
    }
  }
  std::lock_guard lock(mutex_);
  const auto it = nic_ports_.try_emplace(key, std::move(port)).first;
  if (std::find(it->second.peers.begin(), it->second.peers.end(), connection.peer) == it->second.peers.end()) {
    it->second.peers.push_back(connection.peer);
  }
}

void RdmaEngine::handle_cm_event(rdma_cm_event& event) {
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
        if (rdma_resolve_route(event.id, kResolveTimeoutMs) != 0) {
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
        connection->established_ns = realtime_ns();
        note_path_mtu(*connection);
        note_nic_port(*connection);
        connection->state = Connection::State::Established;
        connections_version_.fetch_add(1, std::memory_order_release);
        spdlog::info("RDMA {} {} QP {} ({} port {}, qpn {}) established", connection->role == Connection::Role::Sender ? "flow to" : "flow from",
                     connection->peer, connection->flow_id, connection->device, connection->port_num, connection->qp_num.load());
        if (start_ns_ > 0 && connection->established_ns > start_ns_) {
          emit(proto::AgentEvent::NOTICE, fmt::format("flow {} {} QP {} connected {} ms after the start",
                                                      connection->role == Connection::Role::Sender ? "to" : "from",
                                                      connection->peer, connection->flow_id,
                                                      (connection->established_ns.load() - start_ns_) / 1'000'000),
               connection);
        }
        break;
      case RDMA_CM_EVENT_ADDR_ERROR:
      case RDMA_CM_EVENT_ROUTE_ERROR:
      case RDMA_CM_EVENT_CONNECT_ERROR:
      case RDMA_CM_EVENT_UNREACHABLE:
      case RDMA_CM_EVENT_REJECTED:
        if (connection->role == Connection::Role::Sender && connection->state != Connection::State::Established) {
          retry_or_fail(*connection, fmt::format("{} (status {})", what, event.status));
        }
        break;
      case RDMA_CM_EVENT_DISCONNECTED:
        if (connection->state == Connection::State::Established && running_) {
          emit(proto::AgentEvent::ENGINE_FAULT, fmt::format("flow {} {} QP {}: peer disconnected",
                                                            connection->role == Connection::Role::Sender ? "to" : "from",
                                                            connection->peer, connection->flow_id),
               connection);
        }
        connection->state = Connection::State::Closed;
        break;
      default:
        break;
    }
  } catch (const std::exception& e) {
    retry_or_fail(*connection, e.what());
  }
}

void RdmaEngine::cm_loop() {
  while (cm_running_) {
    pollfd descriptor{channel_->fd, POLLIN, 0};
    if (poll(&descriptor, 1, 50) > 0) {
      rdma_cm_event* raw = nullptr;
      while (rdma_get_cm_event(channel_.get(), &raw) == 0) {
        CmEvent event(raw);  // acked when this scope ends, before any id it names is destroyed
        handle_cm_event(*event);
      }
    }
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

// ---- datapath ---------------------------------------------------------------------------------

void RdmaEngine::start(std::int64_t start_ns) {
  start_ns_ = start_ns;
  running_ = true;
  data_thread_ = std::thread([this] { datapath_loop(); });
}

void RdmaEngine::emit(proto::AgentEvent::Kind kind, const std::string& message, const Connection* connection) {
  spdlog::warn("{}", message);
  if (events_) events_(kind, message, connection ? stream_id(*connection) : std::string());
}

std::string RdmaEngine::stream_id(const Connection& connection) const {
  const bool sender = connection.role == Connection::Role::Sender;
  const bool reads = operation_ == Operation::Read;
  return fmt::format("{}:{}/qp{}", stream_kind(sender, reads), connection.peer, connection.flow_id);
}

void RdmaEngine::on_completion_error(Connection& connection, const ibv_wc& completion) {
  connection.completion_errors.fetch_add(1, std::memory_order_relaxed);
  const std::size_t slot = std::min(static_cast<std::size_t>(completion.status), kCountedStatuses);
  connection.errors_by_status[slot].fetch_add(1, std::memory_order_relaxed);
  if (connection.state == Connection::State::Established) {
    // The QP is in the error state now: every WR still queued flushes. Policy: stop this flow.
    connection.state = Connection::State::Failed;
    emit(proto::AgentEvent::ENGINE_FAULT,
         fmt::format("flow {} {} QP {} ({} qpn {}): completion error '{}' ({}); flow stopped",
                     connection.role == Connection::Role::Sender ? "to" : "from", connection.peer, connection.flow_id,
                     connection.device, connection.qp_num.load(), ibv_wc_status_str(completion.status),
                     status_counter_name(completion.status)),
         &connection);
  }
}

bool RdmaEngine::serve_sender(Connection& c, std::int64_t now, bool may_send, double byte_budget) {
  const auto& test = plan_.rdma();
  ibv_wc completions[kPollBatch];
  const int got = ibv_poll_cq(c.cq.get(), kPollBatch, completions);
  for (int i = 0; i < got; ++i) {
    const ibv_wc& wc = completions[i];
    if (wc.status != IBV_WC_SUCCESS) {
      on_completion_error(c, wc);
      continue;
    }
    c.last_progress_ns = now;
    if (wc.wr_id & kReceiveTag) {  // a credit: the receiver has checked this many messages
      c.credited = unwrap32(c.credited, ntohl(wc.imm_data));
      post_receive(c, static_cast<std::uint32_t>(wc.wr_id & ~kReceiveTag));
      continue;
    }
    // RC completes in order: everything before a signaled WR is done. READs are checked here, where
    // their data has landed.
    const std::uint64_t done = wc.wr_id + 1;
    c.completion_latency.record_clamped(now - c.posted_ns[wc.wr_id % c.slots]);
    if (c.step_last_seq != 0 && done >= c.step_last_seq) {  // the step's last write has landed
      record_step(c, now);
    }
    if (operation_ == Operation::Read) {
      for (std::uint64_t seq = c.completed; seq < done; ++seq) {
        if (test.data_check()) verify(c, c.buffer.get() + (seq % c.slots) * c.message_size, c.message_size, seq % c.slots, seq);
        c.bytes.fetch_add(c.message_size, std::memory_order_relaxed);
        c.messages.fetch_add(1, std::memory_order_relaxed);
      }
    }
    c.completed = done;
  }
  if (!may_send || c.state != Connection::State::Established) return got > 0;
  // Bytes this flow may still post now: a step's remainder once its compute phase is over, or
  // what the rate allows (unlimited when neither applies).
  std::uint64_t allowance = std::numeric_limits<std::uint64_t>::max();
  if (!test.collective().empty()) {
    allowance = step_allowance(c, now, byte_budget);
  } else if (byte_budget > 0) {
    // A READ counts its bytes when they have arrived; the rest when posted.
    const double counted = static_cast<double>(operation_ == Operation::Read ? c.posted * c.message_size
                                                                             : c.bytes.load(std::memory_order_relaxed));
    allowance = byte_budget > counted ? static_cast<std::uint64_t>(byte_budget - counted) : 0;
    allowance -= allowance % c.message_size;  // whole messages only
  }
  const bool credits = consumes_receives();
  ibv_send_wr wrs[kPostBatch];
  ibv_sge sges[kPostBatch];
  int count = 0;
  std::uint64_t posted_bytes = 0;
  while (count < kPostBatch && allowance > 0 && c.posted - c.completed < test.outstanding() &&
         (!credits || c.posted - c.credited < c.slots)) {
    std::uint64_t length = std::min<std::uint64_t>(c.message_size, allowance);
    if (!test.collective().empty() && test.data_check()) {
      // Every checked message must hold its header: never leave a step a tail shorter than that.
      const std::uint64_t remainder = step_target(c) - c.step_sent - posted_bytes;
      if (remainder > length && remainder - length < kMessageHeaderBytes) length = remainder - kMessageHeaderBytes;
      if (length < kMessageHeaderBytes && length < remainder) break;  // wait until the rate allows more
    }
    allowance -= length;
    posted_bytes += length;
    const std::uint64_t seq = c.posted++;
    const std::size_t slot = seq % c.slots;
    c.posted_ns[slot] = now;
    std::uint8_t* message = c.buffer.get() + slot * c.message_size;
    if (test.data_check() && operation_ != Operation::Read) {
      // A step's last message may be shorter: its CRC covers what is sent.
      const std::uint32_t crc = length == c.message_size ? c.payload_crc : payload_crc(message, length);
      write_message_header(message, {c.flow_id, seq, static_cast<std::uint32_t>(length), crc});
    }
    ibv_sge& sge = sges[count];
    sge.addr = reinterpret_cast<std::uintptr_t>(message);
    sge.length = static_cast<std::uint32_t>(length);
    sge.lkey = c.mr->lkey;
    ibv_send_wr& wr = wrs[count];
    wr = {};
    wr.wr_id = seq;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    switch (operation_) {
      case Operation::Write: wr.opcode = IBV_WR_RDMA_WRITE; break;
      case Operation::WriteImm: wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM; break;
      case Operation::Send: wr.opcode = IBV_WR_SEND_WITH_IMM; break;
      case Operation::Read: wr.opcode = IBV_WR_RDMA_READ; break;
    }
    wr.imm_data = htonl(static_cast<std::uint32_t>(seq));
    // The last write of a step is always signaled: its completion ends the step.
    const bool last_of_step = !test.collective().empty() && c.step_sent + posted_bytes >= step_target(c);
    if (last_of_step) c.step_last_seq = seq + 1;
    const bool signaled = (seq + 1) % test.signal_every() == 0 || last_of_step;
    const bool inline_data = operation_ != Operation::Read && length <= test.inline_threshold();
    wr.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (inline_data ? IBV_SEND_INLINE : 0);
    wr.wr.rdma.remote_addr = c.remote_address + slot * c.message_size;
    wr.wr.rdma.rkey = c.remote_key;
    if (count > 0) wrs[count - 1].next = &wr;
    ++count;
  }
  if (count == 0) return got > 0;
  ibv_send_wr* bad = nullptr;
  if (const int error = ibv_post_send(c.qp.get(), wrs, &bad); error != 0) {
    // Count only what was posted; the rest is tried again.
    int posted = 0;
    for (ibv_send_wr* wr = wrs; wr != bad && wr != nullptr; wr = wr->next) ++posted;
    for (ibv_send_wr* wr = bad; wr != nullptr; wr = wr->next) posted_bytes -= wr->sg_list->length;
    c.posted -= static_cast<std::uint64_t>(count - posted);
    if (c.step_last_seq > c.posted) c.step_last_seq = 0;  // the step's last write was not posted after all
    count = posted;
    if (error != ENOMEM) {
      c.state = Connection::State::Failed;
      emit(proto::AgentEvent::ENGINE_FAULT, fmt::format("flow to {} QP {} ({} qpn {}): ibv_post_send: {}; flow stopped",
                                                        c.peer, c.flow_id, c.device, c.qp_num.load(), std::strerror(error)),
           &c);
    }
  }
  if (c.last_progress_ns == 0) c.last_progress_ns = now;
  c.step_sent += posted_bytes;
  if (operation_ != Operation::Read) {
    c.bytes.fetch_add(posted_bytes, std::memory_order_relaxed);
    c.messages.fetch_add(static_cast<std::uint64_t>(count), std::memory_order_relaxed);
  }
  return true;
}

std::uint64_t RdmaEngine::step_target(const Connection& c) const {
  // The peer's bytes spread over its QPs; the last QP takes the remainder.
  const auto& test = plan_.rdma();
  const std::uint64_t share = test.peer_bytes_per_step() / test.qps_per_peer();
  return c.flow_id + 1 == test.qps_per_peer() ? test.peer_bytes_per_step() - share * (test.qps_per_peer() - 1) : share;
}

std::uint64_t RdmaEngine::step_allowance(Connection& c, std::int64_t now, double rate_bytes_per_ns) {
  const auto& test = plan_.rdma();
  if (c.step_sent >= step_target(c)) {
    // This step is posted; the next one starts at its scheduled time, or now if this one overran.
    if (c.step_last_seq != 0) return 0;  // still waiting for the step's last completion
    if (c.step + 1 >= test.steps()) return 0;
    ++c.step;
    c.step_sent = 0;
  }
  const std::int64_t comm_start = start_ns_ + static_cast<std::int64_t>(c.step) * test.step_period_ms() * 1'000'000 +
                                  std::int64_t{test.compute_ms()} * 1'000'000;
  if (now < comm_start) return 0;
  if (c.step_comm_start_ns == 0) c.step_comm_start_ns = comm_start;
  std::uint64_t remaining = step_target(c) - c.step_sent;
  if (rate_bytes_per_ns > 0) {  // a set rate applies from the start of the communication phase
    const double allowed = rate_bytes_per_ns * static_cast<double>(now - c.step_comm_start_ns) - static_cast<double>(c.step_sent);
    remaining = std::min<std::uint64_t>(remaining, allowed > 0 ? static_cast<std::uint64_t>(allowed) : 0);
  }
  return remaining;
}

void RdmaEngine::record_step(Connection& c, std::int64_t now) {
  const std::int64_t took = now - c.step_comm_start_ns;
  c.step_last_seq = 0;
  c.step_comm_start_ns = 0;
  c.steps_done.fetch_add(1, std::memory_order_relaxed);
  c.step_time_sum_ns.fetch_add(static_cast<std::uint64_t>(std::max<std::int64_t>(took, 0)), std::memory_order_relaxed);
  if (static_cast<std::uint64_t>(took) > c.step_time_max_ns.load(std::memory_order_relaxed)) {
    c.step_time_max_ns.store(static_cast<std::uint64_t>(took), std::memory_order_relaxed);
  }
}


void RdmaEngine::verify(Connection& c, const std::uint8_t* message, std::size_t length, std::uint64_t expected_seq,
                        std::uint64_t count) {
  const auto check = check_message(message, length, c.flow_id, expected_seq);
  if (check != MessageCheck::Ok && c.integrity_errors.fetch_add(1, std::memory_order_relaxed) == 0) {
    emit(proto::AgentEvent::ENGINE_FAULT, fmt::format("flow {} {} QP {}: message {} failed its check: {}",
                                                      c.role == Connection::Role::Sender ? "to" : "from", c.peer,
                                                      c.flow_id, count, to_string(check)),
         &c);
  }
}

bool RdmaEngine::post_receive(Connection& c, std::uint32_t slot) {
  ibv_sge sge{};
  ibv_recv_wr wr{};
  ibv_recv_wr* bad = nullptr;
  wr.wr_id = kReceiveTag | slot;
  if (operation_ == Operation::Send && c.role == Connection::Role::Receiver) {
    sge.addr = reinterpret_cast<std::uintptr_t>(c.buffer.get() + std::size_t{slot} * c.message_size);
    sge.length = c.message_size;
    sge.lkey = c.mr->lkey;
    wr.sg_list = &sge;
    wr.num_sge = 1;
  }
  return ibv_post_recv(c.qp.get(), &wr, &bad) == 0;
}

bool RdmaEngine::consumes_receives() const {
  return operation_ == Operation::WriteImm || operation_ == Operation::Send;
}

bool RdmaEngine::serve_receiver(Connection& c, std::int64_t now) {
  ibv_wc completions[kPollBatch];
  const int got = ibv_poll_cq(c.cq.get(), kPollBatch, completions);
  for (int i = 0; i < got; ++i) {
    const ibv_wc& wc = completions[i];
    if (wc.status != IBV_WC_SUCCESS) {
      on_completion_error(c, wc);
      continue;
    }
    if (!(wc.wr_id & kReceiveTag)) continue;  // one of our credit SENDs completed
    c.last_progress_ns = now;
    const std::uint64_t seq = c.verified;
    const auto slot = static_cast<std::uint32_t>(wc.wr_id & ~kReceiveTag);
    if (plan_.rdma().data_check()) {
      // A WRITE landed where its sequence number puts it; a SEND where its receive WR pointed.
      const std::size_t at = operation_ == Operation::Send ? slot : seq % c.slots;
      if (ntohl(wc.imm_data) != static_cast<std::uint32_t>(seq)) {
        verify(c, nullptr, 0, seq, seq);  // out of order: counted as an integrity error
      } else {
        verify(c, c.buffer.get() + at * c.message_size, wc.byte_len, seq, seq);
      }
    }
    ++c.verified;
    c.bytes.fetch_add(wc.byte_len, std::memory_order_relaxed);
    c.messages.fetch_add(1, std::memory_order_relaxed);
    post_receive(c, slot);
  }
  // Credits go back in batches: a quarter of the slots at a time.
  const std::uint64_t batch = std::max<std::uint64_t>(1, c.slots / 4);
  if (c.state == Connection::State::Established && c.verified - c.credits_sent >= batch) {
    ibv_send_wr wr{};
    ibv_send_wr* bad = nullptr;
    wr.wr_id = c.credit_sends;
    wr.opcode = IBV_WR_SEND_WITH_IMM;
    wr.imm_data = htonl(static_cast<std::uint32_t>(c.verified));
    wr.send_flags = (c.credit_sends + 1) % kSignalCreditEvery == 0 ? IBV_SEND_SIGNALED : 0;
    if (ibv_post_send(c.qp.get(), &wr, &bad) == 0) {
      c.credits_sent = c.verified;
      ++c.credit_sends;
    }
  }
  return got > 0;
}

void RdmaEngine::datapath_loop() {
  const auto& test = plan_.rdma();
  while (running_ && realtime_ns() < start_ns_) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const std::int64_t stall_ns = test.stall_timeout_ms() > 0 ? std::int64_t{test.stall_timeout_ms()} * 1'000'000 : kDefaultStallNs;
  std::vector<Connection*> active;
  unsigned seen_version = ~0u;
  std::size_t senders = 0;
  const double rate = test.rate_bps();
  const double period_ns = test.burst_period_ms() * 1e6;
  const double duty = test.burst_duty() > 0 ? test.burst_duty() : 1.0;
  const bool credits = consumes_receives();
  std::int64_t last_publish_ns = 0;
  const auto publish_latency = [&] {
    for (Connection* c : active) c->latency.publish(c->completion_latency.summary());
  };
  while (running_) {
    if (const unsigned version = connections_version_.load(std::memory_order_acquire); version != seen_version) {
      // A connection came up (accepted ones appear during the run): take the list again.
      std::lock_guard lock(mutex_);
      seen_version = version;
      active.clear();
      senders = 0;
      for (auto& c : connections_) {
        if (c->established_ns == 0) continue;
        active.push_back(c.get());
        senders += c->role == Connection::Role::Sender;
      }
    }
    const std::int64_t now = realtime_ns();
    const double elapsed_ns = static_cast<double>(now - start_ns_);
    // On/off bursts: the communication phase of a training step, then silence.
    const bool on = period_ns <= 0 || std::fmod(elapsed_ns, period_ns) < duty * period_ns;
    // Each sender's share of the agent's rate, in bytes allowed so far (0 = no limit).
    // Each sender's share of the agent's rate: bytes allowed so far, or for a collective bytes per
    // nanosecond of its communication phase (0 = no limit).
    const double share = rate > 0 && senders > 0 ? rate / 8.0 / static_cast<double>(senders) / 1e9 : 0;
    const double budget = test.collective().empty() ? share * elapsed_ns : share;
    bool progress = false;
    for (Connection* c : active) {
      progress |= c->role == Connection::Role::Sender ? serve_sender(*c, now, on, budget) : serve_receiver(*c, now);
      // A sender waits on its completions, or on credits when the receiver checks the data.
      const bool waiting = c->role == Connection::Role::Sender &&
                           (c->posted > c->completed || (credits && c->posted - c->credited >= c->slots));
      if (waiting && c->state == Connection::State::Established && !c->stall_reported &&
          now - c->last_progress_ns > stall_ns) {
        c->stall_reported = true;
        c->stalls.fetch_add(1, std::memory_order_relaxed);
        emit(proto::AgentEvent::ENGINE_FAULT,
             fmt::format("flow to {} QP {} ({} qpn {}): stalled, nothing completed for {} ms ({} WRs outstanding, "
                         "{} messages not yet credited by the receiver)",
                         c->peer, c->flow_id, c->device, c->qp_num.load(), (now - c->last_progress_ns) / 1'000'000,
                         c->posted - c->completed, c->posted - c->credited),
             c);
      } else if (c->stall_reported && now - c->last_progress_ns < stall_ns) {
        c->stall_reported = false;
        emit(proto::AgentEvent::NOTICE, fmt::format("flow to {} QP {}: completions resumed", c->peer, c->flow_id), c);
      }
    }
    if (now - last_publish_ns >= 100'000'000) {
      publish_latency();
      last_publish_ns = now;
    }
    // Plain WRITEs and READs complete nothing on the target's side: a host that is only a target
    // has nothing to poll for but errors, and must leave the CPU to the NIC (or rxe's kernel work).
    if (active.empty() || (senders == 0 && !credits)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    } else if (!progress && idle_sleep_us_ > 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(idle_sleep_us_));
    }
  }
  publish_latency();  // stop() joins this thread before the final sample: that one is exact
}

// ---- sample and stop --------------------------------------------------------------------------

std::vector<proto::StreamCounters> RdmaEngine::sample() {
  namespace c = counters;
  std::vector<proto::StreamCounters> out;
  // What the NIC ports' streams need, copied under the lock; their sysfs reads happen after it,
  // so a slow read never holds up the CM thread or the datapath's list of connections. A port's
  // reader and baseline never change once its entry exists, and map entries are never removed.
  struct NicPortView {
    std::string key;
    PortCounterReader* reader;
    const PortCounterSnapshot* baseline;
    std::vector<std::string> peers;
  };
  std::vector<NicPortView> nic_ports;
  std::unique_lock lock(mutex_);
  for (auto& [key, port] : nic_ports_) {
    if (port.reader) nic_ports.push_back({key, port.reader.get(), &port.baseline, port.peers});
  }
  for (const auto& connection : connections_) {
    const bool sender = connection->role == Connection::Role::Sender;
    proto::StreamCounters stream;
    stream.set_peer(connection->peer);
    // The initiator's QP is a "flow" (a "read" when it pulls the data and checks it itself); the
    // target's a "sink", or for READs a "source" with nothing to count but errors.
    const bool reads = operation_ == Operation::Read;
    const bool receives_data = sender == reads;
    stream.set_stream_id(stream_id(*connection));
    stream.set_kind(stream_kind(sender, reads));
    auto& map = *stream.mutable_counters();
    map[std::string(receives_data ? c::kRxBytes : c::kTxBytes)] = connection->bytes.load(std::memory_order_relaxed);
    map[receives_data ? "rx_messages" : "tx_messages"] = connection->messages.load(std::memory_order_relaxed);
    map[std::string(c::kCompletionErrors)] = connection->completion_errors.load(std::memory_order_relaxed);
    if (receives_data && plan_.rdma().data_check()) {
      map[std::string(c::kIntegrityErrors)] = connection->integrity_errors.load(std::memory_order_relaxed);
    }
    map[std::string(c::kStalls)] = connection->stalls.load(std::memory_order_relaxed);
    (*stream.mutable_gauges())["connected"] =
        connection->established_ns > 0 && connection->state != Connection::State::Failed ? 1 : 0;
    for (std::size_t s = 0; s <= kCountedStatuses; ++s) {
      if (const auto n = connection->errors_by_status[s].load(std::memory_order_relaxed); n > 0) {
        map[s < kCountedStatuses ? status_counter_name(static_cast<int>(s)) : "wc_other"] = n;
      }
    }
    put_latency_gauges(connection->latency.read(), stream);
    if (sender && !plan_.rdma().collective().empty()) {
      const auto steps = connection->steps_done.load(std::memory_order_relaxed);
      map["steps_done"] = steps;
      if (steps > 0) {
        (*stream.mutable_gauges())["step_time_mean_ns"] =
            static_cast<double>(connection->step_time_sum_ns.load(std::memory_order_relaxed)) / static_cast<double>(steps);
        (*stream.mutable_gauges())["step_time_max_ns"] =
            static_cast<double>(connection->step_time_max_ns.load(std::memory_order_relaxed));
      }
    }
    (*stream.mutable_gauges())["qp_num"] = connection->qp_num.load();
    (*stream.mutable_gauges())["path_mtu"] = connection->path_mtu.load();
    out.push_back(std::move(stream));
  }
  lock.unlock();
  for (const auto& port : nic_ports) {
    const auto delta = counter_delta(*port.baseline, port.reader->read());
    proto::StreamCounters stream;
    stream.set_stream_id("nic:" + port.key);
    stream.set_kind("nic");
    std::string peers;
    for (const auto& peer : port.peers) peers += (peers.empty() ? "" : ",") + peer;
    stream.set_peer(peers);
    auto& map = *stream.mutable_counters();
    for (const auto& [name, value] : delta.values) map[name] = value;
    // One number for "the transport had to send again": ACK timeouts and sequence-error NAKs.
    std::uint64_t retransmits = 0;
    for (auto name : {counters::rdma::kLocalAckTimeoutErr, counters::rdma::kPacketSeqErr, counters::rdma::kRoceAdpRetrans}) {
      if (auto it = delta.values.find(name); it != delta.values.end()) retransmits += it->second;
    }
    map[std::string(c::kRetransmits)] = retransmits;
    if (auto it = delta.values.find(counters::rdma::kLinkDowned); it != delta.values.end()) {
      map[std::string(c::kLinkFlaps)] = it->second;
    }
    out.push_back(std::move(stream));
  }
  return out;
}

void RdmaEngine::stop() noexcept {
  if (running_.exchange(false) && data_thread_.joinable()) data_thread_.join();
  if (cm_running_.exchange(false) && cm_thread_.joinable()) cm_thread_.join();
  std::lock_guard lock(mutex_);
  for (auto& connection : connections_) {
    if (connection->id && connection->state == Connection::State::Established) rdma_disconnect(connection->id.get());
  }
  // The connections' counters stay for the final sample(); only their verbs resources go.
  for (auto& connection : connections_) connection->release_resources();
  listener_.reset();
  channel_.reset();
}

void add_rdma_engine(EngineCatalog& catalog, const std::string& agent_name, unsigned idle_sleep_us) {
  std::vector<std::string> notes;
  const auto devices = discover_devices(notes);
  if (devices.empty()) {
    catalog.notes.push_back(notes.empty() ? "rdma engine: no RDMA device found" : "rdma engine: no RDMA device found (" + notes.front() + ")");
    return;
  }
  catalog.factories["rdma"] = [agent_name, idle_sleep_us] {
    return std::make_unique<RdmaEngine>(agent_name, idle_sleep_us);
  };
}

}  // namespace tusk::rdma
