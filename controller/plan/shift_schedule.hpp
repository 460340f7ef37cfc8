// A shift schedule (`topology: shift`): who sends to whom at each step, so that a fabric of n hosts
// is covered pair by pair with n flows (per flow count) at a time, not n² at once.
//
// Without groups, step k has agent i send to agent i + k (mod n): steps 1..n-1 cover every ordered
// pair exactly once. With groups (the leaves a topology file hangs the hosts off, or the profile's
// own list), a step is a group shift g and a member shift m: member j of group a sends to member
// (j + m) mod |b| of group b = a + g (mod groups), only where m < |b|, so every ordered pair of
// hosts in different groups is covered exactly once in (groups - 1) x (largest group) steps and
// no flow stays in its rack; scope rack keeps g at 0 and covers the pairs inside each group.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "controller/profile/profile.hpp"

namespace tusk {

// The run's agents by group, in the run's agent order.
struct ShiftGroups {
  std::vector<std::string> names;                 // sorted
  std::vector<std::vector<std::size_t>> members;  // per group: agent indexes, ascending
  bool empty() const { return names.empty(); }
};

// Groups the run's agents by what `group_of` says of each (nullopt: it cannot say, and the error
// names the agent and `why_unknown`). Throws PlanError.
ShiftGroups group_agents(const std::vector<std::string>& agents,
                         const std::function<std::optional<std::string>(const std::string& agent)>& group_of,
                         const std::string& why_unknown);

// The groups a profile's own `group_by:` list gives the run's agents. Throws PlanError for an agent
// the list leaves out.
ShiftGroups listed_groups(const ShiftSpec& shift, const std::vector<std::string>& agents);

struct ShiftStep {
  std::uint32_t number = 0;  // 1-based, in the whole schedule
  std::string label;         // "shift 3", "leaf +1, member +0"
  // peers[i]: the agents agent i sends to at this step (none for an idle one).
  std::vector<std::vector<std::size_t>> peers;
  std::size_t senders() const;
};

// How many steps the whole schedule has on `agents` agents (0: none is possible).
std::uint32_t shift_step_count(const ShiftSpec& shift, std::size_t agents, const ShiftGroups& groups);

// The step numbers that run: the profile's shifts, or all. Throws PlanError naming a shift past the
// schedule's end.
std::vector<std::uint32_t> shift_numbers(const ShiftSpec& shift, std::size_t agents, const ShiftGroups& groups,
                                         const std::string& test);

// Step `number` (1..shift_step_count) of the schedule.
ShiftStep shift_step(const ShiftSpec& shift, std::size_t agents, const ShiftGroups& groups, std::uint32_t number);

}  // namespace tusk
