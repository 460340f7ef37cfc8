// Everything a run collects, as it arrives: plan acknowledgements, samples, events, results and
// faults, per test and agent. Filled from the registry's io thread, read by the orchestrator;
// every access goes through with() under one lock.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/run/clock_sync.hpp"
#include "tusk.pb.h"

namespace tusk {

struct AgentTestData {
  std::optional<proto::PlanAck> plan_ack;
  std::map<std::uint32_t, proto::Sample> samples;  // by sample index; duplicates cannot enter
  std::optional<proto::TestResult> result;
  std::vector<proto::AgentEvent> events;
  std::optional<ClockSample> clock;                // the estimate used for this test's start
  std::int64_t planned_start_agent_ns = 0;
  bool lost = false;                               // disconnected past the loss timeout
};

struct Fault {
  std::int64_t time_ns = 0;
  std::string agent;
  int test_index = -1;
  std::string message;
};

struct RunState {
  std::string run_id;
  int current_test = -1;
  // (test index, agent name) → data
  std::map<std::pair<int, std::string>, AgentTestData> tests;
  std::vector<Fault> faults;
};

class RunData {
 public:
  explicit RunData(std::string run_id) { state_.run_id = std::move(run_id); }

  void on_record(const std::string& agent, const proto::Record& record);
  void on_plan_ack(const std::string& agent, const proto::PlanAck& ack);
  void on_fault(const std::string& agent, const std::string& message);

  template <typename Function>
  auto with(Function&& function) {
    std::lock_guard lock(mutex_);
    return function(state_);
  }

 private:
  std::mutex mutex_;
  RunState state_;
};

}  // namespace tusk
