#include "controller/profile/method_keys.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/rates.hpp"
#include "common/wire_bounds.hpp"
#include "controller/engines/engine_slice.hpp"

namespace tusk::method_keys {
namespace {

using namespace std::chrono_literals;
using profile_schema::ReadContext;
using profile_schema::TestCheck;
using profile_schema::TestDraft;

// A search or a sweep is a plan of trials: more than this is a mistake, not a qualification.
constexpr std::uint32_t kMaxSteps = 256;

}  // namespace

const std::vector<std::string_view>& kind_names() {
  // In MethodKind's order.
  static const std::vector<std::string_view> names{"throughput",   "frame_loss_rate",    "sweep",
                                                   "incast",       "congestion_control", "ecmp_balance",
                                                   "link_failure", "burst_absorption"};
  return names;
}

const std::vector<std::string_view>& keys_of(MethodKind kind) {
  static const std::vector<std::string_view> throughput{"kind",   "frame_sizes", "trial",  "resolution",
                                                        "trials", "pdr_loss",    "latency"};
  static const std::vector<std::string_view> loss{"kind", "frame_sizes", "trial", "step"};
  static const std::vector<std::string_view> sweep{"kind", "frame_sizes", "rates", "trial"};
  static const std::vector<std::string_view> incast{"kind", "fan_in", "trial"};
  static const std::vector<std::string_view> congestion{"kind", "trial", "uncongested_loss"};
  static const std::vector<std::string_view> balance{"kind", "trial", "max_imbalance", "min_fairness"};
  static const std::vector<std::string_view> failure{"kind", "trial", "link", "at", "down", "up", "max_convergence"};
  static const std::vector<std::string_view> bursts{"kind", "trial", "bursts", "senders", "min_absorbed"};
  switch (kind) {
    case MethodKind::Throughput:
      return throughput;
    case MethodKind::FrameLossRate:
      return loss;
    case MethodKind::Sweep:
      return sweep;
    case MethodKind::Incast:
      return incast;
    case MethodKind::CongestionControl:
      return congestion;
    case MethodKind::EcmpBalance:
      return balance;
    case MethodKind::LinkFailure:
      return failure;
    case MethodKind::BurstAbsorption:
      return bursts;
    case MethodKind::Shift:
      break;  // not a `method:`: topology: shift makes it (shift_keys)
  }
  return sweep;
}

namespace {

// "50%" is a fraction of the test's rate; anything else a rate of its own.
std::optional<StepRate> read_step_rate(YamlReader& read, const YamlValue& value) {
  const std::string text = value.text();
  StepRate rate;
  rate.text = text;
  if (!text.empty() && text.back() == '%') {
    const auto ratio = read.ratio(value);
    if (!ratio) return std::nullopt;
    if (*ratio <= 0 || *ratio > 1) {
      read.fail(value, fmt::format("{} must be above 0% and at most 100% of the test's rate", text));
      return std::nullopt;
    }
    rate.fraction = *ratio;
    return rate;
  }
  const auto absolute = read.rate(value);
  if (!absolute) return std::nullopt;
  switch (absolute->kind) {
    case units::Rate::Kind::BitsPerSecond:
      rate.bits_per_second = absolute->value;
      break;
    case units::Rate::Kind::PacketsPerSecond:
      rate.packets_per_second = absolute->value;
      break;
    case units::Rate::Kind::Max:
      read.fail(value, "a step rate is a bit rate, a packet rate or a share of the test's rate (50%), not max");
      return std::nullopt;
  }
  return rate;
}

std::optional<std::vector<std::uint32_t>> read_fan_in(YamlReader& read, const YamlValue& value) {
  return read_numbers(read, value, "fan_in", {1, 4096}, "the senders of each step, e.g. [2, 4, 8] or 2..8");
}

// The keys of ecmp_balance and link_failure.
bool read_fabric_key(YamlReader& read, const std::string& key, const YamlValue& v, MethodSpec& method) {
  if (key == "max_imbalance") {
    // The busiest uplink's bytes over the mean: 1 is perfect balance, so the bound is 1 or more
    // (not a ratio of 0 to 1, which parse_ratio reads).
    const auto bound = read.decimal(v, {1, 1e6});
    if (!bound) return false;
    method.max_imbalance = *bound;
  } else if (key == "min_fairness") {
    const auto ratio = read.ratio(v);
    if (ratio && (*ratio <= 0 || *ratio > 1)) {
      read.fail(v, fmt::format("min_fairness {} must be above 0 and at most 1 (Jain's index)", v.text()));
    }
    if (!ratio || *ratio <= 0 || *ratio > 1) return false;
    method.min_fairness = *ratio;
  } else if (key == "link") {
    const auto text = read.non_empty_string(v);
    if (!text) return false;
    if (text->find("<->") == std::string::npos) {
      read.fail(v, fmt::format("link '{}': expected both ends as the topology file names them, e.g. leaf1:swp3 <-> "
                               "spine2:swp1",
                               *text));
      return false;
    }
    method.link = *text;
  } else if (key == "at") {
    const auto at = read.duration(v, {0ms, 1000h});
    if (!at) return false;
    method.at = *at;
  } else if (key == "down" || key == "up") {
    const auto command = read.non_empty_string(v);
    if (!command) return false;
    (key == "down" ? method.down_command : method.up_command) = *command;
  } else if (key == "bursts") {
    auto numbers =
        read_numbers(read, v, "bursts", {2, wire::kMaxBurstFrames},
                     "each step's train length, e.g. [8, 16, 32, 64] or 8..64 (doubling)", RangeStep::Doubling);
    if (!numbers) return false;
    std::sort(numbers->begin(), numbers->end());
    numbers->erase(std::unique(numbers->begin(), numbers->end()), numbers->end());
    method.bursts = std::move(*numbers);
  } else if (key == "senders") {
    const auto senders = read.uint32(v, {1, 4095});
    if (!senders) return false;
    method.burst_senders = *senders;
  } else if (key == "min_absorbed") {
    const auto frames = read.uint32(v, {1, wire::kMaxBurstFrames});
    if (!frames) return false;
    method.min_absorbed = *frames;
  } else if (key == "max_convergence") {
    const auto limit = read.duration(v, {1ms, 1h});
    if (!limit) return false;
    method.max_convergence = *limit;
  }
  return true;
}

}  // namespace

std::optional<std::vector<std::uint32_t>> read_numbers(YamlReader& read, const YamlValue& value, std::string_view key,
                                                       std::pair<std::uint32_t, std::uint32_t> bounds,
                                                       std::string_view what, RangeStep step) {
  const std::uint32_t least = bounds.first, most = bounds.second;
  // "2..4" is every number from 2 to 4.
  if (value.node.IsScalar() && value.text().find("..") != std::string::npos) {
    const std::string text = value.text();
    const auto dots = text.find("..");
    try {
      std::size_t used_low = 0, used_high = 0;
      const auto low = std::stoul(text.substr(0, dots), &used_low);
      const auto high = std::stoul(text.substr(dots + 2), &used_high);
      if (used_low != dots || used_high != text.size() - dots - 2 || low < least || high < low || high > most) {
        throw std::invalid_argument(text);
      }
      std::vector<std::uint32_t> numbers;
      if (step == RangeStep::Doubling) {
        for (auto n = low; n <= high; n *= 2) numbers.push_back(static_cast<std::uint32_t>(n));
        if (numbers.back() != high) numbers.push_back(static_cast<std::uint32_t>(high));
      } else {
        for (auto n = low; n <= high; ++n) numbers.push_back(static_cast<std::uint32_t>(n));
      }
      return numbers;
    } catch (const std::exception&) {
      read.fail(value, fmt::format("{} '{}': expected FROM..TO, e.g. {}..{}, with {} <= FROM <= TO <= {}", key, text,
                                   least + 1, least + 7, least, most));
      return std::nullopt;
    }
  }
  const std::string low = std::to_string(least), high = std::to_string(most);
  auto numbers = read.list(value, [&](const YamlValue& item) { return read.uint32(item, {least, most, low, high}); });
  if (numbers && numbers->empty()) {
    read.fail(value, fmt::format("{} is empty: give {}", key, what));
    return std::nullopt;
  }
  return numbers;
}

std::optional<std::uint32_t> read_frame_size(YamlReader& read, const YamlValue& value) {
  // Ethernet's least frame is 64 bytes with its FCS; Tusk's sizes never count the FCS.
  static const YamlReader::Range<std::uint64_t> range{60, 9216};
  const auto bytes = read.size(value, range);
  if (!bytes) return std::nullopt;
  return static_cast<std::uint32_t>(*bytes);
}

std::optional<std::vector<std::uint32_t>> read_frame_sizes(YamlReader& read, const YamlValue& value) {
  auto sizes = read.list(value, [&](const YamlValue& item) { return read_frame_size(read, item); });
  if (sizes && sizes->empty()) {
    read.fail(value, "frame_sizes is empty: list at least one size, or leave it out");
    return std::nullopt;
  }
  return sizes;
}

const std::vector<std::uint32_t>& rfc2544_frame_sizes() {
  // RFC 2544's 64, 128, 256, 512, 1024, 1280 and 1518 count the 4-byte FCS, which Tusk's sizes
  // leave out: 1518 would be an oversize frame on a 1500 MTU port.
  static const std::vector<std::uint32_t> sizes{60, 124, 252, 508, 1020, 1276, 1514};
  return sizes;
}

bool read_method(ReadContext& context, const YamlValue& value, TestDraft& draft) {
  YamlReader& read = context.read;
  const auto entries = read.mapping(value, "a method, e.g. {kind: throughput, frame_sizes: [64, 1518]}");
  if (!entries) return false;
  const auto kind_entry =
      std::find_if(entries->begin(), entries->end(), [](const YamlEntry& e) { return e.key == "kind"; });
  if (kind_entry == entries->end()) {
    read.missing(value, "kind");
    return false;
  }
  const auto kind_name = read.choice(kind_entry->value, kind_names());
  if (!kind_name) return false;
  MethodSpec method;
  method.kind =
      static_cast<MethodKind>(std::find(kind_names().begin(), kind_names().end(), *kind_name) - kind_names().begin());
  method.pos = value.key_pos;
  // The uncongested flow of a congestion test may lose nothing unless the profile says otherwise.
  if (method.kind == MethodKind::CongestionControl) method.pdr_loss = 0;
  const auto& allowed = keys_of(method.kind);
  bool ok = true;
  for (const auto& entry : *entries) {
    const std::string& key = entry.key;
    const YamlValue& v = entry.value;
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      read.unknown_key(entry, allowed);
      ok = false;
    } else if (key == "frame_sizes") {
      const auto sizes = read_frame_sizes(read, v);
      ok &= sizes.has_value();
      if (sizes) method.frame_sizes = *sizes;
    } else if (key == "rates") {
      const auto rates = read.list(v, [&](const YamlValue& item) { return read_step_rate(read, item); });
      if (rates && rates->empty()) read.fail(v, "rates is empty: list at least one rate, or leave it out");
      ok &= rates && !rates->empty();
      if (rates) method.rates = *rates;
    } else if (key == "fan_in") {
      const auto steps = read_fan_in(read, v);
      ok &= steps.has_value();
      if (steps) method.fan_in = *steps;
    } else if (key == "trial") {
      const auto trial = read.duration(v, {100ms, 1000h});
      ok &= trial.has_value();
      if (trial) method.trial = *trial;
    } else if (key == "resolution" || key == "pdr_loss" || key == "step" || key == "uncongested_loss") {
      auto ratio = read.ratio(v);
      const bool zero_allowed = key == "pdr_loss" || key == "uncongested_loss";
      if (ratio && (*ratio < 0 || (*ratio == 0 && !zero_allowed) || *ratio >= 1)) {
        read.fail(
            v, fmt::format("{} {} must be {} and below 100%", key, v.text(), zero_allowed ? "at least 0" : "above 0"));
        ratio.reset();
      }
      ok &= ratio.has_value();
      if (ratio) {
        (key == "resolution" ? method.resolution : key == "step" ? method.step : method.pdr_loss) = *ratio;
      }
    } else if (key == "trials") {
      const auto trials = read.uint32(v, {2, 64});
      ok &= trials.has_value();
      if (trials) method.max_trials = *trials;
    } else if (key == "latency") {
      const auto latency = read.boolean(v);
      ok &= latency.has_value();
      if (latency) method.latency = *latency;
    } else {
      ok &= read_fabric_key(read, key, v, method);
    }
  }
  if (method.kind == MethodKind::Throughput && method.frame_sizes.empty()) {
    method.frame_sizes = rfc2544_frame_sizes();
    method.default_sizes = true;
  }
  if (!ok) return false;
  draft.spec.method = std::move(method);
  return true;
}

namespace {

// burst_absorption: senders into the first agent, as incast, in trains the engine must send.
void check_burst_absorption(TestCheck& check, const MethodSpec& method) {
  TestSpec& spec = check.draft.spec;
  const auto* origin = check.draft.origin("method");
  if (const auto* topology = check.draft.origin("topology"); topology && spec.topology != Topology::Incast) {
    check.fail("topology", topology,
               fmt::format("method burst_absorption sends from the first agent's peers into it: leave topology out "
                           "or set topology: incast, not {}",
                           to_string(spec.topology)));
  }
  spec.topology = Topology::Incast;
  if (method.bursts.empty()) {
    check.fail("method", origin,
               "method burst_absorption: give bursts, each step's train length (e.g. [8, 16, 32, 64])");
  }
  const EngineSlice* engine = find_engine(spec.engine);
  if (engine && !engine->apply_burst) {
    check.fail("method", origin,
               fmt::format("method burst_absorption sends trains of frames, which {} tests cannot", spec.engine));
  }
  if (const auto agents = check.profile.agent_count; agents && method.burst_senders + 1 > *agents) {
    check.fail("method", origin,
               fmt::format("method burst_absorption: {} senders and the port they send into need {} agents; agents "
                           "selects {}",
                           method.burst_senders, method.burst_senders + 1, *agents));
  }
}

// ecmp_balance and link_failure run the test as it is, once: what they need of it.
void check_fabric_method(TestCheck& check, MethodSpec& method) {
  TestSpec& spec = check.draft.spec;
  const auto* origin = check.draft.origin("method");
  if (method.trial.count() == 0) method.trial = spec.duration;
  if (method.trial > check.profile.safety.max_duration) {
    check.fail("method", origin,
               fmt::format("method trial {} is above safety.max_duration {}", units::format_duration(method.trial),
                           check.profile.max_duration_text));
  }
  if (method.kind == MethodKind::BurstAbsorption) {
    check_burst_absorption(check, method);
    return;
  }
  if (method.kind != MethodKind::LinkFailure) return;
  if (method.link.empty()) {
    check.fail("method", origin,
               "method link_failure: give link, the cable it takes down (e.g. leaf1:swp3 <-> spine2:swp1)");
  }
  if (method.down_command.empty()) {
    check.fail("method", origin,
               "method link_failure: give down, the command that takes the link down (the controller runs it with "
               "/bin/sh at `at` into the test)");
  }
  if (method.at >= method.trial) {
    check.fail("method", origin,
               fmt::format("method link_failure: at {} is not within the test's {}", units::format_duration(method.at),
                           units::format_duration(method.trial)));
  }
}

}  // namespace

void check_method(TestCheck& check) {
  TestSpec& spec = check.draft.spec;
  if (!spec.method) return;
  MethodSpec& method = *spec.method;
  // A shift's steps keep the test's size and rate: check_shift has checked their length and number.
  if (method.kind == MethodKind::Shift) return;
  if (method.kind == MethodKind::EcmpBalance || method.kind == MethodKind::LinkFailure ||
      method.kind == MethodKind::BurstAbsorption) {
    check_fabric_method(check, method);
    return;
  }
  const auto* origin = check.draft.origin("method");
  const std::string kind{to_string(method.kind)};
  if (method.trial.count() == 0) method.trial = spec.duration;
  if (method.trial > check.profile.safety.max_duration) {
    check.fail("method", origin,
               fmt::format("method trial {} is above safety.max_duration {}", units::format_duration(method.trial),
                           check.profile.max_duration_text));
  }
  if (spec.sample_interval > method.trial) {
    check.fail("method", origin,
               fmt::format("sample_interval {} is longer than the method's trial {}",
                           units::format_duration(spec.sample_interval), units::format_duration(method.trial)));
  }
  const EngineSlice* engine = find_engine(spec.engine);
  if (check.draft.rate && check.draft.rate->kind != units::Rate::Kind::Max) method.rate = check.draft.rate;
  if (method.kind == MethodKind::CongestionControl) {
    if (const auto* topology = check.draft.origin("topology")) {
      check.fail("topology", topology,
                 "method congestion_control sets its own arrangement (the first agent is the "
                 "congested port, the second the uncongested one, the third and fourth send): "
                 "leave topology out");
    }
    spec.topology = Topology::Congestion;
    if (check.profile.agent_count && *check.profile.agent_count < 4) {
      check.fail(
          "method", origin,
          fmt::format("method congestion_control needs 4 agents; agents selects {}", *check.profile.agent_count));
    }
    return;
  }
  if (method.kind == MethodKind::Incast) {
    if (const auto* topology = check.draft.origin("topology"); topology && spec.topology != Topology::Incast) {
      check.fail("topology", topology,
                 fmt::format("method incast sends from the first agent's peers into it: leave topology out or set "
                             "topology: incast, not {}",
                             to_string(spec.topology)));
    }
    spec.topology = Topology::Incast;
    if (const auto agents = check.profile.agent_count) {
      if (method.fan_in.empty()) {
        for (std::uint32_t n = 1; n < *agents; ++n) method.fan_in.push_back(n);
      }
      for (const auto senders : method.fan_in) {
        if (senders + 1 > *agents) {
          check.fail("method", origin,
                     fmt::format("method incast: a fan-in of {} needs {} agents; agents selects {}", senders,
                                 senders + 1, *agents));
          break;
        }
      }
    } else if (method.fan_in.empty()) {
      check.fail("method", origin,
                 "method incast: give fan_in (e.g. 2..8), or fix the agent count with agents.count or agents.hosts");
    }
    return;
  }
  if (!engine || !engine->apply_step) {
    check.fail("method", origin,
               fmt::format("method {} changes the frame size or rate, which {} tests do not have", kind, spec.engine));
    return;
  }
  // A search or a loss curve offers shares of the test's rate, and so does a sweep's "50%".
  const bool needs_rate = method.kind != MethodKind::Sweep ||
                          std::any_of(method.rates.begin(), method.rates.end(),
                                      [](const StepRate& r) { return !r.bits_per_second && !r.packets_per_second; });
  const bool has_rate = check.draft.rate && check.draft.rate->kind != units::Rate::Kind::Max;
  if (needs_rate && !has_rate) {
    check.fail("method", origin,
               fmt::format("method {} offers shares of the test's rate: set rate: to the highest rate to offer "
                           "(a bit or packet rate, not max)",
                           kind));
  }
  const double cap = check.profile.safety.max_rate_bps;
  const SizeMix sizes = size_mix(0, method.frame_sizes);
  for (const auto& rate : method.rates) {
    const double bps =
        offered_rate(rate.packets_per_second.value_or(0), rate.bits_per_second.value_or(0), sizes).capped_bps;
    if (cap > 0 && bps > cap) {
      check.fail("method", origin,
                 fmt::format("method rate {} is above safety.max_rate {}", rate.text, check.profile.max_rate_text));
    }
  }
  std::size_t steps = std::max<std::size_t>(1, method.frame_sizes.size());
  if (method.kind == MethodKind::Sweep) steps *= std::max<std::size_t>(1, method.rates.size());
  if (method.kind == MethodKind::Throughput) steps *= method.max_trials + (method.latency ? 1 : 0);
  if (method.kind == MethodKind::FrameLossRate) steps *= static_cast<std::size_t>(1 / method.step) + 1;
  if (steps > kMaxSteps) {
    check.fail("method", origin,
               fmt::format("method {} would run up to {} steps, more than {}: fewer sizes, rates "
                           "or trials",
                           kind, steps, kMaxSteps));
  }
}

}  // namespace tusk::method_keys
