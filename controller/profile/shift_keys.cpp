#include "controller/profile/shift_keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/units.hpp"
#include "controller/profile/method_keys.hpp"

namespace tusk::shift_keys {
namespace {

using namespace std::chrono_literals;
using profile_schema::ReadContext;
using profile_schema::TestCheck;
using profile_schema::TestDraft;

ShiftSpec& shift_of(TestDraft& draft) {
  if (!draft.spec.shift) draft.spec.shift.emplace();
  return *draft.spec.shift;
}

constexpr std::string_view kShiftKeys[] = {"shifts", "step", "group_by", "scope"};

}  // namespace

bool read_shifts(ReadContext& context, const YamlValue& value, TestDraft& draft) {
  YamlReader& read = context.read;
  if (value.node.IsScalar() && value.text() == "all") {
    shift_of(draft).shifts.clear();
    shift_of(draft).shifts_text = "all";
    return true;
  }
  auto numbers = method_keys::read_numbers(read, value, "shifts", {1, kMaxShiftSteps},
                                           "the steps to run (1 is each agent to the next), e.g. [1, 2] or 1..8");
  if (!numbers) return false;
  std::sort(numbers->begin(), numbers->end());
  numbers->erase(std::unique(numbers->begin(), numbers->end()), numbers->end());
  shift_of(draft).shifts_text = value.text().empty() ? fmt::format("[{}]", fmt::join(*numbers, ", ")) : value.text();
  shift_of(draft).shifts = std::move(*numbers);
  return true;
}

bool read_step(ReadContext& context, const YamlValue& value, TestDraft& draft) {
  const auto step = context.read.duration(value, {1ms, 1000h});
  if (!step) return false;
  shift_of(draft);
  draft.spec.duration = *step;
  return true;
}

bool read_group_by(ReadContext& context, const YamlValue& value, TestDraft& draft) {
  YamlReader& read = context.read;
  if (value.node.IsScalar()) {
    const auto kind = read.choice(value, {"none", "leaf"});
    if (!kind) return false;
    shift_of(draft).group_by = *kind == "leaf" ? ShiftSpec::GroupBy::Leaf : ShiftSpec::GroupBy::None;
    shift_of(draft).groups.clear();
    return true;
  }
  const auto entries = read.mapping(value, "leaf, none, or a mapping of agent names to groups (gpu01: rack1)");
  if (!entries) return false;
  std::vector<std::pair<std::string, std::string>> groups;
  bool ok = true;
  for (const auto& entry : *entries) {
    const auto group = read.non_empty_string(entry.value);
    ok &= group.has_value();
    if (group) groups.emplace_back(entry.key, *group);
  }
  if (!ok) return false;
  if (groups.empty()) {
    read.fail(value, "group_by lists no agent: give each agent's group (gpu01: rack1), or leaf");
    return false;
  }
  shift_of(draft).group_by = ShiftSpec::GroupBy::Listed;
  shift_of(draft).groups = std::move(groups);
  return true;
}

bool read_scope(ReadContext& context, const YamlValue& value, TestDraft& draft) {
  const auto scope = context.read.choice(value, {"cross", "rack"});
  if (!scope) return false;
  shift_of(draft).scope = *scope == "rack" ? ShiftSpec::Scope::Rack : ShiftSpec::Scope::Cross;
  return true;
}

void check_shift(TestCheck& check) {
  TestDraft& draft = check.draft;
  TestSpec& spec = draft.spec;
  if (spec.topology != Topology::Shift) {
    for (const auto key : kShiftKeys) {
      if (const auto* origin = draft.origin(key)) {
        check.fail(key, origin,
                   fmt::format("{} belongs to topology: shift (a schedule of steps); this test's topology is {}", key,
                               to_string(spec.topology)));
      }
    }
    spec.shift.reset();
    return;
  }
  if (draft.written.contains("method")) {
    check.fail("method", draft.origin("method"),
               "topology: shift runs its own steps (one per shift): leave method out, or give the method a topology "
               "of its own in another test");
    return;
  }
  ShiftSpec& shift = shift_of(draft);
  shift.pos = spec.pos;
  const auto* step = draft.origin("step");
  const auto* duration = draft.origin("duration");
  if (step && duration && !duration->from_defaults) {
    check.fail("step", step,
               "step is each step's duration, and so is a shift test's duration: give one of them, not both");
  }
  if (draft.origin("scope") && shift.group_by == ShiftSpec::GroupBy::None) {
    check.fail("scope", draft.origin("scope"),
               "scope says whether steps cross groups or stay in them: give group_by (leaf, or a list) too");
  }
  const auto* length = step ? step : duration;
  if (spec.duration > check.profile.safety.max_duration) {
    check.fail(step ? "step" : "duration", length,
               fmt::format("a step of {} is above safety.max_duration {}", units::format_duration(spec.duration),
                           check.profile.max_duration_text));
  }
  if (spec.sample_interval > spec.duration) {
    check.fail("sample_interval", draft.origin("sample_interval"),
               fmt::format("sample_interval {} is longer than a step ({})",
                           units::format_duration(spec.sample_interval), units::format_duration(spec.duration)));
  }
  // Without groups the schedule's length is the agent count's, when the selection fixes it.
  if (const auto agents = check.profile.agent_count; agents && shift.group_by == ShiftSpec::GroupBy::None) {
    for (const auto k : shift.shifts) {
      if (k + 1 > *agents) {
        check.fail("shifts", draft.origin("shifts"),
                   fmt::format("shifts {} names step {}, but {} agents have {} steps (1..{})", shift.shifts_text, k,
                               *agents, *agents - 1, *agents - 1));
        break;
      }
    }
  }
  MethodSpec method;
  method.kind = MethodKind::Shift;
  method.trial = spec.duration;
  method.pos = spec.pos;
  spec.method = std::move(method);
}

}  // namespace tusk::shift_keys
