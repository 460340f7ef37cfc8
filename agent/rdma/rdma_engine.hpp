// The RDMA engine: RC queue pairs through librdmacm, posting RDMA WRITEs (with immediate data when
// the data is checked) to every peer the plan names, `qps_per_peer` QPs each, and receiving the
// writes of whoever connects to this agent, with every message's flow, sequence, length and payload
// CRC checked. Also reads the NIC's counters of every port it used.
//
// Threads: prepare() listens and starts a connection-manager thread (connects with retries while
// the peers come up, accepts, reconnects) and a port watch (port_watch.hpp: the used ports'
// state); ready() says when every sending QP is connected, and the agent answers the plan only
// then, so traffic begins at the start time and not a connect later. start() starts one datapath
// thread that polls every connection's CQ and posts work requests. sample() reads atomics and
// sysfs. stop() ends the traffic and joins all but the CM thread; release() joins that one and tears
// the connections down in reverse creation order.
//
// Recovery (the plan's `recovery`): under "stop" a flow whose QP fails stays down. Under
// "reconnect" a flow whose port goes down, whose QP fails or whose peer disconnects is broken: the
// CM thread disconnects it once its port is up and connects a successor QP for the same flow (the
// accepting side replaces its QP when the sender's new request comes); the flow's stream sums its
// QPs' counts and reports its reconnects and the time it carried nothing (downtime_ms).
//
// Files: rdma_engine.cpp (set-up: checks, listener, connecting, stop), rdma_recovery.cpp (port
// state, broken flows, successors), rdma_datapath.cpp (the datapath thread), rdma_sampling.cpp
// (counters).
//
// Flow control when data is checked: the receiver has `slots` message buffers and returns credits
// (SEND with immediate = messages verified) so a sender never overwrites a buffer not yet checked.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/engine.hpp"
#include "agent/link_watch.hpp"
#include "agent/rdma/counters/netdev_counters.hpp"
#include "agent/rdma/counters/port_counters.hpp"
#include "agent/rdma/counters/qp_counters.hpp"
#include "agent/rdma/port_watch.hpp"
#include "agent/rdma/socket_path_tracer.hpp"
#include "agent/rdma/verbs_owners.hpp"
#include "common/latency_histogram.hpp"

namespace tusk::rdma {

// Completion statuses (ibv_wc_status) counted one by one; the rest go under "other".
inline constexpr std::size_t kCountedStatuses = 32;

// One RC connection: this agent's side of a QP, as sender or receiver. Members in creation order.
// A flow (peer, flow_id, role) has one connection, or under `recovery: reconnect` a chain of them:
// each successor takes the flow over from a broken one, which stays for its counts.
struct Connection {
  enum class Role { Sender, Receiver };
  // Broken: its flow stopped (port down, a completion error, the peer disconnected) and a successor
  // takes over (recovery: reconnect). Failed: it stopped for good (recovery: stop, or it never
  // connected). Closed: the peer disconnected in order.
  enum class State { Connecting, RetryWait, Established, Broken, Failed, Closed };

  Role role = Role::Sender;
  std::string peer;           // the other agent's name
  std::string address;        // its IP (senders)
  std::string source;         // this agent's address to send from: its rail's (senders with rails)
  int rail = -1;              // the rail it runs on, -1 without rails
  std::uint32_t flow_id = 0;  // QP index within the peer pair (and rail)
  // Written by the CM thread while sample() may read them: atomics.
  std::atomic<std::uint32_t> qp_num{0};
  std::atomic<std::uint32_t> path_mtu{0};  // bytes, as the QP has it
  // The QP's RoCEv2 5-tuple, in the direction its data goes: written by the CM thread before
  // flow_known is set, read-only after.
  std::string flow_src, flow_dst;
  std::uint16_t udp_source_port = 0;
  std::atomic<bool> flow_known{false};
  std::string device;
  std::uint8_t port_num = 0;

  CmId id;
  ProtectionDomain pd;
  std::unique_ptr<std::uint8_t, void (*)(void*)> buffer{nullptr, &std::free};
  MemoryRegion mr;
  CompletionQueue cq;
  QueuePair qp;

  // Set up by the CM thread before Established; read-only afterwards.
  std::uint64_t remote_address = 0;
  std::uint32_t remote_key = 0;
  std::uint32_t slots = 0;
  std::uint32_t message_size = 0;
  std::uint32_t payload_crc = 0;

  std::atomic<State> state{State::Connecting};
  std::int64_t retry_at_ns = 0;
  // Between connect attempts: a first connect waits on peers that prepare at the same moment; a
  // successor retries at once and backs off, as its link's addresses and GIDs come back.
  std::int64_t retry_delay_ns = 250'000'000;
  std::int64_t connect_deadline_ns = 0;  // connects are retried until then
  unsigned attempts = 0;
  unsigned generation = 0;  // 0: the flow's first QP; n: its nth successor

  // Recovery, CM thread only: rdma_disconnect sent; a successor made (sender) or accepted (receiver).
  bool disconnected = false;
  bool replaced = false;
  // CM thread -> datapath: drop it from the active list; datapath -> CM thread: it no longer touches
  // it, so its verbs resources may go (its counts stay).
  std::atomic<bool> retire{false};
  std::atomic<bool> retired{false};
  // A successor: since when its flow carried nothing (the broken one's last progress), until its own
  // first completion or message closes that outage (and sets this to 0).
  std::atomic<std::int64_t> outage_since_ns{0};
  // When it broke: its flow's last progress then (what comes in after, while it is torn down, does
  // not end the outage). Set by whoever breaks it.
  std::atomic<std::int64_t> broken_progress_ns{0};
  // A broken one: when it could be repaired (its port up again); a successor: copied from it. The
  // outage from then to the successor's first traffic is the reconnect's share of the downtime.
  std::atomic<std::int64_t> repairable_ns{0};
  std::atomic<std::int64_t> reconnect_ns{0};
  // Time the flow carried nothing: closed outages, and a sender's silences with work outstanding
  // longer than gap_ns (what one retransmission explains: 1.5 x its QP's ACK timeout, at least
  // 100 ms), such as a link outage its QP rode out by retransmitting. Written by the datapath.
  std::atomic<std::int64_t> downtime_ns{0};
  std::int64_t gap_ns = 100'000'000;  // set by the CM thread before Established
  // A sender the NIC paces (its per-QP rate limit, kbit/s); 0: the datapath paces it, if at all.
  std::uint32_t hw_rate_kbps = 0;
  std::atomic<std::int64_t> established_ns{0};
  // When the datapath first posted on this QP (a sender) or took in a message on it (a receiver):
  // the stream's traffic, and its throughput, begin here.
  std::atomic<std::int64_t> first_traffic_ns{0};

  // Datapath thread only (set up by the CM thread before the connection is Established).
  std::uint64_t posted = 0, completed = 0, credited = 0, verified = 0, credits_sent = 0, credit_sends = 0;
  // A successor: software pacing's budget counts from its establishment, and its replay joins the
  // step the schedule is at.
  std::int64_t paced_from_ns = 0;
  bool joins_schedule = false;
  // The last completion or message, or a sender's post after it was idle: its silence counts from
  // here (the CM thread reads it when the flow breaks).
  std::atomic<std::int64_t> last_progress_ns{0};
  bool stall_reported = false;
  // The last post was refused for want of room (ENOMEM) and nothing has gone since: the flow wants
  // to send and cannot, which is a stall as much as WRs that never complete.
  bool post_refused = false;
  std::vector<std::int64_t> posted_ns;  // per slot: when its last WR was posted
  // Training-step replay: the step being sent, its bytes posted so far, when its communication
  // phase began, and 1 + the sequence number of its last write once all of it is posted.
  std::uint32_t step = 0;
  std::uint64_t step_sent = 0;
  std::int64_t step_comm_start_ns = 0;
  std::uint64_t step_last_seq = 0;
  LatencyHistogram completion_latency;  // post to completion of each signaled WR

  // Published for sample().
  std::atomic<std::uint64_t> bytes{0}, messages{0}, integrity_errors{0}, completion_errors{0}, stalls{0};
  // Bytes of the messages whose payload CRC was checked (check_every: a sample of them).
  std::atomic<std::uint64_t> payload_bytes_checked{0};
  std::array<std::atomic<std::uint64_t>, kCountedStatuses + 1> errors_by_status{};
  PublishedLatency latency;
  std::atomic<std::uint64_t> steps_done{0}, step_time_sum_ns{0}, step_time_max_ns{0};

  void release_resources() noexcept;  // QP, CQ, MR, buffer, PD, then the id
};

class RdmaEngine final : public Engine {
 public:
  // idle_sleep_us: sleep when a pass over the connections found nothing to do (labs on few cores).
  // allowed_devices: the only RDMA devices this host lets tests use (--rdma-device); empty: any.
  RdmaEngine(std::string agent_name, unsigned idle_sleep_us, std::vector<std::string> allowed_devices = {})
      : agent_name_(std::move(agent_name)),
        idle_sleep_us_(idle_sleep_us),
        allowed_devices_(std::move(allowed_devices)) {}
  ~RdmaEngine() override { release(); }

  void prepare(const proto::Plan& plan, EngineEventSink events) override;
  // True once every sending QP is connected (or failed, reported as an event): prepare() starts
  // the connects, so at the start time there is nothing left to do but post.
  bool ready() override;
  void start(std::int64_t start_ns) override;
  std::vector<proto::StreamCounters> sample() override;
  void stop() noexcept override;
  // Joins the CM thread, disconnects, and destroys every connection's verbs resources.
  void release() noexcept override;

 private:
  struct NicPort {
    std::string device;
    std::uint8_t port = 0;
    std::unique_ptr<LinkWatch> link = std::make_unique<LinkWatch>();  // its state, kept by port_watch_
    std::unique_ptr<PortCounterReader> reader;
    PortCounterSnapshot baseline;
    std::unique_ptr<QpCounterReader> qp_counters;  // its QPs' own counters, where the NIC binds them
    std::unique_ptr<NetdevCounterReader> netdev;   // the port's ethtool counters; null when none
    PortCounterSnapshot netdev_baseline;
    std::vector<std::string> peers;
  };

  void cm_loop();
  void handle_cm_event(rdma_cm_event& event);
  void begin_connect(Connection& connection);
  void on_route_resolved(Connection& connection);
  void on_connect_request(rdma_cm_event& event);
  void build_resources(Connection& connection, rdma_cm_id* id, std::uint32_t slots, bool receiver);
  void retry_or_fail(Connection& connection, const std::string& why);
  // An error rdma_cm reports on a connection that was established: it fails, if it still ran.
  void fail_established(Connection& connection, const std::string& why);
  void note_nic_port(const Connection& connection);
  // Opens the port's per-QP counter reader where the device can have one; says why not otherwise.
  void open_qp_counters(const Connection& connection, NicPort& port);
  // Says before the start, once a test, when checking what this agent may receive would take half
  // its datapath thread or more (its receiving port's speed, or its senders' rates). CM thread.
  void note_check_capacity(const Connection& connection);
  bool check_capacity_said_ = false;
  // This core's time to check a byte of the test's messages (check_load.hpp), measured in
  // prepare() before the CM and sampling threads start, which only read it: never on the CM thread,
  // whose connections' handshakes would wait for it.
  double check_ns_per_byte_ = 0;
  // A sender's pacing, from the plan and its device (pacing.hpp): false when pacing: hardware
  // cannot be had, the flow then failed and said why. And the NIC's limit set once it connected.
  bool choose_pacing_for(Connection& connection);
  bool set_hardware_rate(Connection& connection);
  std::atomic<bool> pacing_reported_{false};

  // Recovery (rdma_recovery.cpp), CM thread unless said otherwise.
  bool reconnects() const { return plan_.rdma().recovery() == "reconnect"; }
  // Established -> Broken, once, from any thread; reports `why`. False when it was not established.
  bool break_flow(Connection& connection, proto::AgentEvent::Kind kind, const std::string& why);
  // On port_watch_'s thread: a used port went down or came up: LINK_DOWN/LINK_UP events; under
  // reconnect a port that went down breaks its flows.
  void on_port_change(const std::string& key, const LinkChange& change);
  bool port_up(const Connection& connection);
  // Broken flows whose port is up: disconnect them and connect a successor (senders).
  void recover();
  void release_retired();
  // The accepting side: the flow's latest receiver, which a sender's new QP takes over from (broken,
  // disconnected and retired here if it was not yet), or null for a new flow.
  Connection* replace_receiver(const Connection& incoming);
  std::unique_ptr<Connection> successor_of(const Connection& broken) const;
  // Datapath: the flow made progress (a completion, a message): closes a successor's outage, or
  // counts a sender's silence longer than its gap as downtime.
  void note_progress(Connection& connection, std::int64_t now);
  void note_path_mtu(Connection& connection);
  // A sender's silence longer than one retransmission explains counts as downtime: its gap_ns.
  void note_ack_timeout(Connection& connection);
  // The QP's UDP source port (what ECMP hashes) from its flow label and QP numbers, and its addresses.
  void note_flow(Connection& connection);
  void start_tracing();
  void set_id_options(rdma_cm_id* id);

  // Counts an integrity error (and reports the first) unless the message checks out.
  void verify(Connection& c, const std::uint8_t* message, std::size_t length, std::uint64_t expected_seq,
              std::uint64_t count);
  bool post_receive(Connection& c, std::uint32_t slot);
  // Training-step replay (plan.rdma().collective set): what one QP sends per step, how much may
  // be posted now, and the step's end.
  std::uint64_t step_target(const Connection& c) const;
  std::uint64_t step_allowance(Connection& c, std::int64_t now, double rate_bytes_per_ns);
  void record_step(Connection& c, std::int64_t now);
  // WRITE with immediate and SEND use up a receive WR per message: the receiver returns credits.
  bool consumes_receives() const;

  void datapath_loop();
  // Both return whether anything completed or was posted.
  bool serve_sender(Connection& connection, std::int64_t now, bool may_send, double byte_budget);
  // serve_sender's steps: completions (credits, checked READs, a step's end), what may be posted
  // now, and one list of WRs posted.
  struct SendBatch {
    int built = 0;   // WRs made
    int posted = 0;  // of them, taken by ibv_post_send
    std::uint64_t bytes = 0;
  };
  int reap_sender_completions(Connection& connection, std::int64_t now);
  std::uint64_t send_allowance(Connection& connection, std::int64_t now, double byte_budget);
  SendBatch post_sends(Connection& connection, std::int64_t now, std::uint64_t allowance);
  void on_post_send_error(Connection& connection, SendBatch& batch, ibv_send_wr* wrs, ibv_send_wr* bad, int error);
  bool serve_receiver(Connection& connection, std::int64_t now);
  void on_completion_error(Connection& connection, const ibv_wc& completion);
  // `connection`: the flow it happened to, whose stream the event belongs to.
  void emit(proto::AgentEvent::Kind kind, const std::string& message, const Connection* connection = nullptr);
  void emit(proto::AgentEvent::Kind kind, const std::string& message, const std::string& stream_id);
  // The stream a connection reports as: "flow:vm2/qp0" (sender), "sink:", "read:", "source:";
  // on rails "flow:vm2/rail1/qp0".
  std::string stream_id(const Connection& connection) const;
  static const char* stream_kind(bool sender, bool reads) {
    return sender ? (reads ? "read" : "flow") : (reads ? "source" : "sink");
  }

  enum class Operation { Write, WriteImm, Send, Read };

  std::string agent_name_;
  unsigned idle_sleep_us_;
  std::vector<std::string> allowed_devices_;

  // Why a flow may not go through `device` (the profile names another, or this host does not
  // offer it), or empty when it may.
  std::string device_refusal(const Connection& connection, const std::string& device) const;
  Operation operation_ = Operation::Write;
  proto::Plan plan_;
  EngineEventSink events_;
  std::int64_t prepared_ns_ = 0;
  std::int64_t start_ns_ = 0;
  std::atomic<std::int64_t> stopped_ns_{std::numeric_limits<std::int64_t>::max()};

  EventChannel channel_;
  CmId listener_;
  std::mutex mutex_;  // guards connections_ (the vector, not the connections) and nic_ports_
  std::vector<std::unique_ptr<Connection>> connections_;
  // Connect requests refused (refuse_connect_request): their ids wait here for their event's ack,
  // and each claimed name and reason is reported once, up to kMaxRefusalsReported of them.
  std::vector<CmId> refused_ids_;
  std::set<std::string> refusals_reported_;
  std::uint64_t receivers_accepted_ = 0;  // this test's connect requests past refuse_connect_request
  static constexpr std::size_t kMaxRefusalsReported = 64;
  std::map<std::string, NicPort> nic_ports_;  // "device/port"
  // Every used port's state (their LinkWatches are nic_ports_'s): made by prepare(), stopped first.
  std::unique_ptr<PortWatch> port_watch_;
  std::atomic<unsigned> connections_version_{0};  // bumped when a connection is established

  std::atomic<bool> cm_running_{false};
  std::atomic<bool> running_{false};
  std::thread cm_thread_;
  std::thread data_thread_;
  // Puts each receiving stream's share of bytes checked, and says, once a test, when checking
  // payloads took half the datapath thread or more since the last sample (check_load.hpp).
  // Sampling thread only.
  void note_checks(std::vector<proto::StreamCounters>& streams);
  std::uint64_t checked_before_ = 0;
  std::int64_t checked_at_ns_ = 0;
  bool check_share_said_ = false;
  // Traces the sending QPs' paths while the test runs; traced_ are those QPs, in its flow order.
  // Set once by tracing_thread_ under mutex_, which sample() holds to read them.
  std::unique_ptr<SocketPathTracer> tracer_;
  std::vector<const Connection*> traced_;
  std::thread tracing_thread_;
};

// Registers the "rdma" engine when this host has an RDMA device; otherwise notes clearly why not.
// allowed_devices (--rdma-device): offer and use only these devices; empty: every device found.
void add_rdma_engine(EngineCatalog& catalog, const std::string& agent_name, unsigned idle_sleep_us,
                     const std::vector<std::string>& allowed_devices = {});

// The bit rate a safety cap holds an rdma plan to: its rate (0, as fast as it can, is never under
// one), once the plan passed resolve_rdma_plan (EngineError otherwise).
double capped_bit_rate(const proto::Plan& plan);

}  // namespace tusk::rdma
