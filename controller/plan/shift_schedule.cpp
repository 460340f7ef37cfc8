#include "controller/plan/shift_schedule.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "controller/plan/planner.hpp"

namespace tusk {
namespace {

std::size_t largest_group(const ShiftGroups& groups) {
  std::size_t largest = 0;
  for (const auto& members : groups.members) largest = std::max(largest, members.size());
  return largest;
}

bool grouped(const ShiftSpec& shift) {
  return shift.group_by != ShiftSpec::GroupBy::None;
}

std::string group_word(const ShiftSpec& shift) {
  return shift.group_by == ShiftSpec::GroupBy::Leaf ? "leaf" : "group";
}

}  // namespace

ShiftGroups group_agents(const std::vector<std::string>& agents,
                         const std::function<std::optional<std::string>(const std::string& agent)>& group_of,
                         const std::string& why_unknown) {
  std::map<std::string, std::vector<std::size_t>> by_group;
  std::vector<std::string> unplaced;
  for (std::size_t i = 0; i < agents.size(); ++i) {
    if (const auto group = group_of(agents[i])) {
      by_group[*group].push_back(i);
    } else {
      unplaced.push_back(agents[i]);
    }
  }
  if (!unplaced.empty()) {
    throw PlanError(fmt::format("{}: {}", why_unknown, fmt::join(unplaced, ", ")));
  }
  ShiftGroups groups;
  for (auto& [name, members] : by_group) {
    groups.names.push_back(name);
    groups.members.push_back(std::move(members));
  }
  return groups;
}

ShiftGroups listed_groups(const ShiftSpec& shift, const std::vector<std::string>& agents) {
  std::map<std::string, std::string> listed(shift.groups.begin(), shift.groups.end());
  return group_agents(
      agents,
      [&listed](const std::string& agent) -> std::optional<std::string> {
        const auto found = listed.find(agent);
        if (found == listed.end()) return std::nullopt;
        return found->second;
      },
      "group_by lists no group for these agents of the run");
}

std::size_t ShiftStep::senders() const {
  return static_cast<std::size_t>(
      std::count_if(peers.begin(), peers.end(), [](const auto& list) { return !list.empty(); }));
}

std::uint32_t shift_step_count(const ShiftSpec& shift, std::size_t agents, const ShiftGroups& groups) {
  if (!grouped(shift)) return agents < 2 ? 0 : static_cast<std::uint32_t>(agents - 1);
  const std::size_t largest = largest_group(groups);
  if (shift.scope == ShiftSpec::Scope::Rack) return largest < 2 ? 0 : static_cast<std::uint32_t>(largest - 1);
  return groups.names.size() < 2 ? 0 : static_cast<std::uint32_t>((groups.names.size() - 1) * largest);
}

std::vector<std::uint32_t> shift_numbers(const ShiftSpec& shift, std::size_t agents, const ShiftGroups& groups,
                                         const std::string& test) {
  const std::uint32_t count = shift_step_count(shift, agents, groups);
  if (count == 0) {
    throw PlanError(fmt::format("test '{}': a shift schedule over {} agents{} has no step: {}", test, agents,
                                grouped(shift) ? fmt::format(" in {} {}s", groups.names.size(), group_word(shift)) : "",
                                !grouped(shift) ? "it needs at least 2 agents"
                                : shift.scope == ShiftSpec::Scope::Cross
                                    ? fmt::format("scope cross needs at least 2 {}s", group_word(shift))
                                    : fmt::format("scope rack needs a {} of 2 agents", group_word(shift))));
  }
  if (shift.shifts.empty()) {
    std::vector<std::uint32_t> all(count);
    for (std::uint32_t k = 0; k < count; ++k) all[k] = k + 1;
    return all;
  }
  for (const auto k : shift.shifts) {
    if (k > count) {
      throw PlanError(fmt::format("test '{}': shifts {} names step {}, but the schedule over {} agents has {} step{}",
                                  test, shift.shifts_text, k, agents, count, count == 1 ? "" : "s"));
    }
  }
  return shift.shifts;
}

ShiftStep shift_step(const ShiftSpec& shift, std::size_t agents, const ShiftGroups& groups, std::uint32_t number) {
  ShiftStep step;
  step.number = number;
  step.peers.resize(agents);
  if (!grouped(shift)) {
    for (std::size_t i = 0; i < agents; ++i) step.peers[i].push_back((i + number) % agents);
    step.label = fmt::format("shift {}", number);
    return step;
  }
  const std::size_t largest = largest_group(groups);
  const std::size_t count = groups.names.size();
  // Cross: step numbers run through member shifts first, so the first steps already cross every
  // group pair's uplinks once; rack: the member shift alone.
  const bool rack = shift.scope == ShiftSpec::Scope::Rack;
  const std::size_t group_shift = rack ? 0 : (number - 1) / largest + 1;
  const std::size_t member_shift = rack ? number : (number - 1) % largest;
  for (std::size_t a = 0; a < count; ++a) {
    const auto& from = groups.members[a];
    const auto& to = groups.members[(a + group_shift) % count];
    if (member_shift >= to.size()) continue;
    for (std::size_t j = 0; j < from.size(); ++j) {
      step.peers[from[j]].push_back(to[(j + member_shift) % to.size()]);
    }
  }
  step.label = rack ? fmt::format("within each {}, member +{}", group_word(shift), member_shift)
                    : fmt::format("{} +{}, member +{}", group_word(shift), group_shift, member_shift);
  return step;
}

}  // namespace tusk
