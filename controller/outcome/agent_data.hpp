// What a run learns of its agents, as plain data: each agent's clock sample and link state, and
// what it sent for one test (plan acknowledgement, samples, result, events). The run fills these
// (controller/run/); the outcome, the reports and the live metrics read them, and need none of the
// network code that gathered them.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "controller/outcome/sample_set.hpp"
#include "controller/outcome/stream_series.hpp"
#include "controller/verdict/optics_timeline.hpp"
#include "tusk.pb.h"

namespace tusk {

// One clock measurement of an agent (controller/run/clock_sync.hpp makes them).
struct ClockSample {
  std::int64_t offset_ns = 0;  // agent clock minus controller clock
  std::int64_t rtt_ns = 0;     // round trip without the agent's own processing time
};

// The small, frequently polled part of an agent's state: cheap to copy for thousands of agents.
struct AgentLink {
  std::string name;
  bool connected = false;
  std::chrono::steady_clock::duration away_for{};  // how long it has been disconnected
  std::optional<ClockSample> clock;
  std::size_t clock_samples = 0;
  std::uint64_t duplicate_records = 0;  // for the live metrics' health
  std::uint64_t missing_records = 0;
};

// A copy of what the orchestrator and the reports may read about an agent, taken under the
// registry's lock.
struct AgentView {
  std::string name;
  proto::Inventory inventory;
  std::string node;        // the host its actions name (controller/run/agent_identity.hpp)
  std::string node_proof;  // what makes it so
  bool connected = false;
  std::string remote;
  std::optional<ClockSample> clock;
  std::size_t clock_samples = 0;
  std::chrono::steady_clock::duration away_for{};  // how long it has been disconnected
  std::uint32_t connects = 0;
  std::uint64_t duplicate_records = 0;
  std::uint64_t missing_records = 0;
  std::uint64_t texts_cut = 0;       // its texts cut to their bound (controller/run/peer_texts.hpp)
  std::uint64_t texts_escaped = 0;   // and those with bytes written out
  proto::AgentState state_at_hello;  // what it said it was doing when it last registered
};

// What one agent sent for one test. Its samples are folded in as they come (each stream's latest
// counters and binned series) and written to the series file, never kept whole: its size grows
// with the streams, not with the test's length.
struct AgentTestData {
  std::optional<proto::PlanAck> plan_ack;
  SampleSet samples;                           // the sample indexes that arrived
  std::map<std::string, StreamSeries> series;  // by stream id; at most what the plan can make
  std::optional<proto::TestResult> result;
  SampleSet optics_samples;  // the OpticsSample indexes that arrived
  // Its ports' optics interval by interval, judged as they came: by port, at most
  // kMaxOpticsPortsPerAgent.
  std::map<std::string, OpticsTimeline> optics_timeline;
  std::vector<proto::AgentEvent> events;
  std::optional<ClockSample> clock;  // the estimate used for this test's start
  std::int64_t planned_start_agent_ns = 0;
  bool lost = false;  // disconnected past the loss timeout
};

// A fault of the run, on the controller's clock: an agent lost, a record refused, a test stopped.
struct Fault {
  std::int64_t time_ns = 0;
  std::string agent;
  int test_index = -1;
  std::string message;
};

}  // namespace tusk
