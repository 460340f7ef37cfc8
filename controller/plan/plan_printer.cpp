#include "controller/plan/plan_printer.hpp"

#include <fmt/format.h>
#include <google/protobuf/util/json_util.h>

#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"

namespace tusk {
using nlohmann::json;

ExpandedPlan expand_plan(const Profile& profile, const std::vector<std::string>& agents, const std::string& run_id) {
  ExpandedPlan plan;
  plan.agents = agents;
  for (std::size_t i = 0; i < profile.tests.size(); ++i) plan.tests.push_back(plan_test(profile, i, agents, run_id));
  return plan;
}

namespace {

std::string engine_text(const proto::Plan& plan) {
  const EngineSlice* engine = find_engine(plan.engine());
  return engine ? engine->plan_line(plan) : plan.engine();
}

}  // namespace

std::string plan_text(const Profile& profile, const ExpandedPlan& plan) {
  std::string out = fmt::format("profile '{}' ({}): {} test(s) on {} agent(s): {}\n", profile.name, profile.file,
                                profile.tests.size(), plan.agents.size(), fmt::join(plan.agents, ", "));
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
    for (const auto& agent_plan : plan.tests[i]) {
      std::vector<std::string> peers;
      for (const auto& peer : agent_plan.plan.peers()) peers.push_back(peer.agent_name());
      out += fmt::format("  {} -> {}\n      {}\n", agent_plan.agent, peers.empty() ? "(itself)" : fmt::format("{}", fmt::join(peers, ", ")),
                         engine_text(agent_plan.plan));
    }
    std::string explicit_rules, safe_defaults;
    for (const auto& threshold : test.thresholds) {
      const std::string rule =
          fmt::format(" {} {} {:g}", threshold.metric, threshold.bound == Bound::Max ? "<=" : ">=", threshold.value);
      if (threshold.implicit) {
        safe_defaults += fmt::format("{} ({});", rule, threshold.key);
      } else {
        explicit_rules += rule + ";";
      }
    }
    if (!explicit_rules.empty()) out += "  pass when:" + explicit_rules + "\n";
    if (!safe_defaults.empty()) out += "  safe defaults (a threshold with that key relaxes one):" + safe_defaults + "\n";
  }
  return out;
}

json plan_json(const Profile& profile, const ExpandedPlan& plan) {
  json out;
  out["profile"] = profile.name;
  out["file"] = profile.file;
  out["agents"] = plan.agents;
  json tests = json::array();
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = true;
  options.always_print_primitive_fields = true;
  for (std::size_t i = 0; i < plan.tests.size(); ++i) {
    json agents = json::object();
    for (const auto& agent_plan : plan.tests[i]) {
      std::string text;
      if (!google::protobuf::util::MessageToJsonString(agent_plan.plan, &text, options).ok()) {
        throw std::runtime_error("cannot render plan of " + agent_plan.agent + " as JSON");
      }
      agents[agent_plan.agent] = json::parse(text);
    }
    tests.push_back({{"name", profile.tests[i].name}, {"plans", agents}});
  }
  out["tests"] = tests;
  return out;
}

}  // namespace tusk
