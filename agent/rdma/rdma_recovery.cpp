#include <fmt/format.h>
#include <rdma/rdma_cma.h>

#include <algorithm>
#include <limits>

#include "agent/rdma/port_state.hpp"
#include "agent/rdma/rdma_engine.hpp"
#include "agent/rdma/rdma_engine_internal.hpp"
#include "common/clock.hpp"

// The RDMA engine's ports and broken flows: a used port's changes (link events, and under
// `recovery: reconnect` the flows it carried broken when it goes down), and, on the CM thread, a
// broken flow's successor QP connected once its port is up again.
namespace tusk::rdma {

namespace {

// A successor's first retry after a failed connect: its link has just come back, and the
// addresses and GIDs on it may take a moment; it backs off to the first connect's 250 ms.
constexpr std::int64_t kFirstReconnectRetryNs = 20'000'000;

// Where a broken connection's flow stopped carrying: its last progress, or, for a successor that
// never carried anything, where the outage it was to end began.
std::int64_t outage_start(const Connection& broken) {
  if (const std::int64_t since = broken.outage_since_ns.load(); since != 0) return since;
  if (const std::int64_t progress = broken.broken_progress_ns.load(); progress != 0) return progress;
  const std::int64_t progress = broken.last_progress_ns.load(std::memory_order_relaxed);
  return progress != 0 ? progress : broken.established_ns.load();
}

}  // namespace

bool RdmaEngine::break_flow(Connection& c, proto::AgentEvent::Kind kind, const std::string& why) {
  auto expected = Connection::State::Established;
  if (!c.state.compare_exchange_strong(expected, Connection::State::Broken)) return false;
  const std::int64_t progress = c.last_progress_ns.load(std::memory_order_relaxed);
  c.broken_progress_ns.store(progress != 0 ? progress : c.established_ns.load());
  emit(kind, fmt::format("{}: {}", detail::flow_name(c), why), &c);
  return true;
}

void RdmaEngine::on_port_change(const std::string& key, const LinkChange& change) {
  if (change.up) {
    emit(proto::AgentEvent::LINK_UP,
         fmt::format("RDMA port {}: link up after {} ms down", key, change.down_for_ns / 1'000'000), "nic:" + key);
    return;
  }
  emit(proto::AgentEvent::LINK_DOWN, fmt::format("RDMA port {}: link down (the driver reports it)", key), "nic:" + key);
  if (!reconnects()) return;  // recovery: stop leaves the QPs to ride it out or fail
  std::vector<Connection*> on_port;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : connections_) {
      // Only an established connection breaks, and its device and port were set before that.
      if (c->state.load() != Connection::State::Established) continue;
      if (fmt::format("{}/{}", c->device, c->port_num) == key) on_port.push_back(c.get());
    }
  }
  for (Connection* c : on_port) {
    break_flow(*c, proto::AgentEvent::NOTICE, fmt::format("port {} went down; reconnecting once it is up", key));
  }
}

bool RdmaEngine::port_up(const Connection& connection) {
  // The watch's state, and, when that says up, a read now: a flow the datapath broke on a failed
  // WR may be ahead of the port's event.
  return port_watch_->up(connection.device, connection.port_num) &&
         read_port_active(connection.device, connection.port_num).value_or(true);
}

std::unique_ptr<Connection> RdmaEngine::successor_of(const Connection& broken) const {
  auto next = std::make_unique<Connection>();
  next->role = broken.role;
  next->peer = broken.peer;
  next->address = broken.address;
  next->source = broken.source;
  next->rail = broken.rail;
  next->flow_id = broken.flow_id;
  next->generation = broken.generation + 1;
  next->connect_deadline_ns = std::numeric_limits<std::int64_t>::max();  // until the test ends
  next->retry_delay_ns = kFirstReconnectRetryNs;
  next->outage_since_ns = outage_start(broken);
  const std::int64_t repairable = broken.repairable_ns.load();
  next->repairable_ns = repairable != 0 ? repairable : realtime_ns();
  next->joins_schedule = true;
  return next;
}

void RdmaEngine::recover() {
  if (!reconnects()) return;
  std::vector<Connection*> broken;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : connections_) {
      if (c->state == Connection::State::Broken && !c->replaced) broken.push_back(c.get());
    }
  }
  for (Connection* c : broken) {
    if (!port_up(*c)) continue;
    // Repairable since its port came up, when it went down after the flow broke; since now otherwise
    // (the peer broke it, or its QP failed), whenever this thread gets to it.
    const std::int64_t up_at = port_watch_->last_up_ns(c->device, c->port_num);
    c->repairable_ns = up_at > c->broken_progress_ns.load() ? up_at : realtime_ns();
    // Its peer learns of the break from the disconnect (and reconnects, if it is the sender).
    if (!c->disconnected && c->id) rdma_disconnect(c->id.get());
    c->disconnected = true;
    c->replaced = true;
    c->retire.store(true, std::memory_order_release);
    if (c->role != Connection::Role::Sender) continue;  // the sender's new QP replaces this one
    auto successor = successor_of(*c);
    Connection& next = *successor;
    {
      std::lock_guard lock(mutex_);
      connections_.push_back(std::move(successor));
    }
    try {
      begin_connect(next);
    } catch (const std::exception& e) {
      retry_or_fail(next, e.what());
    }
  }
}

Connection* RdmaEngine::replace_receiver(const Connection& incoming) {
  Connection* previous = nullptr;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : connections_) {
      if (c->role == Connection::Role::Receiver && c->peer == incoming.peer && c->flow_id == incoming.flow_id &&
          c->rail == incoming.rail) {
        previous = c.get();
      }
    }
  }
  // The flow's latest receiver; one broken and retired already (its port went down) still says
  // where the outage began.
  if (previous == nullptr || previous->replaced) return previous;
  previous->repairable_ns = realtime_ns();
  break_flow(*previous, proto::AgentEvent::NOTICE, "the sender connected a new QP for the flow; this one is retired");
  if (!previous->disconnected && previous->id && previous->state != Connection::State::Closed) {
    rdma_disconnect(previous->id.get());
  }
  previous->disconnected = true;
  previous->replaced = true;
  previous->retire.store(true, std::memory_order_release);
  return previous;
}

void RdmaEngine::release_retired() {
  std::vector<Connection*> retired;
  {
    std::lock_guard lock(mutex_);
    for (auto& c : connections_) {
      // One never established was never the datapath's (this thread establishes connections).
      const bool idle = c->retired.load(std::memory_order_acquire) ||
                        (c->retire.load(std::memory_order_relaxed) && c->established_ns.load() == 0);
      if (idle && c->id) retired.push_back(c.get());
    }
  }
  // The datapath no longer touches them; their counts stay for sample().
  for (Connection* c : retired) c->release_resources();
}

void RdmaEngine::note_progress(Connection& c, std::int64_t now) {
  const std::int64_t last = c.last_progress_ns.load(std::memory_order_relaxed);
  c.last_progress_ns.store(now, std::memory_order_relaxed);
  if (const std::int64_t since = c.outage_since_ns.load(std::memory_order_relaxed); since != 0) {
    const std::int64_t down = std::max<std::int64_t>(now - since, 1);
    c.downtime_ns.fetch_add(down, std::memory_order_relaxed);
    const std::int64_t repairable = c.repairable_ns.load(std::memory_order_relaxed);
    if (repairable != 0)
      c.reconnect_ns.fetch_add(std::clamp<std::int64_t>(now - repairable, 0, down), std::memory_order_relaxed);
    c.outage_since_ns.store(0, std::memory_order_relaxed);
    emit(proto::AgentEvent::NOTICE,
         fmt::format("{} resumed on a new QP (reconnect {}) after {} ms without traffic", detail::flow_name(c),
                     c.generation, down / 1'000'000),
         &c);
  } else if (c.role == Connection::Role::Sender && last != 0 && now - last > c.gap_ns &&
             c.state.load(std::memory_order_relaxed) == Connection::State::Established) {
    // A receiver's silences are its sender's pauses (a rate, a replay's compute phase); a sender's
    // with work outstanding are the network's. A broken QP's late completions end nothing: its
    // successor carries the outage.
    c.downtime_ns.fetch_add(now - last, std::memory_order_relaxed);
  }
}

}  // namespace tusk::rdma
