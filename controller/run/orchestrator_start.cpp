// Before a test runs: waiting for its agents, syncing their clocks, the cabling check and the
// switches read before traffic, and every agent's plan handed out and acknowledged.
#include "controller/run/orchestrator.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>

#include "common/clock.hpp"
#include "common/counter_names.hpp"
#include "common/heap.hpp"
#include "common/rates.hpp"
#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/method/fabric_methods.hpp"
#include "controller/method/method_steps.hpp"
#include "controller/metrics/live_metrics.hpp"
#include "controller/plan/planner.hpp"
#include "controller/run/agent_registry.hpp"
#include "controller/run/clock_sync.hpp"
#include "controller/run/hook_command.hpp"
#include "controller/run/progress_line.hpp"
#include "controller/run/run_data.hpp"
#include "controller/run/switch_watch.hpp"
#include "controller/run/test_judgement.hpp"
#include "controller/series/series_file.hpp"
#include "controller/switches/host_lldp.hpp"
#include "controller/switches/switch_poller.hpp"
#include "controller/verdict/unreceived_frames.hpp"

namespace tusk::orchestration {

// What the run still waits for: the selection's shortfall, or, with every agent it selects
// there, the agents that may still match its patterns before they settle.
std::string Orchestrator::waiting_for(const AgentSelection& selection) {
  return selection.shortfall.empty() ? "every agent selected so far is here; more may match the profile's "
                                       "patterns until none has come for a while"
                                     : selection.shortfall;
}

bool Orchestrator::wait_for_agents() {
  const auto wait = options_.wait_override.value_or(profile_.agents.wait);
  const auto deadline = SteadyClock::now() + wait;
  const bool settle = profile_.agents.hosts.empty() && !profile_.agents.patterns.empty() && !profile_.agents.count;
  std::size_t last_size = 0;
  auto last_change = SteadyClock::now();
  auto last_log = SteadyClock::now();
  spdlog::info("waiting up to {} for the profile's agents", units::format_duration(wait));
  while (true) {
    std::vector<std::string> connected;
    for (const auto& link : registry_->links()) {
      if (link.connected) connected.push_back(link.name);
    }
    auto selection = select_agents(profile_.agents, connected);
    const auto now = SteadyClock::now();
    if (selection.chosen.size() != last_size) {
      last_size = selection.chosen.size();
      last_change = now;
    }
    if (selection.complete && (!settle || now - last_change >= kSettleTime)) {
      agents_ = selection.chosen;
      spdlog::info("running on {} agents: {}", agents_.size(), fmt::join(agents_, ", "));
      return true;
    }
    if (now >= deadline || g_interrupted) {
      outcome_.missing_agents = selection.missing;
      if (g_interrupted) {
        phase_ = fmt::format("while waiting for agents ({} connected; {})", connected.size(), selection.shortfall);
        return false;
      }
      fail_run(kExitAgentsMissing,
               fmt::format("agents missing after {}: {}", units::format_duration(wait), selection.shortfall));
      return false;
    }
    if (now - last_log >= 5s) {
      last_log = now;
      spdlog::info("still waiting for agents ({} connected): {}", connected.size(), waiting_for(selection));
    }
    progress_.update(fmt::format("waiting for agents: {} connected, {}", connected.size(), waiting_for(selection)));
    std::this_thread::sleep_for(kPollInterval);
  }
}

// Fresh clock estimates for every agent of the test; an agent that does not answer keeps offset 0.
std::map<std::string, ClockSample> Orchestrator::sync_clocks() {
  registry_->sync_clocks(test_agents_, kClockProbes);
  const auto deadline = SteadyClock::now() + 3s + clock_sync_duration(test_agents_.size(), kClockProbes);
  std::map<std::string, ClockSample> clocks;
  while (true) {
    clocks.clear();
    for (const auto& link : registry_->links()) {
      if (link.clock && link.clock_samples >= kClockProbes) clocks[link.name] = *link.clock;
    }
    std::size_t ready = 0;
    for (const auto& name : test_agents_) ready += clocks.count(name);
    if (ready == test_agents_.size() || SteadyClock::now() >= deadline) break;
    std::this_thread::sleep_for(kPollInterval);
  }
  for (const auto& link : registry_->links()) {
    if (link.clock) clocks.try_emplace(link.name, *link.clock);
  }
  for (const auto& name : test_agents_) {
    if (!clocks.count(name)) data_.on_fault(name, "no clock estimate: start time assumes its clock is ours");
  }
  return clocks;
}

// Every agent's plan for test `index`, with how it reaches its peers; nothing (and the run ends)
// when the test cannot be planned. `name` is the profile test's, for --only-through.
std::optional<std::vector<AgentPlan>> Orchestrator::plans_for(std::size_t index, const std::string& name,
                                                              const std::vector<std::string>& agents,
                                                              const std::vector<std::vector<std::size_t>>* step_peers) {
  try {
    auto plans = plan_test(profile_, index, agents, outcome_.run_id, step_peers);
    if (options_.only_flows) restrict_plans(plans, options_.only_flows->by_test.at(name));
    for (auto& plan : plans) describe_plan(plan, inventory_by_name_);
    return plans;
  } catch (const PlanError& e) {
    fail_run(kExitUsage, e.what());
    return std::nullopt;
  }
}

// Waits until every agent answered the plan; returns false (and ends the run) otherwise.
bool Orchestrator::all_lost(const std::vector<std::string>& agents) const {
  if (agents.empty()) return false;
  std::map<std::string, AgentLink> links;
  for (AgentLink& link : registry_->links()) links.emplace(link.name, std::move(link));
  return std::all_of(agents.begin(), agents.end(), [&](const std::string& name) {
    const auto link = links.find(name);
    return link == links.end() || (!link->second.connected && link->second.away_for > options_.lost_after);
  });
}

bool Orchestrator::hand_out_plans(const std::vector<AgentPlan>& plans, int index, bool silence_ends_run) {
  plan_silence_.clear();
  data_.judge_windows(index, profile_.tests[index]);
  data_.judge_optics_intervals(index, profile_.tests[index]);
  for (const auto& plan : plans) {
    data_.expect(plan.agent, index, most_streams_of(plan.plan));
    registry_->set_standing_orders(plan.agent, {envelope_of(plan.plan)});
  }
  const auto deadline = SteadyClock::now() + options_.plan_ack_timeout;
  while (true) {
    std::vector<std::string> refused, waiting;
    data_.with([&](RunState& s) {
      for (const auto& name : test_agents_) {
        const auto& ack = s.tests[{index, name}].plan_ack;
        if (!ack) {
          waiting.push_back(name);
        } else if (!ack->ok()) {
          refused.push_back(fmt::format("{}: {}", name, ack->error()));
        }
      }
    });
    if (waiting.empty() && refused.empty()) return true;
    if (!refused.empty() && waiting.empty()) {
      stop_all(index, "plan refused");
      fail_run(kExitUsage,
               fmt::format("test '{}': plan refused by {}", profile_.tests[index].name, fmt::join(refused, "; ")));
      return false;
    }
    // A schedule's step need not wait out the deadline for agents gone longer than a lost one is.
    const bool waiting_on_the_lost = !silence_ends_run && refused.empty() && all_lost(waiting);
    if (SteadyClock::now() >= deadline || g_interrupted || waiting_on_the_lost) {
      stop_all(index, g_interrupted ? "run interrupted" : "plan not acknowledged");
      if (!g_interrupted && !silence_ends_run && refused.empty()) {
        if (waiting_on_the_lost) {
          spdlog::warn("test '{}': {} lost before answering its plan: the step does not run",
                       profile_.tests[index].name, fmt::join(waiting, ", "));
        }
        plan_silence_ = std::move(waiting);
      } else if (!g_interrupted) {
        fail_run(kExitAgentsMissing, fmt::format("test '{}': no answer to the plan from {}", profile_.tests[index].name,
                                                 fmt::join(waiting, ", ")));
      }
      return false;
    }
    progress_.update(fmt::format("test '{}': {} of {} agents prepared", profile_.tests[index].name,
                                 test_agents_.size() - waiting.size(), test_agents_.size()));
    std::this_thread::sleep_for(kPollInterval);
  }
}

// The switches' LLDP against the topology file, before any traffic; false when `cabling:
// enforce` stops the run.
bool Orchestrator::check_cabling_first() {
  if (profile_.cabling == CablingMode::Off) return true;
  std::vector<HostLldp> hosts = hosts_lldp();
  if (!options_.topology) {
    outcome_.cabling = cabling_not_checked("no topology file to check it against (run --topology FILE)");
  } else if (options_.switches.empty() && hosts.empty()) {
    outcome_.cabling = cabling_not_checked(
        "no switch to read (--snmp-credentials, and a management address in the topology file) and no agent's "
        "host heard LLDP on a port (lldpd, or a DPDK port's own frames)");
  } else {
    phase_ = "checking the cabling";
    outcome_.cabling = check_cabling(*options_.topology, read_switches(options_.switches), hosts);
  }
  const CablingCheck& check = *outcome_.cabling;
  if (check.checked()) {
    spdlog::info("{}", check.text());
  } else {
    spdlog::warn("{}", check.text());
  }
  for (const auto& finding : check.findings) spdlog::warn("cabling: {}", finding.text());
  if (profile_.cabling != CablingMode::Enforce) return true;
  if (!check.checked()) {
    fail_run(kExitUsage,
             fmt::format("cabling: enforce: nothing was checked, so no traffic was started: {}", check.not_checked));
    return false;
  }
  if (check.clean()) return true;
  fail_run(kExitThresholdFailed,
           fmt::format("cabling: enforce: {} cable{} not where {} says, so no traffic was started: {}",
                       check.findings.size(), check.findings.size() == 1 ? " is" : "s are", options_.topology->file(),
                       check.findings.front().text()));
  return false;
}

// What the agents' hosts heard on their ports, from their inventories.
std::vector<HostLldp> Orchestrator::hosts_lldp() const {
  std::vector<HostLldp> hosts;
  for (const auto& name : agents_) {
    const auto inventory = inventory_by_name_.find(name);
    if (inventory == inventory_by_name_.end()) continue;
    auto heard = hosts_lldp_of(name, inventory->second);
    hosts.insert(hosts.end(), std::make_move_iterator(heard.begin()), std::make_move_iterator(heard.end()));
  }
  return hosts;
}

// The switches' counters and neighbours, now; a switch that cannot be read is said and skipped.
std::vector<SwitchReading> Orchestrator::read_switches_now(int index, const char* when) {
  if (options_.switches.empty()) return {};
  const auto began = SteadyClock::now();
  auto readings = read_switches(counters_only(options_.switches));
  std::size_t unreadable = 0;
  for (const auto& reading : readings) {
    if (reading.ok()) continue;
    ++unreadable;
    spdlog::warn("test {}: {} the test: {}", index, when, reading.error);
  }
  spdlog::info("test {}: read {} switches {} the test in {} ms{}", index, readings.size(), when,
               std::chrono::duration_cast<std::chrono::milliseconds>(SteadyClock::now() - began).count(),
               unreadable ? fmt::format(" ({} could not be read)", unreadable) : std::string());
  return readings;
}

}  // namespace tusk::orchestration
