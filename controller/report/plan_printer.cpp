#include "controller/report/plan_printer.hpp"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/method/method_steps.hpp"

namespace tusk {
using plain_json = nlohmann::json;  // not `json`: the report files alias that as ordered_json

namespace {

std::string engine_text(const proto::Plan& plan) {
  const EngineSlice* engine = find_engine(plan.engine());
  return engine ? engine->plan_line(plan) : plan.engine();
}

// The leaf of each agent for a schedule grouped by leaf, offline: the topology's host device of the
// agent's name, and the device across its cable (as the run places an agent by its data-plane
// address, which only a connected agent says).
ShiftGroups leaf_groups(const TestSpec& test, const std::vector<std::string>& agents, const FabricTopology& topology) {
  return group_agents(
      agents,
      [&](const std::string& agent) -> std::optional<std::string> {
        for (const auto& device : topology.devices()) {
          if (device.name != agent) continue;
          for (const auto& interface : device.interfaces) {
            for (const auto& address : interface.addresses) {
              if (auto leaf = topology.attached_to(address)) return leaf;
            }
          }
        }
        return std::nullopt;
      },
      fmt::format("test '{}': group_by: leaf: {} has no host of these agents' names cabled to a leaf", test.name,
                  topology.file()));
}

// A method test's steps, each planned as the run plans it: added to the profile as a test of its
// own, on the first agents it needs.
PlannedSteps plan_steps(const Profile& profile, std::size_t index, const std::vector<std::string>& agents,
                        const std::string& run_id, const FabricTopology* topology) {
  PlannedSteps planned;
  const TestSpec& test = profile.tests[index];
  ShiftGroups groups;
  if (test.shift && test.shift->group_by == ShiftSpec::GroupBy::Leaf) {
    if (!topology) {
      planned.note =
          "its steps are planned from the leaf each agent hangs off in the topology file: give plan "
          "--topology FILE to list them (run --topology FILE places agents by their data-plane addresses)";
      planned.thresholds = method_step_thresholds(test);
      return planned;
    }
    groups = leaf_groups(test, agents, *topology);
  }
  if (test.shift && test.shift->group_by == ShiftSpec::GroupBy::Listed) groups = listed_groups(*test.shift, agents);
  const MethodSteps steps(test, agents.size(), groups);
  planned.thresholds = method_step_thresholds(test);
  const auto fixed = steps.fixed_steps();
  if (!fixed) {
    planned.least_trials = steps.least_trials();
    planned.most_trials = steps.most_trials();
    planned.trial = test.method->trial;
    return planned;
  }
  Profile with_step = profile;
  for (const auto& step : *fixed) {
    planned.names.push_back(step.spec.name);
    planned.lengths.push_back(step.spec.duration);
    if (test.shift) {
      auto& pairs = planned.pairs.emplace_back();
      for (std::size_t sender = 0; sender < step.peers.size() && sender < agents.size(); ++sender) {
        for (const std::size_t receiver : step.peers[sender]) {
          if (receiver >= agents.size()) continue;
          if (planned.pairs_in_all++ < kMaxListedPairs) pairs.emplace_back(agents[sender], agents[receiver]);
        }
      }
    }
    // A shift's steps differ only in peers: one plan line serves them all (4,095 steps of 4,096
    // agents are 16 M plans).
    if (test.shift && !planned.lines.empty()) {
      planned.lines.push_back(planned.lines.back());
      continue;
    }
    with_step.tests.push_back(step.spec);
    const std::vector<std::string> step_agents(
        agents.begin(), agents.begin() + static_cast<std::ptrdiff_t>(std::min(step.agents, agents.size())));
    const auto plans = plan_test(with_step, with_step.tests.size() - 1, step_agents, run_id,
                                 step.peers.empty() ? nullptr : &step.peers);
    planned.lines.push_back(plans.empty() ? std::string("(no agent)") : engine_text(plans.front().plan));
    with_step.tests.pop_back();
  }
  return planned;
}

// A step's pairs as `a -> b, c; b -> c`: each sender once, its receivers in order.
std::string pairs_text(const std::vector<std::pair<std::string, std::string>>& pairs) {
  std::string out;
  for (std::size_t i = 0; i < pairs.size(); ++i) {
    if (i > 0 && pairs[i].first == pairs[i - 1].first) {
      out += ", " + pairs[i].second;
    } else {
      out += fmt::format("{}{} -> {}", i > 0 ? "; " : "", pairs[i].first, pairs[i].second);
    }
  }
  return out;
}

}  // namespace

ExpandedPlan expand_plan(const Profile& profile, const std::vector<std::string>& agents, const std::string& run_id,
                         const FabricTopology* topology) {
  ExpandedPlan plan;
  plan.agents = agents;
  for (std::size_t i = 0; i < profile.tests.size(); ++i) {
    plan.tests.push_back(plan_test(profile, i, agents, run_id));
    plan.steps.push_back(profile.tests[i].method ? std::optional(plan_steps(profile, i, agents, run_id, topology))
                                                 : std::nullopt);
  }
  return plan;
}

PlanLength plan_length(const Profile& profile, const ExpandedPlan& plan) {
  PlanLength length;
  for (std::size_t i = 0; i < profile.tests.size(); ++i) {
    const auto& steps = i < plan.steps.size() ? plan.steps[i] : std::nullopt;
    if (!steps) {
      length.least += profile.tests[i].duration;
      length.most += profile.tests[i].duration;
      continue;
    }
    for (const auto step : steps->lengths) {
      length.least += step;
      length.most += step;
    }
    if (steps->most_trials > 0) {
      length.least += steps->trial * static_cast<long>(steps->least_trials);
      length.most += steps->trial * static_cast<long>(steps->most_trials);
    }
  }
  return length;
}

std::string plan_text(const Profile& profile, const ExpandedPlan& plan) {
  std::string out = fmt::format("profile '{}' ({}): {} test(s) on {} agent(s): {}\n", profile.name, profile.file,
                                profile.tests.size(), plan.agents.size(), fmt::join(plan.agents, ", "));
  const PlanLength length = plan_length(profile, plan);
  out += length.least == length.most
             ? fmt::format("length: {} of traffic, plus a few seconds' set-up per test\n",
                           units::format_duration(length.least))
             : fmt::format(
                   "length: {} to {} of traffic (a search stops when it has its answer), plus a few seconds' "
                   "set-up per test and step\n",
                   units::format_duration(length.least), units::format_duration(length.most));
  for (std::size_t i = 0; i < plan.steps.size() && i < profile.tests.size(); ++i) {
    if (plan.steps[i] && !plan.steps[i]->note.empty()) {
      out += fmt::format("  not counted: test '{}', whose steps are not planned here (see below)\n",
                         profile.tests[i].name);
    }
  }
  if (profile.safety.max_rate_bps > 0 || profile.safety.max_duration.count() > 0) {
    out += fmt::format("safety caps: rate {}, duration {}\n",
                       profile.safety.max_rate_bps > 0 ? units::format_bit_rate(profile.safety.max_rate_bps) : "none",
                       units::format_duration(profile.safety.max_duration));
  }
  for (std::size_t i = 0; i < profile.tests.size(); ++i) {
    const TestSpec& test = profile.tests[i];
    out += fmt::format("\ntest {} '{}': {} engine, {} (samples every {}), topology {}\n", i, test.name, test.engine,
                       units::format_duration(test.duration), units::format_duration(test.sample_interval),
                       to_string(test.topology));
    const auto& steps = plan.steps[i];
    // A schedule's own pairs are no step's: each step's are listed with it.
    if (test.shift && steps) {
      out += fmt::format("  every step's plan: {}\n",
                         plan.tests[i].empty() ? std::string("(no agent)") : engine_text(plan.tests[i].front().plan));
    }
    for (const auto& agent_plan : plan.tests[i]) {
      if (test.shift && steps) break;
      std::vector<std::string> peers;
      for (const auto& peer : agent_plan.plan.peers()) peers.push_back(peer.agent_name());
      out += fmt::format("  {} -> {}\n      {}\n", agent_plan.agent,
                         peers.empty() ? "(itself)" : fmt::format("{}", fmt::join(peers, ", ")),
                         engine_text(agent_plan.plan));
    }
    std::string explicit_rules, safe_defaults;
    for (const auto& threshold : steps ? steps->thresholds : test.thresholds) {
      const std::string rule =
          fmt::format(" {} {} {:g}", threshold.metric, threshold.bound == Bound::Max ? "<=" : ">=", threshold.value);
      if (threshold.implicit) {
        safe_defaults += fmt::format("{} ({});", rule, threshold.key);
      } else {
        explicit_rules += rule + ";";
      }
    }
    if (steps) {
      if (steps->most_trials > 0) {
        std::vector<std::string> sizes;
        for (const auto size : test.method->frame_sizes) sizes.push_back(fmt::format("{} B", size));
        out += fmt::format(
            "  method {}: a search of {} to {} trials of {} each{}; each trial's rate follows the last "
            "one's loss, so its plans are made as it runs\n",
            to_string(test.method->kind), steps->least_trials, steps->most_trials, units::format_duration(steps->trial),
            sizes.empty() ? std::string(", at the test's frame size")
                          : fmt::format(", at frame sizes {}", fmt::join(sizes, ", ")));
      } else if (!steps->note.empty()) {
        out += fmt::format("  {}: {}\n", to_string(test.method->kind), steps->note);
      } else {
        out += fmt::format(
            "  method {}: {} steps, one after another, each planned as below (the lines above are the "
            "test's own, which each step changes)\n",
            to_string(test.method->kind), steps->names.size());
        for (std::size_t s = 0; s < steps->names.size(); ++s) {
          if (test.shift) {
            out += fmt::format("    step {} {}: {}\n      {}\n", s + 1, steps->names[s],
                               units::format_duration(steps->lengths[s]),
                               s < steps->pairs.size() && !steps->pairs[s].empty() ? pairs_text(steps->pairs[s])
                                                                                   : "(pairs not listed)");
            continue;
          }
          out += fmt::format("    step {} {}: {}\n      {}\n", s + 1, steps->names[s],
                             units::format_duration(steps->lengths[s]), steps->lines[s]);
        }
        if (steps->pairs_in_all > kMaxListedPairs) {
          out += fmt::format("    (the first {} of the schedule's {} sender-receiver pairs are listed)\n",
                             kMaxListedPairs, steps->pairs_in_all);
        }
      }
    }
    if (!explicit_rules.empty()) out += "  pass when:" + explicit_rules + "\n";
    if (!safe_defaults.empty())
      out += "  safe defaults (a threshold with that key relaxes one):" + safe_defaults + "\n";
  }
  return out;
}

plain_json plan_json(const Profile& profile, const ExpandedPlan& plan) {
  plain_json out;
  out["profile"] = profile.name;
  out["file"] = profile.file;
  out["agents"] = plan.agents;
  plain_json tests = plain_json::array();
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  for (std::size_t i = 0; i < plan.tests.size(); ++i) {
    plain_json agents = plain_json::object();
    for (const auto& agent_plan : plan.tests[i]) {
      std::string text;
      if (!google::protobuf::util::MessageToJsonString(agent_plan.plan, &text, options).ok()) {
        throw std::runtime_error("cannot render plan of " + agent_plan.agent + " as JSON");
      }
      agents[agent_plan.agent] = plain_json::parse(text);
    }
    plain_json test{
        {"name", profile.tests[i].name}, {"duration_s", profile.tests[i].duration.count() / 1e3}, {"plans", agents}};
    if (const auto& steps = plan.steps[i]) {
      if (steps->most_trials > 0) {
        test["search"] = {{"least_trials", steps->least_trials},
                          {"most_trials", steps->most_trials},
                          {"trial_s", steps->trial.count() / 1e3},
                          {"frame_sizes", profile.tests[i].method->frame_sizes}};
      } else if (!steps->note.empty()) {
        test["steps_note"] = steps->note;
      } else {
        plain_json list = plain_json::array();
        for (std::size_t s = 0; s < steps->names.size(); ++s) {
          plain_json step{
              {"name", steps->names[s]}, {"duration_s", steps->lengths[s].count() / 1e3}, {"plan", steps->lines[s]}};
          if (s < steps->pairs.size()) {
            plain_json pairs = plain_json::array();
            for (const auto& [sender, receiver] : steps->pairs[s]) pairs.push_back({sender, receiver});
            step["pairs"] = std::move(pairs);
          }
          list.push_back(std::move(step));
        }
        test["steps"] = list;
        if (!steps->pairs.empty()) {
          test["pairs_in_all"] = steps->pairs_in_all;
          test["pairs_listed"] = std::min(steps->pairs_in_all, kMaxListedPairs);
        }
      }
      plain_json thresholds = plain_json::array();
      for (const auto& threshold : steps->thresholds) {
        thresholds.push_back({{"key", threshold.key},
                              {"metric", threshold.metric},
                              {"bound", threshold.bound == Bound::Max ? "max" : "min"},
                              {"value", threshold.value},
                              {"safe_default", threshold.implicit}});
      }
      test["step_thresholds"] = std::move(thresholds);
    }
    tests.push_back(test);
  }
  out["tests"] = tests;
  const PlanLength length = plan_length(profile, plan);
  out["length_s"] = {{"least", length.least.count() / 1e3}, {"most", length.most.count() / 1e3}};
  return out;
}

}  // namespace tusk
