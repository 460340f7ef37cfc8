// The RDMA engine: RC queue pairs through librdmacm, posting RDMA WRITEs (with immediate data when
// the data is checked) to every peer the plan names, `qps_per_peer` QPs each, and receiving the
// writes of whoever connects to this agent, with every message's flow, sequence, length and payload
// CRC checked. Also reads the NIC's counters of every port it used.
//
// Threads: prepare() listens and starts a connection-manager thread (connects with retries while
// the peers come up, accepts); ready() says when every sending QP is connected, and the agent
// answers the plan only then, so traffic begins at the start time and not a connect later.
// start() starts one datapath thread that polls every connection's CQ and posts work requests. sample() reads atomics and sysfs. stop() joins both and tears the
// connections down in reverse creation order.
//
// Files: rdma_engine.cpp (set-up: checks, listener, connecting, stop), rdma_datapath.cpp (the
// datapath thread), rdma_sampling.cpp (counters).
//
// Flow control when data is checked: the receiver has `slots` message buffers and returns credits
// (SEND with immediate = messages verified) so a sender never overwrites a buffer not yet checked.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/engine.hpp"
#include "agent/nic/netdev_counters.hpp"
#include "agent/rdma/port_counters.hpp"
#include "agent/rdma/socket_path_tracer.hpp"
#include "agent/rdma/verbs_owners.hpp"
#include "common/latency_histogram.hpp"

namespace tusk::rdma {

// Completion statuses (ibv_wc_status) counted one by one; the rest go under "other".
inline constexpr std::size_t kCountedStatuses = 32;

// One RC connection: this agent's side of a QP, as sender or receiver. Members in creation order.
struct Connection {
  enum class Role { Sender, Receiver };
  enum class State { Connecting, RetryWait, Established, Failed, Closed };

  Role role = Role::Sender;
  std::string peer;      // the other agent's name
  std::string address;   // its IP (senders)
  std::uint32_t flow_id = 0;  // QP index within the peer pair
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
  unsigned attempts = 0;
  std::atomic<std::int64_t> established_ns{0};
  // When the datapath first posted on this QP (a sender) or took in a message on it (a receiver):
  // the stream's traffic, and its throughput, begin here.
  std::atomic<std::int64_t> first_traffic_ns{0};

  // Datapath thread only.
  std::uint64_t posted = 0, completed = 0, credited = 0, verified = 0, credits_sent = 0, credit_sends = 0;
  std::int64_t last_progress_ns = 0;
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
      : agent_name_(std::move(agent_name)), idle_sleep_us_(idle_sleep_us), allowed_devices_(std::move(allowed_devices)) {}
  ~RdmaEngine() override { stop(); }

  void prepare(const proto::Plan& plan, EngineEventSink events) override;
  // True once every sending QP is connected (or failed, reported as an event): prepare() starts
  // the connects, so at the start time there is nothing left to do but post.
  bool ready() override;
  void start(std::int64_t start_ns) override;
  std::vector<proto::StreamCounters> sample() override;
  void stop() noexcept override;

 private:
  struct NicPort {
    std::unique_ptr<PortCounterReader> reader;
    PortCounterSnapshot baseline;
    std::unique_ptr<nic::NetdevCounterReader> netdev;  // the port's ethtool counters; null when none
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
  void note_nic_port(const Connection& connection);
  void note_path_mtu(Connection& connection);
  // The QP's UDP source port (what ECMP hashes) from its flow label and QP numbers, and its addresses.
  void note_flow(Connection& connection);
  void start_tracing();
  static constexpr double kMaxTraceRate = 10'000;
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
  bool serve_receiver(Connection& connection, std::int64_t now);
  void on_completion_error(Connection& connection, const ibv_wc& completion);
  // `connection`: the flow it happened to, whose stream the event belongs to.
  void emit(proto::AgentEvent::Kind kind, const std::string& message, const Connection* connection = nullptr);
  // The stream a connection reports as: "flow:vm2/qp0" (sender), "sink:", "read:", "source:".
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
  std::string device_refusal(const std::string& device) const;
  Operation operation_ = Operation::Write;
  proto::Plan plan_;
  EngineEventSink events_;
  std::int64_t prepared_ns_ = 0;
  std::int64_t start_ns_ = 0;

  EventChannel channel_;
  CmId listener_;
  std::mutex mutex_;  // guards connections_ (the vector, not the connections) and nic_ports_
  std::vector<std::unique_ptr<Connection>> connections_;
  std::map<std::string, NicPort> nic_ports_;  // "device/port"
  std::atomic<unsigned> connections_version_{0};  // bumped when a connection is established

  std::atomic<bool> cm_running_{false};
  std::atomic<bool> running_{false};
  std::thread cm_thread_;
  std::thread data_thread_;
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

// The bit rate a safety cap holds an rdma plan to: its rate (0, as fast as it can, is never under one).
double capped_bit_rate(const proto::Plan& plan);

}  // namespace tusk::rdma
