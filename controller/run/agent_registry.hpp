// The controller's listening side: accepts agent connections, checks their hello (protocol
// version, certificate name), keeps one AgentSession per agent name across reconnects, sends
// heartbeats, drops silent connections, acknowledges records and hands fresh ones to a listener.
//
// Threads: networking runs on the io_context's single thread. The public methods marked
// thread-safe may be called from the orchestrator's thread; listener callbacks run on the io
// thread, without the registry's lock held.
#pragma once

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/asio/steady_timer.hpp>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "common/endpoint.hpp"
#include "controller/run/agent_session.hpp"
#include "controller/run/session_input.hpp"

namespace tusk {

// How long to wait before accepting again after `failures_in_a_row` failed accepts: at the fd
// limit a pending connection stays queued and every accept fails at once, so retrying at once
// spins (two million failures in 5 s). 10 ms, doubling to 1 s.
std::chrono::milliseconds accept_retry_delay(unsigned failures_in_a_row);

inline constexpr std::chrono::microseconds kProbeStagger{500};
inline constexpr std::chrono::milliseconds kProbeSpacing{20};
// How long sync_clocks takes to send every probe to `agents` agents.
inline std::chrono::milliseconds clock_sync_duration(std::size_t agents, int probes) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(kProbeStagger * agents + kProbeSpacing * probes);
}

class AgentRegistry {
 public:
  struct Options {
    HostPort listen{"127.0.0.1", 7420};
    boost::asio::ssl::context* tls = nullptr;  // null: plaintext (--insecure)
    std::chrono::milliseconds lease{3000};
    std::chrono::milliseconds hello_timeout{std::chrono::seconds(10)};
    // A connection that has not said hello (TLS handshake included) holds a descriptor and about
    // 60 KiB and is nobody yet. Beyond this many, the oldest is dropped if it has waited
    // `pending_grace`, else the newcomer is (it dials again after its backoff). The grace covers
    // a whole rack booting at once: 4,096 handshakes queue on one thread for a few seconds.
    std::size_t max_pending_connections = 4096;
    std::chrono::milliseconds pending_grace{5000};
    std::string controller_name = "tusk-controller";
    // The operator's agent -> node map (--agent-nodes): an agent listed is on that node.
    std::map<std::string, std::string> agent_nodes;
  };
  struct Listener {
    // The record is the listener's to take (move from).
    std::function<void(const std::string& agent, proto::Record& record)> on_record;
    std::function<void(const std::string& agent, const proto::PlanAck& ack)> on_plan_ack;
    // Connection-level faults: lost, refused, restarted, records missing.
    std::function<void(const std::string& agent, const std::string& what)> on_fault;
  };

  AgentRegistry(boost::asio::io_context& io, Options options, Listener listener);

  // Binds and starts accepting; throws std::runtime_error naming the address on failure.
  void start();
  std::uint16_t port() const { return bound_port_; }

  // Thread-safe. Everything about every agent (copies inventories: for reports, not for polling).
  std::vector<AgentView> agents() const;
  std::optional<AgentView> agent(const std::string& name) const;
  // Thread-safe. Connection state and clock of every agent, sorted by name: cheap enough to poll.
  std::vector<AgentLink> links() const;
  // Thread-safe. Sends now if connected, else drops the message.
  void send(const std::string& agent, const proto::Envelope& message);
  // Thread-safe. Replaces what is resent to `agent` after every reconnect (and sends it now).
  void set_standing_orders(const std::string& agent, std::vector<proto::Envelope> orders);
  // Thread-safe. Clears old clock samples and sends `probes` probes to each agent, 20 ms apart;
  // agents start kProbeStagger apart, so the probes of thousands do not queue behind each other
  // (a queued probe's round trip, hence its offset, carries the queue).
  void sync_clocks(const std::vector<std::string>& agents, int probes);
  void stop();
  // Thread-safe. Accept calls completed so far, failed ones included.
  std::uint64_t accepts_tried() const { return accepts_tried_.load(); }

 private:
  void accept_next();
  void on_accept_failed(const boost::system::error_code& ec);
  void on_accepted(boost::asio::ip::tcp::socket socket);
  // Makes room for one more connection without a hello; false when the newcomer must go.
  bool make_room_for_pending(std::chrono::steady_clock::time_point now);
  // Returns the agent's name once its hello is accepted, or "" when the connection is refused.
  std::string on_first_message(const std::shared_ptr<Connection>& connection, proto::Envelope& message);
  void on_message(const std::string& agent, const std::shared_ptr<Connection>& connection, proto::Envelope& message);
  void on_closed(const std::string& agent, const std::shared_ptr<Connection>& connection, const std::string& reason);
  void refuse(const std::shared_ptr<Connection>& connection, proto::Error::Code code, const std::string& why);
  void tick();
  void send_probe(const std::string& agent, std::uint32_t probe_id, int remaining);
  void fault(const std::string& agent, const std::string& what);
  void note_texts(AgentSession& session, const PeerTextTally& texts);
  AgentView view_of(const AgentSession& session, std::chrono::steady_clock::time_point now) const;
  // Under mutex_: sets the session's node; the faults of agents that claimed another's node.
  std::vector<std::pair<std::string, std::string>> identify(AgentSession& session, Connection& connection);

  boost::asio::io_context& io_;
  Options options_;
  Listener listener_;
  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer tick_timer_;
  boost::asio::steady_timer accept_retry_timer_;
  unsigned accept_failures_ = 0;  // in a row; io thread only
  std::atomic<std::uint64_t> accepts_tried_{0};
  std::uint64_t pending_refused_ = 0;  // io thread only
  std::uint16_t bound_port_ = 0;

  mutable std::mutex mutex_;
  std::map<std::string, AgentSession> sessions_;
  // Accepted connections that have not said hello yet, with when they arrived.
  std::map<std::shared_ptr<Connection>, std::chrono::steady_clock::time_point> unregistered_;
};

}  // namespace tusk
