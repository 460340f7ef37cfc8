// One row per link that any evidence points at, joining what the flows, the probes, the switches'
// counters and the host ports' optics say of it, and the one thing a technician does first. The
// row is a join of facts the test already holds (its localisation, switch counters and optics);
// it adds no measurement, so every report shows the same row.
#pragma once

#include <string>
#include <vector>

#include "controller/verdict/link_localisation.hpp"
#include "controller/verdict/port_optics.hpp"
#include "controller/verdict/switch_counters.hpp"

namespace tusk {

struct LinkEvidenceRow {
  // The cable by both ends ("l1:s2 <-> s2:l1, cable C-3"), or a suspect's direction where no
  // cable of the topology file matches it.
  std::string link;
  std::string flows;     // the flows' fitted fault: "loss 2.07 % (1.61 % to 2.62 %), 12 of 15 flows failing"
  std::string probes;    // what its probes showed against the hop before
  std::string counters;  // each direction the switches counted: "l1:s2 -> s2:l1: 0 in errors, 347 in discards, ..."
  std::string optics;    // each host end's findings: "h1 eth1 (p0): lane 3 RX power ..."
  bool failing = false;  // a suspect the flows name, loss its switches counted, or an optic that failed
  std::string next_step;
};

// In order: the suspects as ranked, then links only the counters or the optics point at. A link
// with no evidence against it has no row.
std::vector<LinkEvidenceRow> link_evidence_rows(const Localisation& localisation, const SwitchCounterEvidence& counters,
                                                const std::vector<PortOpticsOutcome>& optics);

}  // namespace tusk
