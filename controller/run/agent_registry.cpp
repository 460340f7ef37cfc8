#include "controller/run/agent_registry.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <boost/asio/post.hpp>

#include <algorithm>

#include "common/clock.hpp"
#include "common/version.hpp"
#include "controller/run/peer_texts.hpp"

namespace tusk {
namespace asio = boost::asio;
using boost::system::error_code;
using Clock = std::chrono::steady_clock;

namespace {

// An alert the peer sent says that it refused this controller, before it showed a certificate of
// its own to name it by: what that usually means, so the log says what to check.
std::string peer_alert_hint(const std::string& reason) {
  if (reason.find("alert unknown ca") != std::string::npos) {
    return " (the peer does not trust this controller's certificate: its --ca is not the CA that signed --cert here)";
  }
  if (reason.find("alert bad certificate") != std::string::npos) {
    return " (the peer refused this controller's certificate: does it name the address the peer dialled? "
           "scripts/make-certs.sh --controller-name adds one)";
  }
  if (reason.find("alert certificate expired") != std::string::npos) {
    return " (the peer says a certificate has expired: this controller's, or the CA's)";
  }
  return "";
}

constexpr auto kTickInterval = std::chrono::milliseconds(100);

std::int64_t ms_between(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(to - from).count();
}
}  // namespace

AgentRegistry::AgentRegistry(asio::io_context& io, Options options, Listener listener)
    : io_(io),
      options_(std::move(options)),
      listener_(std::move(listener)),
      acceptor_(io),
      tick_timer_(io),
      accept_retry_timer_(io) {}

void AgentRegistry::start() {
  const auto where = fmt::format("{}:{}", options_.listen.host, options_.listen.port);
  try {
    asio::ip::tcp::endpoint endpoint(asio::ip::make_address(options_.listen.host), options_.listen.port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
    bound_port_ = acceptor_.local_endpoint().port();
  } catch (const boost::system::system_error& e) {
    throw std::runtime_error(fmt::format("cannot listen on {}: {} (--listen sets it)", where, e.code().message()));
  }
  spdlog::info("listening for agents on {}:{} ({})", options_.listen.host, bound_port_,
               options_.tls ? "TLS, mutual authentication" : "PLAINTEXT, --insecure");
  accept_next();
  tick();
}

void AgentRegistry::stop() {
  asio::post(io_, [this] {
    error_code ec;
    acceptor_.close(ec);
    tick_timer_.cancel();
    accept_retry_timer_.cancel();
    std::lock_guard lock(mutex_);
    for (auto& [name, session] : sessions_) {
      if (session.connection) session.connection->close("controller shutting down");
    }
    for (auto& [connection, since] : unregistered_) connection->close("controller shutting down");
  });
}

std::chrono::milliseconds accept_retry_delay(unsigned failures_in_a_row) {
  const unsigned doublings = std::min(failures_in_a_row > 0 ? failures_in_a_row - 1 : 0, 7u);
  return std::min(std::chrono::milliseconds(10 << doublings), std::chrono::milliseconds(1000));
}

void AgentRegistry::accept_next() {
  acceptor_.async_accept([this](error_code ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) return;
    ++accepts_tried_;
    if (ec) {
      on_accept_failed(ec);
      return;
    }
    if (accept_failures_ > 0) spdlog::info("accepting again after {} failed accepts", accept_failures_);
    accept_failures_ = 0;
    on_accepted(std::move(socket));
    accept_next();
  });
}

void AgentRegistry::on_accept_failed(const error_code& ec) {
  ++accept_failures_;
  const auto delay = accept_retry_delay(accept_failures_);
  // Once at the first failure and then every 100th: the log tells, it does not flood.
  if (accept_failures_ == 1 || accept_failures_ % 100 == 0) {
    spdlog::warn("accept failed: {} ({} in a row); trying again in {} ms{}", ec.message(), accept_failures_,
                 delay.count(),
                 ec == asio::error::no_descriptors ? " (the process is at its open-file limit: raise ulimit -n)" : "");
  }
  accept_retry_timer_.expires_after(delay);
  accept_retry_timer_.async_wait([this](error_code wait_error) {
    if (!wait_error && acceptor_.is_open()) accept_next();
  });
}

bool AgentRegistry::make_room_for_pending(Clock::time_point now) {
  std::shared_ptr<Connection> oldest;
  {
    std::lock_guard lock(mutex_);
    if (unregistered_.size() < std::max<std::size_t>(options_.max_pending_connections, 1)) return true;
    auto it = std::min_element(unregistered_.begin(), unregistered_.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
    if (now - it->second >= options_.pending_grace) oldest = it->first;
  }
  // Once, then every 1000th: a flood is told, not echoed line by line.
  if (pending_refused_++ % 1000 == 0) {
    spdlog::warn("{} connections are waiting for their hello (the limit); {} ({} so far)",
                 options_.max_pending_connections,
                 oldest ? "dropping the one that has waited longest" : "refusing the newest", pending_refused_);
  }
  if (!oldest) return false;
  oldest->close("too many connections waiting for hello; this one waited longest");
  std::lock_guard lock(mutex_);
  unregistered_.erase(oldest);
  return true;
}

void AgentRegistry::on_accepted(asio::ip::tcp::socket socket) {
  const auto now = Clock::now();
  if (!make_room_for_pending(now)) {
    error_code ec;
    socket.close(ec);
    return;
  }
  Connection::Limits limits;
  limits.max_frame = kMaxHelloFrame;
  auto connection = Connection::create(std::move(socket), options_.tls, limits);
  {
    std::lock_guard lock(mutex_);
    unregistered_.emplace(connection, now);
  }
  // Empty until the hello names the agent; then every frame goes to that agent's session.
  auto agent_name = std::make_shared<std::string>();
  std::weak_ptr<Connection> weak = connection;
  connection->start_as_server(
      [this, weak, agent_name](proto::Envelope& message) {
        auto self = weak.lock();
        if (!self) return;
        if (agent_name->empty()) {
          *agent_name = on_first_message(self, message);
        } else {
          on_message(*agent_name, self, message);
        }
      },
      [this, weak, agent_name](const std::string& reason) {
        auto self = weak.lock();
        if (!agent_name->empty()) {
          on_closed(*agent_name, self, reason);
          return;
        }
        std::lock_guard lock(mutex_);
        if (self && unregistered_.erase(self) > 0) {
          spdlog::warn("connection from {} closed before hello: {}{}", self->remote(), reason, peer_alert_hint(reason));
        }
      });
}

void AgentRegistry::refuse(const std::shared_ptr<Connection>& connection, proto::Error::Code code,
                           const std::string& why) {
  spdlog::warn("refusing {}: {}", connection->remote(), why);
  proto::Envelope envelope;
  envelope.mutable_error()->set_code(code);
  envelope.mutable_error()->set_message(why);
  connection->send(envelope);
  // Give the error a moment to leave before the socket closes.
  auto timer = std::make_shared<asio::steady_timer>(io_, std::chrono::milliseconds(200));
  timer->async_wait([timer, connection, why](error_code) { connection->close(why); });
}

std::string AgentRegistry::on_first_message(const std::shared_ptr<Connection>& connection, proto::Envelope& message) {
  {
    std::lock_guard lock(mutex_);
    if (unregistered_.erase(connection) == 0) return "";  // timed out before its hello
  }
  if (auto refusal = check_hello(message, connection->encrypted(), connection->peer_common_name())) {
    refuse(connection, refusal->code, refusal->why);
    return "";
  }
  const PeerTextTally texts = make_peer_texts_safe(message);
  const auto& hello = message.hello();
  const std::string& name = hello.agent_name();

  std::string fault_text;
  std::vector<std::pair<std::string, std::string>> identity_faults;
  {
    std::lock_guard lock(mutex_);
    auto [it, inserted] = sessions_.try_emplace(name);
    AgentSession& session = it->second;
    if (!inserted && session.connected() && session.instance != hello.agent_instance()) {
      // Two live processes with one name would corrupt each other's numbering.
      refuse(connection, proto::Error::DUPLICATE_AGENT,
             fmt::format("another agent named '{}' is already connected from {}", name, session.remote));
      return "";
    }
    if (session.connection && session.connection != connection)
      session.connection->close("replaced by a new connection");
    if (inserted || session.instance != hello.agent_instance()) {
      if (!inserted) fault_text = "agent process restarted; records it had not delivered are lost";
      session.inbox.start_at(hello.state().first_unacked_seq());
    }
    session.name = name;
    session.instance = hello.agent_instance();
    session.inventory = hello.inventory();
    note_texts(session, texts);
    identity_faults = identify(session, *connection);
    session.state_at_hello = hello.state();
    session.connection = connection;
    connection->set_max_frame(framing::kDefaultMaxFrame);
    session.remote = connection->remote();
    session.last_heard = Clock::now();
    ++session.connects;

    proto::Envelope ack;
    ack.mutable_hello_ack()->set_protocol_version(kProtocolVersion);
    ack.mutable_hello_ack()->set_controller_name(options_.controller_name);
    ack.mutable_hello_ack()->set_lease_ms(static_cast<std::uint32_t>(options_.lease.count()));
    ack.mutable_hello_ack()->set_heartbeat_interval_ms(static_cast<std::uint32_t>(options_.lease.count() / 3));
    connection->send(ack);
    proto::Envelope record_ack;
    record_ack.mutable_record_ack()->set_acked_through(session.inbox.acked_through());
    connection->send(record_ack);
    for (const auto& order : session.standing_orders) connection->send(order);
    spdlog::info("agent '{}' registered from {} (connection #{}, {} RDMA devices, engines: {})", name, session.remote,
                 session.connects, session.inventory.rdma_devices_size(), fmt::join(session.inventory.engines(), ","));
  }
  if (!fault_text.empty()) fault(name, fault_text);
  for (const auto& [agent, text] : identity_faults) fault(agent, text);
  return name;
}

// The session's node from what its certificate proves (agent_identity.hpp). A reported hostname
// that is another agent's node, which its certificate does not name, is a fault of the agent that
// reported it, whichever of the two registered first.
std::vector<std::pair<std::string, std::string>> AgentRegistry::identify(AgentSession& session,
                                                                         Connection& connection) {
  std::vector<std::string> certified = connection.peer_dns_names();
  if (auto common_name = connection.peer_common_name()) certified.insert(certified.begin(), *common_name);
  if (const auto mapped = options_.agent_nodes.find(session.name); mapped != options_.agent_nodes.end()) {
    session.node = node_of_mapped_agent(mapped->second, session.inventory.hostname(), connection.encrypted());
  } else {
    session.node = node_of_agent(session.name, session.inventory.hostname(), connection.encrypted(), certified);
  }
  if (session.node.hostname_refused) {
    spdlog::warn("agent '{}': its node is '{}', {}", session.name, session.node.node, session.node.proof);
  }
  const auto claims = [](const AgentSession& claimant, const AgentSession& owner) {
    return claimant.node.hostname_refused &&
           short_host_name(claimant.inventory.hostname()) == short_host_name(owner.node.node);
  };
  const auto fault_of = [](const AgentSession& claimant, const AgentSession& owner) {
    return std::pair{claimant.name,
                     fmt::format("it reported the hostname of agent '{}''s node '{}', which its certificate does not "
                                 "name: it is taken as '{}', and no action names '{}' on its word",
                                 owner.name, owner.node.node, claimant.node.node, owner.node.node)};
  };
  std::vector<std::pair<std::string, std::string>> faults;
  for (const auto& [other_name, other] : sessions_) {
    if (other_name == session.name) continue;
    if (claims(session, other)) faults.push_back(fault_of(session, other));
    if (claims(other, session)) faults.push_back(fault_of(other, session));
  }
  return faults;
}

// Counted for the agent's report entry, and told once: texts that had to be cut or escaped are
// an agent's bug or its attack, and either is worth a line.
void AgentRegistry::note_texts(AgentSession& session, const PeerTextTally& texts) {
  if (!texts.any()) return;
  if (!session.texts.any()) {
    spdlog::warn("agent '{}' sent texts that had to be cut ({}) or escaped ({}); they are kept so, and counted",
                 session.name, texts.cut, texts.escaped);
  }
  session.texts += texts;
}

void AgentRegistry::on_message(const std::string& agent, const std::shared_ptr<Connection>& connection,
                               proto::Envelope& message) {
  const std::int64_t received_ns = realtime_ns();
  const PeerTextTally texts = make_peer_texts_safe(message);
  SessionInput input;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(agent);
    if (it == sessions_.end() || it->second.connection != connection) return;  // a replaced connection
    AgentSession& session = it->second;
    session.last_heard = Clock::now();
    note_texts(session, texts);
    input = absorb_message(session, message, received_ns);
    if (input.acked_through) {
      proto::Envelope ack;
      ack.mutable_record_ack()->set_acked_through(*input.acked_through);
      connection->send(ack);
    }
  }
  if (input.unexpected) {
    spdlog::warn("agent '{}' sent an unexpected message ({}); ignored", agent, static_cast<int>(message.body_case()));
  }
  for (const auto& what : input.faults) fault(agent, what);
  if (input.plan_ack && listener_.on_plan_ack) listener_.on_plan_ack(agent, *input.plan_ack);
  if (listener_.on_record) {
    for (auto& record : input.fresh) listener_.on_record(agent, record);
  }
}

void AgentRegistry::on_closed(const std::string& agent, const std::shared_ptr<Connection>& connection,
                              const std::string& reason) {
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(agent);
    if (it == sessions_.end() || !connection || it->second.connection != connection) return;
    it->second.connection.reset();
    it->second.disconnected_since = Clock::now();
  }
  spdlog::warn("agent '{}' disconnected: {}", agent, reason);
  fault(agent, fmt::format("connection lost: {}", reason));
}

void AgentRegistry::fault(const std::string& agent, const std::string& what) {
  if (listener_.on_fault) listener_.on_fault(agent, what);
}

void AgentRegistry::tick() {
  const auto now = Clock::now();
  // Only a connection we have been quiet on gets a heartbeat: acks, probes and plans renew the
  // agent's lease as well as one does, and at thousands of agents a heartbeat beside every ack
  // is a third of the controller's work. Checked every tick, so the longest silence is this plus
  // a tick: half the lease, as before, when heartbeats went out on a fixed beat.
  const auto quiet_limit = std::max<std::chrono::milliseconds>(options_.lease / 3, options_.lease / 2 - kTickInterval);
  proto::Envelope heartbeat;
  heartbeat.mutable_heartbeat()->set_sender_time_ns(realtime_ns());
  {
    std::lock_guard lock(mutex_);
    for (auto& [name, session] : sessions_) {
      if (!session.connected()) continue;
      // A connection that stays silent through two leases is dead even if TCP has not noticed.
      if (now - session.last_heard > 2 * options_.lease) {
        session.connection->close(fmt::format("agent silent for {} ms", ms_between(session.last_heard, now)));
        continue;
      }
      if (now - session.connection->last_send() >= quiet_limit) session.connection->send(heartbeat);
    }
    for (auto& [connection, since] : unregistered_) {
      if (now - since > options_.hello_timeout) connection->close("no hello in time");
    }
  }
  tick_timer_.expires_after(kTickInterval);
  tick_timer_.async_wait([this](error_code ec) {
    if (!ec) tick();
  });
}

AgentView AgentRegistry::view_of(const AgentSession& session, Clock::time_point now) const {
  AgentView view;
  view.name = session.name;
  view.inventory = session.inventory;
  view.node = session.node.node;
  view.node_proof = session.node.proof;
  view.connected = session.connected();
  view.remote = session.remote;
  view.clock = session.clock.best();
  view.clock_samples = session.clock.count();
  if (!view.connected) view.away_for = now - session.disconnected_since;
  view.connects = session.connects;
  view.texts_cut = session.texts.cut;
  view.texts_escaped = session.texts.escaped;
  view.duplicate_records = session.inbox.duplicates_total();
  view.missing_records = session.inbox.missing_total();
  view.state_at_hello = session.state_at_hello;
  return view;
}

std::vector<AgentView> AgentRegistry::agents() const {
  std::lock_guard lock(mutex_);
  std::vector<AgentView> views;
  views.reserve(sessions_.size());
  const auto now = Clock::now();
  for (const auto& [name, session] : sessions_) views.push_back(view_of(session, now));
  return views;
}

std::optional<AgentView> AgentRegistry::agent(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = sessions_.find(name);
  if (it == sessions_.end()) return std::nullopt;
  return view_of(it->second, Clock::now());
}

std::vector<AgentLink> AgentRegistry::links() const {
  std::lock_guard lock(mutex_);
  std::vector<AgentLink> links;
  links.reserve(sessions_.size());
  const auto now = Clock::now();
  for (const auto& [name, session] : sessions_) {
    AgentLink link;
    link.name = name;
    link.connected = session.connected();
    if (!link.connected) link.away_for = now - session.disconnected_since;
    link.clock = session.clock.best();
    link.clock_samples = session.clock.count();
    link.duplicate_records = session.inbox.duplicates_total();
    link.missing_records = session.inbox.missing_total();
    links.push_back(std::move(link));
  }
  return links;
}

void AgentRegistry::send(const std::string& agent, const proto::Envelope& message) {
  asio::post(io_, [this, agent, message] {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(agent);
    if (it != sessions_.end() && it->second.connected()) it->second.connection->send(message);
  });
}

void AgentRegistry::set_standing_orders(const std::string& agent, std::vector<proto::Envelope> orders) {
  asio::post(io_, [this, agent, orders = std::move(orders)]() mutable {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(agent);
    if (it == sessions_.end()) return;
    it->second.standing_orders = std::move(orders);
    if (it->second.connected()) {
      for (const auto& order : it->second.standing_orders) it->second.connection->send(order);
    }
  });
}

void AgentRegistry::sync_clocks(const std::vector<std::string>& agents, int probes) {
  asio::post(io_, [this, agents, probes] {
    {
      std::lock_guard lock(mutex_);
      for (const auto& name : agents) {
        if (auto it = sessions_.find(name); it != sessions_.end()) it->second.clock.clear();
      }
    }
    for (std::size_t i = 0; i < agents.size(); ++i) {
      if (i == 0) {
        send_probe(agents[i], 1, probes);
        continue;
      }
      auto timer = std::make_shared<asio::steady_timer>(io_, kProbeStagger * i);
      timer->async_wait([this, timer, agent = agents[i], probes](error_code ec) {
        if (!ec) send_probe(agent, 1, probes);
      });
    }
  });
}

void AgentRegistry::send_probe(const std::string& agent, std::uint32_t probe_id, int remaining) {
  if (remaining <= 0) return;
  {
    std::lock_guard lock(mutex_);
    auto it = sessions_.find(agent);
    if (it == sessions_.end() || !it->second.connected()) return;
    proto::Envelope probe;
    probe.mutable_clock_probe()->set_probe_id(probe_id);
    probe.mutable_clock_probe()->set_controller_send_ns(realtime_ns());
    it->second.connection->send(probe);
  }
  auto timer = std::make_shared<asio::steady_timer>(io_, kProbeSpacing);
  timer->async_wait([this, timer, agent, probe_id, remaining](error_code ec) {
    if (!ec) send_probe(agent, probe_id + 1, remaining - 1);
  });
}

}  // namespace tusk
