// The controller's side of a burn-in that covers a whole pod with a shift schedule: a profile of
// `topology: shift` grouped by leaf over a modelled leaf-spine fabric (tests/support/
// leaf_spine_model.hpp), planned step by step as a run plans it (the leaves read from the topology
// file, every agent's plan made and described); each step's results simulated (every flow's
// frames, losses and path trace, with faults on random links), its streams judged and localised
// as judge_test does; then all steps judged together (the schedule's localisation and link
// coverage). Prints the time of each phase and the process's peak RSS, and whether the faults were
// named; exits 1 when a fault was missed or a healthy link named.
// --rails R: each host has R NICs, NIC r on its group's rail-r leaf (a rail-optimised pod: R × leaves
// leaves under the same spines), and every step pairs NIC r with NIC r of the peer, as an rdma
// test's rails do; each NIC is one agent here, rail by rail.
//
//   shift_schedule_sim [--leaves 64] [--spines 16] [--hosts 64] [--rails 1] [--flows 8] [--shifts 65]
//                      [--faults 2] [--frames 10000] [--seed 1] [--report FILE]
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/resource.h>
#include <CLI/CLI.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "controller/method/method_result.hpp"
#include "controller/method/method_steps.hpp"
#include "controller/method/step_fold.hpp"
#include "controller/plan/planner.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/reports.hpp"
#include "controller/run/test_judgement.hpp"
#include "controller/verdict/flow_table.hpp"
#include "controller/verdict/link_localisation.hpp"
#include "controller/verdict/path_faults.hpp"
#include "tests/support/leaf_spine_model.hpp"

namespace {

using namespace tusk;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point began) {
  return std::chrono::duration<double>(Clock::now() - began).count();
}

double peak_mib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;
}

std::uint64_t draw(std::mt19937_64& rng, std::uint64_t trials, double p) {
  if (trials == 0 || p <= 0) return 0;
  return std::binomial_distribution<std::uint64_t>(trials, std::min(p, 1.0))(rng);
}

struct LinkFault {
  std::string link;
  double loss = 0;
};

// One step's streams, as the agents would report them: per sender and peer, `flows` flows hashed
// onto the fabric by source port; the tx stream carries the trace, the rx stream the counts.
std::vector<StreamVerdict> simulate_step(const testing::LeafSpineShape& shape,
                                         const std::vector<testing::ModelHost>& hosts, const ShiftStep& step,
                                         const TestSpec& spec, const std::vector<LinkFault>& faults,
                                         std::uint64_t frames, std::mt19937_64& rng) {
  constexpr std::uint64_t kProbesPerTtl = 100;
  std::vector<StreamVerdict> streams;
  streams.reserve(hosts.size() * static_cast<std::size_t>(shape.flows) * 2);
  for (std::size_t s = 0; s < hosts.size(); ++s) {
    for (const std::size_t d : step.peers[s]) {
      const auto& src = hosts[s];
      const auto& dst = hosts[d];
      for (int k = 0; k < shape.flows; ++k) {
        const int port = 49152 + static_cast<int>(step.number) * 16 + k;
        const testing::ModelPath path = testing::model_path(shape, src, dst, port);
        auto [tx, rx] = testing::model_flow_streams(src, dst, port, k + 1);
        double reach = 1;
        for (std::size_t ttl = 1; ttl <= path.links.size(); ++ttl) {
          for (const auto& fault : faults) {
            if (fault.link == path.links[ttl - 1]) reach *= 1 - fault.loss;
          }
          auto& hop = *tx.add_path();
          hop.set_ttl(static_cast<std::uint32_t>(ttl));
          hop.set_address(path.answers[ttl - 1]);
          hop.set_probes(kProbesPerTtl);
          hop.set_answers(draw(rng, kProbesPerTtl, reach));
          hop.set_destination(ttl == path.links.size());
        }
        const double seconds = static_cast<double>(spec.duration.count()) / 1e3;
        tx.mutable_counters()->insert({"tx_frames", frames});
        streams.push_back(judge_stream(spec, src.agent, tx, seconds));

        const std::uint64_t lost = draw(rng, frames, 1 - reach);
        (*rx.mutable_counters())["rx_frames"] = frames - lost;
        (*rx.mutable_counters())["rx_bytes"] = (frames - lost) * 256;
        (*rx.mutable_counters())["lost_frames"] = lost;
        (*rx.mutable_counters())["errored_frames"] = 0;
        streams.push_back(judge_stream(spec, dst.agent, rx, seconds));
      }
    }
  }
  return streams;
}

}  // namespace

// Rail r's copy of a step among the first rail's NICs: NIC r of each sender to NIC r of its peers
// (agents are rail by rail, `per_rail` each).
std::vector<std::vector<std::size_t>> on_every_rail(const std::vector<std::vector<std::size_t>>& peers,
                                                    std::size_t per_rail, int rails) {
  std::vector<std::vector<std::size_t>> all(per_rail * static_cast<std::size_t>(rails));
  for (std::size_t r = 0; r < static_cast<std::size_t>(rails); ++r) {
    for (std::size_t i = 0; i < peers.size() && i < per_rail; ++i) {
      for (const std::size_t j : peers[i]) all[r * per_rail + i].push_back(r * per_rail + j);
    }
  }
  return all;
}

int main(int argc, char** argv) {
  testing::LeafSpineShape shape{64, 16, 64, 8};
  int shifts = 65, fault_count = 2, rails = 1;
  std::uint64_t frames = 10000, seed = 1;
  CLI::App app{"A pod's shift schedule through the controller's planner, verdict and localisation"};
  app.add_option("--leaves", shape.leaves);
  app.add_option("--spines", shape.spines);
  app.add_option("--hosts", shape.hosts, "per leaf");
  app.add_option("--rails", rails, "NICs a host, each on its own rail's leaves")->check(CLI::Range(1, 16));
  app.add_option("--flows", shape.flows, "per peer");
  app.add_option("--shifts", shifts, "steps run: 1..N of the schedule");
  app.add_option("--faults", fault_count, "lossy fabric links (0.2 % to 2 %)");
  app.add_option("--frames", frames, "per flow and step");
  app.add_option("--seed", seed);
  std::string report_path;
  app.add_option("--report", report_path, "write the schedule's report.json here (as a run's final report)");
  CLI11_PARSE(app, argc, argv);

  // Rail r's leaves are leaves (r - 1) × L + 1 .. r × L of the model: its NICs, one agent each, are
  // the r-th block of the model's hosts, in the first rail's order.
  const int group_leaves = shape.leaves;
  shape.leaves *= rails;
  const auto hosts = testing::model_hosts(shape);
  const std::size_t n = hosts.size();
  const std::size_t per_rail = n / static_cast<std::size_t>(rails);
  std::string names;
  for (const auto& host : hosts) names += (names.empty() ? "" : ", ") + host.agent;
  const Profile profile = load_profile_text(fmt::format(R"(name: pod burn-in
agents: {{hosts: [{}]}}
tests:
  - name: every cross-leaf pair
    engine: dpdk
    topology: shift
    group_by: leaf
    shifts: 1..{}
    step: 30s
    rate: 10kpps
    frame_size: 256B
    encapsulation: ipv4_udp
    flows_per_peer: {}
    thresholds: {{max_lost_frames: 0, min_link_coverage: 100%}}
)",
                                                        names, shifts, shape.flows),
                                            "pod.yaml");
  const FabricTopology topology = testing::lab_topology(shape);
  std::mt19937_64 rng(seed);
  std::vector<LinkFault> faults;
  {
    std::vector<std::string> fabric_links;
    for (int i = 1; i <= shape.leaves; ++i) {
      for (int j = 1; j <= shape.spines; ++j) {
        fabric_links.push_back(testing::uplink(i, j));
        fabric_links.push_back(testing::downlink(i, j));
      }
    }
    std::shuffle(fabric_links.begin(), fabric_links.end(), rng);
    std::uniform_real_distribution<double> log_rate(std::log(2e-3), std::log(2e-2));
    for (int f = 0; f < fault_count && f < static_cast<int>(fabric_links.size()); ++f) {
      faults.push_back({fabric_links[static_cast<std::size_t>(f)], std::exp(log_rate(rng))});
    }
  }
  fmt::print(
      "shift_schedule_sim: {} leaves x {} spines, {} hosts x {} rails ({} NICs), {} flows per peer, shifts 1..{}, "
      "faults:",
      group_leaves, shape.spines, per_rail, rails, n, shape.flows, shifts);
  for (const auto& fault : faults) fmt::print(" [{} loses {:.2g}%]", fault.link, fault.loss * 100);
  fmt::print("\n");

  // Plan: the leaves from the topology file, then every step's plans, described as a run sends them.
  auto began = Clock::now();
  std::map<std::string, proto::Inventory> inventories;
  std::map<std::string, testing::ModelHost> host_of;
  std::vector<std::string> first_rail;
  for (const auto& host : hosts) {
    host_of[host.agent] = host;
    if (host.leaf <= group_leaves) first_rail.push_back(host.agent);
    auto* port = inventories[host.agent].add_dpdk_ports();
    port->set_name("net_af_packet0");
    port->set_mac(fmt::format("02:00:00:{:02x}:{:02x}:{:02x}", host.leaf >> 8, host.leaf & 0xff, host.host));
    port->set_ipv4(testing::host_address(host.leaf, host.host) + "/24");
    port->set_gateway(testing::gateway(host.leaf));
  }
  // The first rail's NICs in name order, as a run orders its agents; then each other rail's in the
  // same order, so that agent i of rail r is NIC r of the host that is agent i of rail 1.
  std::sort(first_rail.begin(), first_rail.end());
  std::vector<std::string> agents;
  std::vector<testing::ModelHost> ordered;
  for (int r = 0; r < rails; ++r) {
    for (const auto& name : first_rail) {
      const testing::ModelHost& host = host_of[name];
      ordered.push_back(host_of[fmt::format("l{}h{}", host.leaf + r * group_leaves, host.host)]);
      agents.push_back(ordered.back().agent);
    }
  }
  const ShiftGroups groups = group_agents(
      first_rail,
      [&](const std::string& agent) {
        return topology.attached_to(testing::host_address(host_of[agent].leaf, host_of[agent].host));
      },
      "no leaf");
  const TestSpec& test = profile.tests.front();
  // A shift's steps do not depend on what the last one measured: all of them at once, among the
  // first rail's NICs, then on every rail.
  std::vector<PlannedStep> planned = *MethodSteps(test, per_rail, groups).fixed_steps();
  Profile with_steps = profile;
  std::size_t plans_made = 0;
  for (auto& step : planned) {
    step.peers = on_every_rail(step.peers, per_rail, rails);
    step.agents = n;
    with_steps.tests.push_back(step.spec);
    auto plans = plan_test(with_steps, with_steps.tests.size() - 1, agents, "bench", &step.peers);
    for (auto& plan : plans) describe_plan(plan, inventories);
    plans_made += plans.size();
    // A run plans a step as it comes: its peers (32,768 agents' a step) are not held for the night.
    std::vector<std::vector<std::size_t>>().swap(step.peers);
  }
  const double plan_s = seconds_since(began);
  fmt::print("plan: {} steps, {} plans in {:.1f} s ({:.0f} plans/s); peak {:.0f} MiB\n", planned.size(), plans_made,
             plan_s, static_cast<double>(plans_made) / plan_s, peak_mib());

  // Each step: results simulated (not timed), its streams judged and localised as judge_test does.
  MethodResult result;
  result.kind = MethodKind::Shift;
  double judge_s = 0, simulate_s = 0;
  std::size_t streams = 0, kept = 0;
  for (const auto& step : planned) {
    ShiftStep shift = shift_step(*test.shift, per_rail, groups, static_cast<std::uint32_t>(result.steps.size() + 1));
    shift.peers = on_every_rail(shift.peers, per_rail, rails);
    auto simulated_at = Clock::now();
    TestOutcome outcome;
    outcome.spec = step.spec;
    auto judged = simulate_step(shape, ordered, shift, step.spec, faults, frames, rng);
    simulate_s += seconds_since(simulated_at);
    const auto judging = Clock::now();
    outcome.streams = std::move(judged);
    outcome.localisation = localise(outcome.streams, &topology);
    outcome.path_faults = path_fault_signs(outcome.streams);
    streams += outcome.streams.size();
    // As MethodSteps::record does: the step's flows join the schedule's table, its passing streams go.
    fold_schedule_step(outcome, static_cast<std::uint32_t>(result.steps.size() + 1), result);
    kept += outcome.streams.size();
    judge_s += seconds_since(judging);
    MethodStep row;
    row.label = shift.label;
    result.steps.push_back(row);
    result.step_outcomes.push_back(std::move(outcome));
  }
  fmt::print(
      "steps: {} streams simulated in {:.1f} s; judged and localised step by step in {:.1f} s ({:.0f} ms a "
      "step); {} streams kept; flows: {} kept, {} summed per link, {:.1f} B a flow; peak {:.0f} MiB\n",
      streams, simulate_s, judge_s, 1e3 * judge_s / static_cast<double>(planned.size()), kept,
      result.schedule_flows->size(), result.schedule_flows->clean_flows(),
      static_cast<double>(result.schedule_flows->bytes()) /
          static_cast<double>(result.schedule_flows->size() + result.schedule_flows->clean_flows()),
      peak_mib());

  // All steps together: the schedule's localisation and coverage.
  began = Clock::now();
  TestOutcome schedule;
  schedule.spec = test;
  judge_steps_together(schedule, result, &topology);
  const double together_s = seconds_since(began);
  fmt::print("together: {} flows localised in {:.1f} s; {}; peak {:.0f} MiB ({:.0f} B a stream)\n",
             schedule.localisation.flows->size() + schedule.localisation.flows->clean_flows(), together_s,
             schedule.coverage ? schedule.coverage->text() : std::string("no coverage"), peak_mib(),
             peak_mib() * 1024 * 1024 / static_cast<double>(streams));

  if (!report_path.empty()) {
    began = Clock::now();
    RunOutcome run;
    run.run_id = "shift-schedule-sim";
    schedule.method = std::make_shared<MethodResult>(std::move(result));
    run.tests.push_back(std::move(schedule));
    {
      std::ofstream out(report_path);
      write_report_json(run, out);
    }
    fmt::print("report.json: {:.1f} MiB in {:.1f} s; peak {:.0f} MiB\n",
               static_cast<double>(std::filesystem::file_size(report_path)) / (1024.0 * 1024.0), seconds_since(began),
               peak_mib());
    schedule = std::move(run.tests.front());
  }
  std::set<std::string> broken;
  for (const auto& fault : faults) broken.insert(fault.link);
  std::set<std::string> named;
  for (const auto& suspect : schedule.localisation.suspects) {
    if (suspect.confidence == Confidence::Low) continue;
    named.insert(suspect.key);
    for (const auto& tied : suspect.tied) {
      if (broken.contains(tied)) named.insert(tied);
    }
  }
  std::set<std::string> missed, wrong;
  std::set_difference(broken.begin(), broken.end(), named.begin(), named.end(), std::inserter(missed, missed.end()));
  for (const auto& suspect : schedule.localisation.suspects) {
    if (suspect.confidence == Confidence::Low) continue;
    const bool right =
        broken.contains(suspect.key) || std::any_of(suspect.tied.begin(), suspect.tied.end(),
                                                    [&](const std::string& link) { return broken.contains(link); });
    if (!right) wrong.insert(suspect.key);
  }
  fmt::print("named {} of {} faults{}{}; total plan + judge + together {:.1f} s\n", broken.size() - missed.size(),
             broken.size(), missed.empty() ? "" : fmt::format(", missed {}", fmt::join(missed, ", ")),
             wrong.empty() ? "" : fmt::format(", wrongly named {}", fmt::join(wrong, ", ")),
             plan_s + judge_s + together_s);
  return missed.empty() && wrong.empty() ? 0 : 1;
}
