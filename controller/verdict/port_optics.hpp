// The optics of a test's host ports, judged: what each agent read of its ports' transceiver
// modules and FEC counters as the test started and ended (TestResult.optics), against the
// profile's `optics:` thresholds and the modules' own alarms. What the run outcome keeps of them is
// the module as read at the end, the FEC counters' rates and the findings, not the raw samples.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/optics_reading.hpp"
#include "controller/profile/optics_settings.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/optics_verdict.hpp"
#include "tusk.pb.h"

namespace tusk {

// The most ports one agent's result may report: a host has a few NICs of a few ports each.
inline constexpr std::size_t kMaxOpticsPortsPerAgent = 64;
// The longest interval between two readings taken as it is: a month-long test.
inline constexpr std::uint64_t kMaxOpticsIntervalNs = 30ull * 24 * 3600 * 1'000'000'000;

struct PortOpticsOutcome {
  std::string agent;
  std::string port;     // as the agent's engine names it
  std::string netdev;   // the kernel's name, which ethtool read
  std::string address;  // its data-plane address, as the agent gave it
  // Where the topology file places it (place_port_optics): its end ("h1:eth1"), the cable's other
  // end ("l1:p1") and the cable's name; empty where no file places it.
  std::string end, far_end, cable;
  std::optional<ModuleReading> module;
  std::optional<FecReading> fec;  // the counters as the test ended
  // The bits the port carried between the two FEC readings that its BER divides by: the line
  // rate over the interval where the kernel knew the speed, else the bytes it received (fewer
  // than the line carried, so the BER is then overstated: the safe side).
  std::uint64_t bits_carried = 0;
  bool bits_from_line_rate = false;
  std::string note;  // what the agent could not read
  OpticsVerdict verdict;
};

// What a profile's ports are judged against: its preset's thresholds, each replaced by the
// profile's own where it sets one.
OpticsThresholds optics_thresholds(const OpticsSettings& settings);

// One port of one agent, from the agent's message (every field bounded again here).
PortOpticsOutcome judge_port_optics(const std::string& agent, const proto::PortOptics& reported,
                                    const OpticsThresholds& thresholds);

// One line for the summary: "optics: 4 ports read, 2 with module diagnostics, 2 with FEC
// counters; 1 failing (h1 ens1f0), 1 with warnings".
std::string optics_summary_text(const std::vector<PortOpticsOutcome>& ports);

// Finds the port's cable in the topology file by its address.
void place_port_optics(PortOpticsOutcome& port, const FabricTopology& topology);

// "h1 ens1f0 (0000:3b:00.0)": the port as a technician finds it.
std::string port_optics_title(const PortOpticsOutcome& port);

}  // namespace tusk
