#include "agent/rdma/rdma_engine.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "agent/rdma/port_state.hpp"
#include "agent/rdma/roce_udp_port.hpp"

#include "agent/latency_gauges.hpp"
#include "agent/rdma/message_format.hpp"
#include "agent/rdma/rdma_engine_internal.hpp"
#include "common/clock.hpp"

// The RDMA engine's datapath: one thread posts WRs, polls completions, checks messages, returns
// credits and replays training steps. No virtual call and no allocation per message.
namespace tusk::rdma {

namespace {

constexpr std::int64_t kDefaultStallNs = std::int64_t{rdma_limits::kDefaultStallTimeoutMs} * 1'000'000;
constexpr std::uint64_t kReceiveTag = std::uint64_t{1} << 63;  // wr_id of receive WRs
constexpr std::uint32_t kSignalCreditEvery = 16;
constexpr int kPollBatch = 32;
constexpr int kPostBatch = 16;

std::uint64_t unwrap32(std::uint64_t previous, std::uint32_t low) {
  return previous + static_cast<std::uint32_t>(low - static_cast<std::uint32_t>(previous));
}

}  // namespace

namespace detail {

std::string status_counter_name(int status) {
  switch (status) {
    case IBV_WC_RETRY_EXC_ERR:
      return "wc_transport_retries_exhausted";  // ACK timeouts ran out
    case IBV_WC_RNR_RETRY_EXC_ERR:
      return "wc_rnr_retries_exhausted";
    case IBV_WC_REM_ACCESS_ERR:
      return "wc_remote_access_error";
    case IBV_WC_REM_OP_ERR:
      return "wc_remote_operation_error";
    case IBV_WC_REM_INV_REQ_ERR:
      return "wc_remote_invalid_request";
    case IBV_WC_WR_FLUSH_ERR:
      return "wc_flushed";
    case IBV_WC_LOC_LEN_ERR:
      return "wc_local_length_error";
    case IBV_WC_LOC_PROT_ERR:
      return "wc_local_protection_error";
    case IBV_WC_LOC_QP_OP_ERR:
      return "wc_local_qp_operation_error";
    case IBV_WC_GENERAL_ERR:
      return "wc_general_error";
    default:
      return fmt::format("wc_status_{}", status);
  }
}

}  // namespace detail

void RdmaEngine::start(std::int64_t start_ns) {
  start_ns_ = start_ns;
  running_ = true;
  data_thread_ = std::thread([this] { datapath_loop(); });
  {
    std::lock_guard lock(mutex_);
    tracer_.reset();
    traced_.clear();
  }
  if (plan_.rdma().trace_rate() > 0) tracing_thread_ = std::thread([this] { start_tracing(); });
}

void RdmaEngine::start_tracing() {
  // QPs connect in the background, some after the start: trace once every sending QP's flow is
  // known (or has failed), or after a while with those that are.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(15);
  while (running_ && std::chrono::steady_clock::now() < deadline) {
    bool senders = false, all_known = true;
    {
      std::lock_guard lock(mutex_);
      for (const auto& connection : connections_) {
        if (connection->role != Connection::Role::Sender) continue;
        senders = true;
        if (!connection->flow_known.load(std::memory_order_acquire) && connection->state != Connection::State::Failed) {
          all_known = false;
        }
      }
    }
    if (senders && all_known) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!running_) return;
  std::vector<SocketFlow> flows;
  std::vector<const Connection*> traced;
  {
    std::lock_guard lock(mutex_);
    for (const auto& connection : connections_) {
      if (connection->role != Connection::Role::Sender || !connection->flow_known.load(std::memory_order_acquire))
        continue;
      flows.push_back({connection->flow_src, connection->flow_dst, connection->udp_source_port, kRoceUdpPort});
      traced.push_back(connection.get());
    }
  }
  if (flows.empty()) return;
  // The destination's NIC drops what it cannot parse and never answers: TTLs up to 6 cover a
  // three-tier fabric's five switches.
  // trace_rate is at most wire::kMaxTraceRate (resolve_rdma_plan).
  auto tracer = std::make_unique<SocketPathTracer>(flows, plan_.rdma().trace_rate(), 6);
  for (const auto& problem : tracer->problems()) emit(proto::AgentEvent::NOTICE, "path trace: " + problem);
  tracer->start();
  std::lock_guard lock(mutex_);
  tracer_ = std::move(tracer);
  traced_ = std::move(traced);
}

void RdmaEngine::on_completion_error(Connection& connection, const ibv_wc& completion) {
  // A broken flow's QP flushes what it had queued when it is torn down: the consequence of the
  // break, which was reported, not errors of their own.
  if (connection.state == Connection::State::Broken) return;
  // The QP is in the error state now: every WR still queued flushes.
  const std::string what = fmt::format("completion error '{}' ({})", ibv_wc_status_str(completion.status),
                                       detail::status_counter_name(completion.status));
  // Under reconnect, WRs that fail because this port is down (rxe cannot transmit; the port watch
  // has not polled yet) are the flap's, which is reported: the flow breaks without an error.
  if (reconnects() && read_port_active(connection.device, connection.port_num) == false) {
    break_flow(connection, proto::AgentEvent::NOTICE,
               fmt::format("port {}/{} is down: {}; reconnecting once it is up", connection.device, connection.port_num,
                           what));
    return;
  }
  connection.completion_errors.fetch_add(1, std::memory_order_relaxed);
  const std::size_t slot = std::min(static_cast<std::size_t>(completion.status), kCountedStatuses);
  connection.errors_by_status[slot].fetch_add(1, std::memory_order_relaxed);
  if (reconnects()) {
    break_flow(connection, proto::AgentEvent::ENGINE_FAULT, what + "; reconnecting");
    return;
  }
  auto established = Connection::State::Established;
  if (connection.state.compare_exchange_strong(established, Connection::State::Failed)) {
    emit(proto::AgentEvent::ENGINE_FAULT, fmt::format("{}: {}; flow stopped", detail::flow_name(connection), what),
         &connection);
  }
}

int RdmaEngine::reap_sender_completions(Connection& c, std::int64_t now) {
  ibv_wc completions[kPollBatch];
  const int got = ibv_poll_cq(c.cq.get(), kPollBatch, completions);
  for (int i = 0; i < got; ++i) {
    const ibv_wc& wc = completions[i];
    if (wc.status != IBV_WC_SUCCESS) {
      on_completion_error(c, wc);
      continue;
    }
    note_progress(c, now);
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
        if (plan_.rdma().data_check()) {
          verify(c, c.buffer.get() + (seq % c.slots) * c.message_size, c.message_size, seq % c.slots, seq);
        }
        c.bytes.fetch_add(c.message_size, std::memory_order_relaxed);
        c.messages.fetch_add(1, std::memory_order_relaxed);
      }
    }
    c.completed = done;
  }
  return got;
}

std::uint64_t RdmaEngine::send_allowance(Connection& c, std::int64_t now, double byte_budget) {
  const auto& test = plan_.rdma();
  if (c.joins_schedule && !test.collective().empty()) {
    // A successor of a broken flow: its replay goes on at the step the schedule is at now.
    c.joins_schedule = false;
    const std::int64_t period_ns = std::int64_t{test.step_period_ms()} * 1'000'000;
    c.step = static_cast<std::uint32_t>(std::clamp<std::int64_t>((now - start_ns_) / period_ns, 0, test.steps() - 1));
  }
  if (!test.collective().empty()) return step_allowance(c, now, byte_budget);
  if (byte_budget <= 0) return std::numeric_limits<std::uint64_t>::max();
  // A READ counts its bytes when they have arrived; the rest when posted.
  const double counted = static_cast<double>(operation_ == Operation::Read ? c.posted * c.message_size
                                                                           : c.bytes.load(std::memory_order_relaxed));
  std::uint64_t allowance = byte_budget > counted ? static_cast<std::uint64_t>(byte_budget - counted) : 0;
  return allowance - allowance % c.message_size;  // whole messages only
}

RdmaEngine::SendBatch RdmaEngine::post_sends(Connection& c, std::int64_t now, std::uint64_t allowance) {
  const auto& test = plan_.rdma();
  const bool credits = consumes_receives();
  ibv_send_wr wrs[kPostBatch];
  ibv_sge sges[kPostBatch];
  SendBatch batch;
  while (batch.built < kPostBatch && allowance > 0 && c.posted - c.completed < test.outstanding() &&
         (!credits || c.posted - c.credited < c.slots)) {
    std::uint64_t length = std::min<std::uint64_t>(c.message_size, allowance);
    if (!test.collective().empty() && test.data_check()) {
      // Every checked message must hold its header: never leave a step a tail shorter than that.
      const std::uint64_t remainder = step_target(c) - c.step_sent - batch.bytes;
      if (remainder > length && remainder - length < kMessageHeaderBytes) length = remainder - kMessageHeaderBytes;
      if (length < kMessageHeaderBytes && length < remainder) break;  // wait until the rate allows more
    }
    allowance -= length;
    batch.bytes += length;
    const std::uint64_t seq = c.posted++;
    const std::size_t slot = seq % c.slots;
    c.posted_ns[slot] = now;
    std::uint8_t* message = c.buffer.get() + slot * c.message_size;
    if (test.data_check() && operation_ != Operation::Read) {
      // A step's last message may be shorter: its CRC covers what is sent.
      const std::uint32_t crc = length == c.message_size ? c.payload_crc : payload_crc(message, length);
      write_message_header(message, {c.flow_id, seq, static_cast<std::uint32_t>(length), crc});
    }
    ibv_sge& sge = sges[batch.built];
    sge.addr = reinterpret_cast<std::uintptr_t>(message);
    sge.length = static_cast<std::uint32_t>(length);
    sge.lkey = c.mr->lkey;
    ibv_send_wr& wr = wrs[batch.built];
    wr = {};
    wr.wr_id = seq;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    switch (operation_) {
      case Operation::Write:
        wr.opcode = IBV_WR_RDMA_WRITE;
        break;
      case Operation::WriteImm:
        wr.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
        break;
      case Operation::Send:
        wr.opcode = IBV_WR_SEND_WITH_IMM;
        break;
      case Operation::Read:
        wr.opcode = IBV_WR_RDMA_READ;
        break;
    }
    wr.imm_data = htonl(static_cast<std::uint32_t>(seq));
    // The last write of a step is always signaled: its completion ends the step.
    const bool last_of_step = !test.collective().empty() && c.step_sent + batch.bytes >= step_target(c);
    if (last_of_step) c.step_last_seq = seq + 1;
    const bool signaled = (seq + 1) % test.signal_every() == 0 || last_of_step;
    const bool inline_data = operation_ != Operation::Read && length <= test.inline_threshold();
    wr.send_flags = (signaled ? IBV_SEND_SIGNALED : 0) | (inline_data ? IBV_SEND_INLINE : 0);
    wr.wr.rdma.remote_addr = c.remote_address + slot * c.message_size;
    wr.wr.rdma.rkey = c.remote_key;
    if (batch.built > 0) wrs[batch.built - 1].next = &wr;
    ++batch.built;
  }
  batch.posted = batch.built;
  if (batch.built == 0) return batch;
  ibv_send_wr* bad = nullptr;
  if (const int error = ibv_post_send(c.qp.get(), wrs, &bad); error != 0) {
    on_post_send_error(c, batch, wrs, bad, error);
  } else {
    c.post_refused = false;
  }
  return batch;
}

void RdmaEngine::on_post_send_error(Connection& c, SendBatch& batch, ibv_send_wr* wrs, ibv_send_wr* bad, int error) {
  // Count only what was posted; the rest is tried again.
  int posted = 0;
  for (ibv_send_wr* wr = wrs; wr != bad && wr != nullptr; wr = wr->next) ++posted;
  for (ibv_send_wr* wr = bad; wr != nullptr; wr = wr->next) batch.bytes -= wr->sg_list->length;
  c.posted -= static_cast<std::uint64_t>(batch.built - posted);
  if (c.step_last_seq > c.posted) c.step_last_seq = 0;  // the step's last write was not posted after all
  batch.posted = posted;
  c.post_refused = error == ENOMEM && posted == 0;
  if (error != ENOMEM && reconnects()) {
    break_flow(c, proto::AgentEvent::ENGINE_FAULT,
               fmt::format("ibv_post_send: {}; reconnecting", std::strerror(error)));
  } else if (auto established = Connection::State::Established;
             error != ENOMEM && c.state.compare_exchange_strong(established, Connection::State::Failed)) {
    emit(proto::AgentEvent::ENGINE_FAULT,
         fmt::format("flow to {} QP {} ({} qpn {}): ibv_post_send: {}; flow stopped", c.peer, c.flow_id, c.device,
                     c.qp_num.load(), std::strerror(error)),
         &c);
  }
}

bool RdmaEngine::serve_sender(Connection& c, std::int64_t now, bool may_send, double byte_budget) {
  const int got = reap_sender_completions(c, now);
  if (!may_send || c.state != Connection::State::Established) return got > 0;
  // Bytes this flow may still post now: a step's remainder once its compute phase is over, or
  // what the rate allows (unlimited when neither applies).
  const std::uint64_t allowance = send_allowance(c, now, byte_budget);
  // Nothing outstanding but an unsignaled tail, which never completes on its own: a post now
  // starts a wait.
  const bool idle = c.posted - c.completed < plan_.rdma().signal_every();
  const SendBatch batch = post_sends(c, now, allowance);
  if (batch.built == 0) return got > 0;
  // A flow that was idle (paced, between a replay's steps) waits from now, not from its last
  // completion: that pause is neither a stall nor downtime.
  if (batch.posted > 0 && (idle || c.last_progress_ns.load(std::memory_order_relaxed) == 0)) {
    c.last_progress_ns.store(now, std::memory_order_relaxed);
  }
  if (batch.posted > 0 && c.first_traffic_ns.load(std::memory_order_relaxed) == 0) {
    c.first_traffic_ns.store(now, std::memory_order_relaxed);
  }
  c.step_sent += batch.bytes;
  if (operation_ != Operation::Read) {
    c.bytes.fetch_add(batch.bytes, std::memory_order_relaxed);
    c.messages.fetch_add(static_cast<std::uint64_t>(batch.posted), std::memory_order_relaxed);
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
    const double allowed =
        rate_bytes_per_ns * static_cast<double>(now - c.step_comm_start_ns) - static_cast<double>(c.step_sent);
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
  // The sample is by count, so sender and receiver logs agree on which messages were checked.
  const std::uint32_t every = plan_.rdma().check_every();
  const bool payload = every <= 1 || count % every == 0;
  const auto check = check_message(message, length, c.flow_id, expected_seq, payload);
  if (payload && length >= kMessageHeaderBytes) {  // only the datapath thread adds
    c.payload_bytes_checked.store(c.payload_bytes_checked.load(std::memory_order_relaxed) + length,
                                  std::memory_order_relaxed);
  }
  if (check != MessageCheck::Ok && c.integrity_errors.fetch_add(1, std::memory_order_relaxed) == 0) {
    emit(proto::AgentEvent::ENGINE_FAULT,
         fmt::format("flow {} {} QP {}: message {} failed its check: {}",
                     c.role == Connection::Role::Sender ? "to" : "from", c.peer, c.flow_id, count, to_string(check)),
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
    note_progress(c, now);
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
    if (c.first_traffic_ns.load(std::memory_order_relaxed) == 0)
      c.first_traffic_ns.store(now, std::memory_order_relaxed);
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
  const std::int64_t stall_ns =
      test.stall_timeout_ms() > 0 ? std::int64_t{test.stall_timeout_ms()} * 1'000'000 : kDefaultStallNs;
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
        if (c->established_ns == 0 || c->retired.load(std::memory_order_relaxed)) continue;
        active.push_back(c.get());
      }
    }
    // Broken connections their successors replaced: let them go, so their resources can.
    const auto retiring = [](Connection* c) {
      if (!c->retire.load(std::memory_order_acquire)) return false;
      c->retired.store(true, std::memory_order_release);
      return true;
    };
    active.erase(std::remove_if(active.begin(), active.end(), retiring), active.end());
    senders = static_cast<std::size_t>(std::count_if(
        active.begin(), active.end(), [](const Connection* c) { return c->role == Connection::Role::Sender; }));
    const std::int64_t now = realtime_ns();
    const double elapsed_ns = static_cast<double>(now - start_ns_);
    // On/off bursts: the communication phase of a training step, then silence.
    const bool on = period_ns <= 0 || std::fmod(elapsed_ns, period_ns) < duty * period_ns;
    // Each sender's share of the agent's rate, in bytes allowed so far (0 = no limit).
    // Each sender's share of the agent's rate: bytes allowed so far, or for a collective bytes per
    // nanosecond of its communication phase (0 = no limit).
    const double share = rate > 0 && senders > 0 ? rate / 8.0 / static_cast<double>(senders) / 1e9 : 0;
    bool progress = false;
    for (Connection* c : active) {
      // A successor's budget counts from its establishment: the outage's bytes are not owed.
      // A QP the NIC paces gets no budget from the datapath.
      const double budget = c->hw_rate_kbps > 0         ? 0
                            : test.collective().empty() ? share * (elapsed_ns - static_cast<double>(c->paced_from_ns))
                                                        : share;
      progress |= c->role == Connection::Role::Sender ? serve_sender(*c, now, on, budget) : serve_receiver(*c, now);
      // A sender waits on its completions, or on credits when the receiver checks the data.
      const bool waiting =
          c->role == Connection::Role::Sender &&
          (c->posted > c->completed || (credits && c->posted - c->credited >= c->slots) || c->post_refused);
      const std::int64_t last_progress = c->last_progress_ns.load(std::memory_order_relaxed);
      if (waiting && c->state == Connection::State::Established && !c->stall_reported &&
          now - last_progress > stall_ns) {
        c->stall_reported = true;
        c->stalls.fetch_add(1, std::memory_order_relaxed);
        emit(proto::AgentEvent::ENGINE_FAULT,
             fmt::format("flow to {} QP {} ({} qpn {}): stalled, nothing completed for {} ms ({} WRs outstanding, "
                         "{} messages not yet credited by the receiver{})",
                         c->peer, c->flow_id, c->device, c->qp_num.load(), (now - last_progress) / 1'000'000,
                         c->posted - c->completed, c->posted - c->credited,
                         c->post_refused ? "; the send queue refuses new WRs (ENOMEM)" : ""),
             c);
      } else if (c->stall_reported && now - last_progress < stall_ns) {
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

}  // namespace tusk::rdma
