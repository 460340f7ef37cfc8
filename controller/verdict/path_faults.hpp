// The signature of a path fault. Flows between the same two hosts share the hosts, their ports and
// their cables, and differ only in the path ECMP hashed each onto (their UDP source ports, or QPs'
// flow labels). When some of them fail while their siblings pass, neither host and neither host
// link can be the cause: a link or switch on the failing flows' paths is. Plain data in the run
// outcome, so every report says the same.
#pragma once

#include <string>
#include <vector>

#include "controller/verdict/verdict.hpp"

namespace tusk {

struct PathFaultSign {
  std::string receiver;              // the agent whose streams these are
  std::string sender;                // their peer
  std::vector<std::size_t> failing;  // indexes into the streams it was found in (TestOutcome::streams)
  std::vector<std::size_t> passing;
  // Passing siblings a schedule counted when their step ended and did not keep.
  std::size_t passing_not_kept = 0;
  std::string text(const std::vector<StreamVerdict>& streams) const;
};

// One sign per (receiver, sender, stream kind) whose streams of one flow each number two or more
// and both fail and pass.
std::vector<PathFaultSign> path_fault_signs(const std::vector<StreamVerdict>& streams);

// "192.168.101.10:49152 > 192.168.102.10:34997 udp", or "" for a stream that is no routed flow.
std::string flow_text(const proto::StreamCounters& stream);

}  // namespace tusk
