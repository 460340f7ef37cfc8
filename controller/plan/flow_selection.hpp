// Re-testing only some flows of an earlier run: those through one link (`tusk-controller run
// PROFILE --only-through LINK --from REPORT`, from its tests[].localisation.flows[].links) or
// those that failed (`--only-failing REPORT`), and plans only those: each sender sends to the receivers
// of its selected flows and, for DPDK ipv4_udp, only on those flows' UDP source ports (so ECMP
// puts them on the same paths again); agents left with no flow take part idle. RDMA QPs get new
// source ports when they connect again, so their re-test covers the same host pairs, not paths.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "controller/plan/planner.hpp"

namespace tusk {

// A flow whose sender is its receiver stands for the agent's whole part in the test (a loopback
// test's own port, or a test that failed as a whole): its plan is kept as the profile makes it.
struct SelectedFlow {
  std::string sender, receiver;
  std::uint32_t src_port = 0;
};

struct FlowSelection {
  std::string link;
  std::map<std::string, std::vector<SelectedFlow>> by_test;  // by test name
};

// The flows of `report` (a report.json) whose links include `link` (a link's key, e.g.
// "l1:s2 -> s2:l1", or its name with the cable). Throws std::runtime_error saying what the
// report lacks: no localisation, or no flow through that link (listing the links it has).
FlowSelection select_flows_through(const nlohmann::json& report, const std::string& link);

// What failed in `report`, by test: each failing routed flow (localisation) and each other failing
// stream between two hosts, with its UDP source port where it has one; a failing stream of a
// host's own port, and every agent of a test that failed with nothing narrower (a problem of the
// test's), as that agent's whole part. A method test's steps are not re-planned: it is not
// selected. Throws std::runtime_error when the report is none, or nothing in it failed.
FlowSelection select_failing_flows(const nlohmann::json& report);

// `plans` (one test's, from plan_test) cut down to `flows`.
void restrict_plans(std::vector<AgentPlan>& plans, const std::vector<SelectedFlow>& flows);

}  // namespace tusk
