// The small interface the agent drives. An engine runs one test at a time:
// prepare → ready()* → start → sample()* → stop → release. All but release are called from the
// agent's io thread; release() and the destructor run on the agent's engine reaper (engine_reaper.hpp).
// The datapath runs on the engine's own threads and must contain no virtual calls in its hot loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "agent/optics/kernel_port.hpp"
#include "common/lldp_neighbour.hpp"
#include "tusk.pb.h"

namespace tusk {

class EngineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Events the engine reports as they happen (link down, stall, ...), with the stream they happened
// to (its StreamCounters.stream_id; empty for the engine as a whole). Thread-safe: an engine may
// call it from its datapath threads.
using EngineEventSink =
    std::function<void(proto::AgentEvent::Kind kind, const std::string& message, const std::string& stream_id)>;

class Engine {
 public:
  virtual ~Engine() = default;

  // Builds every resource the test needs. Throws EngineError saying which device, port or call failed.
  virtual void prepare(const proto::Plan& plan, EngineEventSink events) = 0;
  // Whether the set-up prepare() began in the background (an RDMA engine's connections to its
  // peers) is over, so that start() only begins traffic. The agent acknowledges the plan, and the
  // controller therefore fixes the start time, only once this says true; it polls it on the io
  // thread. Set-up that failed (a peer that never answered) counts as over: the engine has
  // reported it as an event. Engines whose prepare() does everything itself answer true at once.
  virtual bool ready() { return true; }
  // Starts traffic at `start_ns` (realtime clock) and returns at once.
  virtual void start(std::int64_t start_ns) = 0;
  // Cumulative counters of every stream since start; cheap, and safe while traffic runs.
  virtual std::vector<proto::StreamCounters> sample() = 0;
  // Stops traffic and joins the datapath threads: sample() then gives the final counters.
  // Idempotent; never throws. Quick: what may wait on the kernel is release()'s.
  virtual void stop() noexcept = 0;
  // After stop(): gives the test's kernel resources back (QPs, CQs, MRs, connection ids), which
  // may block for seconds (a soft-RoCE QP's destroy waits for its packets in flight); called off
  // the io thread. Idempotent; never throws. The destructor does it too.
  virtual void release() noexcept {}
};

using EngineFactory = std::function<std::unique_ptr<Engine>()>;

// The bit rate an engine will really send under a plan, worked out from the plan alone as its
// datapath will; 0 for "as fast as it can". The agent holds it to the plan's safety cap before the
// engine is made, whatever the controller worked out.
using CappedBitRate = double (*)(const proto::Plan& plan);

struct EngineEntry {
  EngineFactory make;
  CappedBitRate capped_bit_rate = nullptr;
  std::vector<KernelPort> kernel_ports;
};

// Engines this agent binary can run, by profile engine name ("rdma", "dpdk").
struct EngineCatalog {
  std::map<std::string, EngineEntry> engines;
  std::vector<std::string> notes;               // why an engine is missing, for the registration message
  std::vector<proto::DpdkPort> dpdk_ports;      // the ports the dpdk engine opened
  std::vector<proto::RdmaDevice> rdma_devices;  // what the rdma engine found, discovered once
  proto::CheckRates check_rates;                // what one core checks, per engine that opened
  // The LLDP neighbour a DPDK port's own frames announced (by the port's name), for a port no
  // lldpd sees; unset without DPDK ports. Callable from any thread.
  std::function<std::optional<LldpNeighbour>(const std::string& port)> heard_lldp;
};

}  // namespace tusk
