// What tells one link from another in a localisation: its probes' loss and damage against a hop
// before it (a two-proportion z-test each), that comparison as text, and what to do about a
// suspect link.
#pragma once

#include <string>
#include <vector>

#include "controller/topology/fabric_topology.hpp"
#include "controller/verdict/link_localisation.hpp"

namespace tusk {

// Sets loss_z and damage_z from the counts gathered.
void finish_probe_evidence(ProbeEvidence& p);

// "12 of 400 probes unanswered here (3%) vs 0% a hop before, ...".
std::string probe_text(const ProbeEvidence& p);

// What the switches' own counts of a direction say to do first (`confirmed`: they count loss), from
// the port it leaves to the one it enters.
std::vector<std::string> counter_steps(const CountedDirection& counted, bool confirmed, const std::string& out_end,
                                       const std::string& in_end);

// What an engineer does next about `suspect`: the counters to read at which end, the optic to
// swap, the re-test of only the flows through it.
std::vector<std::string> next_steps(const LinkSuspect& suspect, const NamedLink& named);

}  // namespace tusk
