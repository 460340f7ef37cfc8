#include "controller/method/method_steps.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/counter_names.hpp"
#include "common/rates.hpp"
#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/method/step_summary.hpp"

namespace tusk {
namespace {

bool judges_loss(const Threshold& threshold) {
  return threshold.metric == "loss_ratio" || threshold.metric == counters::kLostFrames ||
         threshold.metric == counters::kTailLostFrames;
}

bool searches(MethodKind kind) {
  return kind == MethodKind::Throughput || kind == MethodKind::FrameLossRate || kind == MethodKind::CongestionControl;
}

bool judges_gaps(const Threshold& threshold) {
  return threshold.metric == counters::kLinkFlaps || threshold.metric == counters::kTrafficGaps;
}

// The test's rate at `frame_size` bytes, as bits and frames per second.
std::pair<double, double> ceiling_at(const std::optional<units::Rate>& rate, std::uint32_t frame_size) {
  if (!rate || frame_size == 0) return {rate && rate->kind == units::Rate::Kind::BitsPerSecond ? rate->value : 0, 0};
  const bool packets = rate->kind == units::Rate::Kind::PacketsPerSecond;
  const OfferedRate offered =
      offered_rate(packets ? rate->value : 0, packets ? 0 : rate->value, single_size_mix(frame_size));
  return {offered.bps, offered.pps};
}

bool resolved(double passed, double failed, double resolution) {
  return passed >= 1 || (failed > 0 && failed - passed <= resolution + 1e-12);
}

}  // namespace

// A method that offers a port more than it forwards (a search's trials above the rate, a loss
// curve, congestion, incast, a buffer's trains) makes tail drop lock a paced flow out for long
// enough to read as a traffic gap, whose frames the step counts as lost; link_failure cuts flows
// on purpose. The safe defaults on loss, gaps and flaps do not judge their steps.
bool method_loses_by_design(MethodKind kind) {
  return searches(kind) || kind == MethodKind::Incast || kind == MethodKind::BurstAbsorption ||
         kind == MethodKind::LinkFailure;
}

bool method_localises_steps_together(MethodKind kind) {
  return kind == MethodKind::Shift || kind == MethodKind::EcmpBalance;
}

MethodSteps::MethodSteps(const TestSpec& test, std::size_t agents, ShiftGroups groups)
    : test_(test), method_(*test.method), agents_(agents), groups_(std::move(groups)) {
  result_.kind = method_.kind;
  result_.pdr_loss = method_.pdr_loss;
  if (method_.kind == MethodKind::Shift && test_.shift) {
    shifts_ = shift_numbers(*test_.shift, agents_, groups_, test_.name);
  }
}

std::vector<Threshold> method_step_thresholds(const TestSpec& test) {
  const MethodKind kind = test.method ? test.method->kind : MethodKind::Sweep;
  // Loss is what a search, a loss curve and a buffer's trains measure, so no threshold on it
  // judges their trials. A method that loses by design (it overloads a port, or takes a link down)
  // is judged on loss only by thresholds the profile wrote. Every other method (a schedule, ECMP
  // balance, a sweep) holds each step to the safe defaults, as a plain test is held.
  const bool loses_by_design = method_loses_by_design(kind);
  std::vector<Threshold> thresholds = test.thresholds;
  std::erase_if(thresholds, [&](const Threshold& t) {
    return (judges_loss(t) &&
            (searches(kind) || kind == MethodKind::BurstAbsorption || (t.implicit && loses_by_design))) ||
           (judges_gaps(t) && t.implicit && loses_by_design) || (searches(kind) && t.metric == "throughput_bps");
  });
  return thresholds;
}

PlannedStep MethodSteps::make_step(std::uint32_t frame_size, const StepRate& rate, std::size_t senders) {
  const bool incast = method_.kind == MethodKind::Incast || method_.kind == MethodKind::BurstAbsorption;
  PlannedStep planned{test_, incast ? senders + 1 : method_.kind == MethodKind::CongestionControl ? 4 : agents_, {}};
  TestSpec& spec = planned.spec;
  spec.method.reset();
  spec.duration = method_.trial;
  spec.thresholds = method_step_thresholds(test_);
  const bool own_rate = rate.bits_per_second || rate.packets_per_second;
  // Incast and congestion steps keep the test's size and rate: they change who sends.
  if (frame_size > 0 || own_rate || rate.fraction != 1) {
    if (const EngineSlice* engine = find_engine(spec.engine); engine && engine->apply_step) {
      engine->apply_step(spec, frame_size, rate);
    }
  }

  MethodStep step;
  step.frame_size = frame_size;
  step.senders = static_cast<std::uint32_t>(incast ? senders : 0);
  const auto [ceiling_bps, ceiling_pps] = ceiling_at(method_.rate, frame_size);
  if (own_rate) {
    const OfferedRate offered = offered_rate(rate.packets_per_second.value_or(0), rate.bits_per_second.value_or(0),
                                             single_size_mix(frame_size));
    step.offered_bps = offered.bps;
    step.offered_pps = offered.pps;
  } else {
    step.rate_fraction = rate.fraction;
    step.offered_bps = ceiling_bps * rate.fraction;
    step.offered_pps = ceiling_pps * rate.fraction;
  }
  const std::string size_text = frame_size > 0 ? fmt::format("{} B", frame_size) : "";
  switch (method_.kind) {
    case MethodKind::Incast:
      step.label = fmt::format("fan-in {}", senders);
      break;
    case MethodKind::Shift:
      break;  // next_shift() names it
    case MethodKind::EcmpBalance:
      step.label = "the test as it is, its flows' bytes per uplink";
      break;
    case MethodKind::LinkFailure:
      step.label = fmt::format("{} down at +{}", method_.link, units::format_duration(method_.at));
      break;
    case MethodKind::BurstAbsorption:
      break;  // next() names it
    case MethodKind::CongestionControl:
      step.label = "two ports into one, one also to a fourth";
      break;
    case MethodKind::Sweep:
      step.label = fmt::format("{}{}{}", size_text, size_text.empty() || rate.text.empty() ? "" : " at ",
                               rate.text.empty() ? "" : rate.text);
      if (step.label.empty()) step.label = "the test's size and rate";
      break;
    default:
      step.label =
          fmt::format("{} at {:.4g}% ({})", size_text, rate.fraction * 100, units::format_bit_rate(step.offered_bps));
  }
  spec.name = fmt::format("{} [{}]", test_.name, step.label);
  pending_ = std::move(step);
  return planned;
}

std::optional<PlannedStep> MethodSteps::next() {
  if (stopped_ || pending_) return std::nullopt;
  switch (method_.kind) {
    case MethodKind::Throughput:
      return next_throughput();
    case MethodKind::FrameLossRate:
      return next_frame_loss();
    case MethodKind::Sweep: {
      const std::size_t sizes = std::max<std::size_t>(1, method_.frame_sizes.size());
      const std::size_t rates = std::max<std::size_t>(1, method_.rates.size());
      if (position_ >= sizes * rates) return std::nullopt;
      const std::uint32_t size = method_.frame_sizes.empty() ? 0 : method_.frame_sizes[position_ / rates];
      const StepRate rate = method_.rates.empty() ? StepRate{} : method_.rates[position_ % rates];
      ++position_;
      return make_step(size, rate, 0);
    }
    case MethodKind::Incast:
      if (position_ >= method_.fan_in.size()) return std::nullopt;
      return make_step(0, StepRate{}, method_.fan_in[position_++]);
    case MethodKind::CongestionControl:
      if (position_++ > 0) return std::nullopt;
      return make_step(0, StepRate{}, 0);
    case MethodKind::EcmpBalance:
    case MethodKind::LinkFailure:
      if (position_++ > 0) return std::nullopt;
      return make_step(0, StepRate{}, 0);
    case MethodKind::BurstAbsorption: {
      if (position_ >= method_.bursts.size()) return std::nullopt;
      const std::uint32_t frames = method_.bursts[position_++];
      PlannedStep planned = make_step(0, StepRate{}, method_.burst_senders);
      if (const EngineSlice* engine = find_engine(planned.spec.engine); engine && engine->apply_burst) {
        engine->apply_burst(planned.spec, frames);
      }
      pending_->label = fmt::format("trains of {} frames from {} sender{}", frames, method_.burst_senders,
                                    method_.burst_senders == 1 ? "" : "s");
      pending_->burst_frames = frames;
      planned.spec.name = fmt::format("{} [{}]", test_.name, pending_->label);
      return planned;
    }
    case MethodKind::Shift:
      return next_shift();
  }
  return std::nullopt;
}

StepCast cast_step(const PlannedStep& step, const std::vector<bool>& away) {
  StepCast cast;
  const auto is_away = [&](std::size_t agent) { return agent < away.size() && away[agent]; };
  std::vector<std::size_t> position(step.agents, step.agents);
  for (std::size_t a = 0; a < step.agents; ++a) {
    if (is_away(a)) continue;
    position[a] = cast.agents.size();
    cast.agents.push_back(a);
  }
  cast.peers.resize(cast.agents.size());
  for (std::size_t sender = 0; sender < step.peers.size() && sender < step.agents; ++sender) {
    for (const std::size_t receiver : step.peers[sender]) {
      if (receiver >= step.agents) continue;  // no such agent in the step: no pair
      if (is_away(sender) || is_away(receiver)) {
        cast.left_out.emplace_back(sender, receiver);
      } else {
        cast.peers[position[sender]].push_back(position[receiver]);
      }
    }
  }
  return cast;
}

std::optional<PlannedStep> MethodSteps::next_shift() {
  if (!test_.shift || position_ >= shifts_.size()) return std::nullopt;
  ShiftStep shift = shift_step(*test_.shift, agents_, groups_, shifts_[position_++]);
  PlannedStep planned = make_step(0, StepRate{}, 0);
  // Coverage is the schedule's, judged on all steps together (judge_steps_together): one step
  // covers a part by design.
  planned.spec.min_link_coverage.reset();
  pending_->label = std::move(shift.label);
  pending_->senders = static_cast<std::uint32_t>(shift.senders());
  for (const auto& receivers : shift.peers) pending_->pairs += static_cast<std::uint32_t>(receivers.size());
  planned.spec.name = fmt::format("{} [{}]", test_.name, pending_->label);
  planned.peers = std::move(shift.peers);
  return planned;
}

std::optional<std::vector<PlannedStep>> MethodSteps::fixed_steps() const {
  if (searches(method_.kind)) return std::nullopt;
  MethodSteps walk = *this;
  std::vector<PlannedStep> steps;
  while (auto step = walk.next()) {
    steps.push_back(std::move(*step));
    walk.pending_.reset();  // these steps follow one another whatever each one measures
  }
  return steps;
}

std::size_t MethodSteps::most_trials() const {
  const std::size_t sizes = std::max<std::size_t>(1, method_.frame_sizes.size());
  if (method_.kind == MethodKind::Throughput) return sizes * (method_.max_trials + (method_.latency ? 1 : 0));
  if (method_.kind == MethodKind::FrameLossRate) {
    return sizes * static_cast<std::size_t>(std::ceil(1.0 / std::max(method_.step, 1e-3)));
  }
  return 0;
}

std::size_t MethodSteps::least_trials() const {
  const std::size_t sizes = std::max<std::size_t>(1, method_.frame_sizes.size());
  if (method_.kind == MethodKind::Throughput) return sizes * (method_.latency ? 2 : 1);
  if (method_.kind == MethodKind::FrameLossRate) return sizes * 2;
  return 0;
}

std::optional<PlannedStep> MethodSteps::next_throughput() {
  while (position_ < method_.frame_sizes.size()) {
    const std::uint32_t size = method_.frame_sizes[position_];
    if (result_.throughput.size() <= position_) {
      SizeThroughput fresh;
      fresh.frame_size = size;
      std::tie(fresh.ceiling_bps, fresh.ceiling_pps) = ceiling_at(method_.rate, size);
      result_.throughput.push_back(fresh);
    }
    SizeThroughput& search = result_.throughput[position_];
    StepRate rate;
    if (search.trials == 0) {
      rate.fraction = 1;
      return make_step(size, rate, 0);
    }
    const bool pdr_known = resolved(search.pdr_share, search.pdr_failed_share, method_.resolution);
    const bool ndr_known = resolved(search.ndr_share, search.ndr_failed_share, method_.resolution);
    search.resolved = pdr_known && ndr_known;
    if (!search.resolved && search.trials < method_.max_trials) {
      // The PDR first: its bracket holds the NDR's upper end, so each trial narrows both.
      rate.fraction = !pdr_known ? (search.pdr_share + search.pdr_failed_share) / 2
                                 : (search.ndr_share + search.ndr_failed_share) / 2;
      return make_step(size, rate, 0);
    }
    if (method_.latency && !latency_done_ && search.ndr_share > 0) {
      latency_done_ = true;
      rate.fraction = search.ndr_share;
      auto planned = make_step(size, rate, 0);
      pending_->latency_trial = true;
      pending_->label += ", latency at the NDR";
      planned.spec.name = fmt::format("{} [{}]", test_.name, pending_->label);
      return planned;
    }
    ++position_;
    latency_done_ = false;
  }
  return std::nullopt;
}

// RFC 2544 26.3: 100 % of the rate, then down in steps, until two steps in a row lose nothing.
std::optional<PlannedStep> MethodSteps::next_frame_loss() {
  const std::vector<std::uint32_t> sizes =
      method_.frame_sizes.empty() ? std::vector<std::uint32_t>{0} : method_.frame_sizes;
  while (position_ < sizes.size()) {
    const double share = 1 - static_cast<double>(size_step_) * method_.step;
    if (lossless_run_ < 2 && share > 1e-9) {
      ++size_step_;
      StepRate rate;
      rate.fraction = share;
      return make_step(sizes[position_], rate, 0);
    }
    ++position_;
    size_step_ = 0;
    lossless_run_ = 0;
  }
  return std::nullopt;
}

void MethodSteps::update_search(const MethodStep& step) {
  if (step.latency_trial) {
    SizeThroughput& search = result_.throughput[position_];
    search.latency_p50_ns = step.latency_p50_ns;
    search.latency_p99_ns = step.latency_p99_ns;
    search.latency_max_ns = step.latency_max_ns;
    return;
  }
  SizeThroughput& search = result_.throughput[position_];
  ++search.trials;
  const double share = step.rate_fraction;
  auto failed_at = [share](double& failed) { failed = failed > 0 ? std::min(failed, share) : share; };
  if (step.lost_frames == 0) {
    if (share >= search.ndr_share) search.ndr_sent_bps = step.sent_bps;
    search.ndr_share = std::max(search.ndr_share, share);
    search.pdr_share = std::max(search.pdr_share, share);
    search.sender_short |= step.sender_short;
    return;
  }
  if (step.host_drops > 0) search.receiver_limited = true;
  failed_at(search.ndr_failed_share);
  if (step.loss_ratio <= method_.pdr_loss) {
    search.pdr_share = std::max(search.pdr_share, share);
    search.sender_short |= step.sender_short;
  } else {
    failed_at(search.pdr_failed_share);
  }
}

void MethodSteps::record(TestOutcome outcome, std::vector<UncoveredPair> not_covered) {
  if (!pending_) return;
  MethodStep step = std::move(*pending_);
  pending_.reset();
  summarise_step(outcome, step);
  const bool schedule = method_.kind == MethodKind::Shift;
  step.not_covered = std::move(not_covered);
  if (!step.not_covered.empty()) result_.complete = false;
  // A step that did not run to its end, or sent nothing, measured nothing: a search stops there
  // rather than read a lost agent as a lossless trial. A schedule's next step needs nothing of
  // this one: it goes on, and the pairs this one did not cover are the run's to say.
  const bool measured_nothing = step.rx_frames + step.lost_frames == 0 && step.rx_bps == 0 && step.sent_bps == 0;
  if (outcome.agents_lost || !outcome.problems.empty() || measured_nothing) {
    if (outcome.problems.empty() && !outcome.agents_lost) {
      outcome.problems.push_back("the step moved no frame or byte that any stream counted: nothing was measured");
    }
    step.verdict = outcome.agents_lost || !step.not_covered.empty() ? TestVerdict::Incomplete : TestVerdict::Fail;
    outcome.verdict = step.verdict;
    if (!schedule) stopped_ = true;
    if (!schedule || outcome.agents_lost) result_.complete = false;
  } else if (method_.kind == MethodKind::Throughput) {
    update_search(step);
  } else if (method_.kind == MethodKind::FrameLossRate) {
    lossless_run_ = step.lost_frames == 0 ? lossless_run_ + 1 : 0;
  } else if (method_.kind == MethodKind::CongestionControl) {
    result_.congestion = congestion_of(outcome, method_.pdr_loss);
    // Loss on the congested port is the point of the test; only the uncongested flow is judged.
    if (result_.congestion->head_of_line_blocking) step.verdict = TestVerdict::Fail;
  }
  result_.steps.push_back(std::move(step));
  // A schedule's flows are localised together once its steps are done (judge_steps_together), from
  // its flow table; the step's passing streams leave memory here, so a night's memory is its
  // failures', not its steps'. (ecmp_balance's one step keeps its own: judge_ecmp_balance reads its
  // flows' paths first.)
  if (method_.kind == MethodKind::Shift) {
    result_.steps.back().streams = static_cast<std::uint32_t>(outcome.streams.size());
    if (fold_) fold_(outcome, static_cast<std::uint32_t>(result_.steps.size()), result_);
  }
  result_.step_outcomes.push_back(std::move(outcome));
}

bool MethodSteps::restore(MethodStep row, TestOutcome outcome) {
  if (!pending_ || pending_->label != row.label) return false;
  pending_.reset();
  result_.steps.push_back(std::move(row));
  result_.step_outcomes.push_back(std::move(outcome));
  return true;
}

void MethodSteps::restore_schedule(std::shared_ptr<FlowTable> flows, bool complete) {
  result_.schedule_flows = std::move(flows);
  result_.complete = complete;
}

namespace {

// The longest train absorbed and the shortest that lost, from the steps that ran.
BurstAbsorptionResult burst_result(const MethodSpec& method, const std::vector<MethodStep>& steps) {
  BurstAbsorptionResult result;
  result.senders = method.burst_senders;
  result.min_absorbed = method.min_absorbed;
  for (const auto& step : steps) {
    result.steps.push_back({step.burst_frames, step.rx_frames, step.lost_frames});
    if (step.lost_frames == 0 && step.rx_frames > 0) {
      result.largest_absorbed = std::max(result.largest_absorbed, step.burst_frames);
    } else if (step.lost_frames > 0 && (result.smallest_lost == 0 || step.burst_frames < result.smallest_lost)) {
      result.smallest_lost = step.burst_frames;
    }
  }
  if (result.smallest_lost > 0 && result.largest_absorbed > result.smallest_lost) {
    result.warnings.push_back(fmt::format(
        "trains of {} frames lost frames but longer ones of {} did not: the loss was not the buffer's (another "
        "flow, a busy receiver?)",
        result.smallest_lost, result.largest_absorbed));
  }
  if (result.smallest_lost == 0 && !steps.empty()) {
    result.warnings.push_back(
        fmt::format("no train lost a frame: the port absorbs at least {} frames from each of {} "
                    "senders; try longer trains",
                    result.largest_absorbed, result.senders));
  }
  if (method.min_absorbed && result.largest_absorbed < *method.min_absorbed) {
    result.problems.push_back(
        fmt::format("the port absorbed trains of {} frames from each of {} senders at most, under min_absorbed {}",
                    result.largest_absorbed, result.senders, *method.min_absorbed));
  }
  return result;
}

}  // namespace

MethodResult MethodSteps::finish() {
  if (method_.kind == MethodKind::BurstAbsorption) result_.burst_absorption = burst_result(method_, result_.steps);
  if (method_.kind == MethodKind::Throughput) {
    for (auto& search : result_.throughput) {
      search.resolved = resolved(search.pdr_share, search.pdr_failed_share, method_.resolution) &&
                        resolved(search.ndr_share, search.ndr_failed_share, method_.resolution);
    }
  }
  return std::move(result_);
}

namespace {

// "6 of 24 planned pairs not covered: l2h1 lost during the step (step 2); l2h1 not connected
// (steps 3, 4)": each reason once, with the steps it held in.
std::optional<std::string> uncovered_text(const MethodResult& result) {
  std::size_t planned = 0, uncovered = 0;
  std::vector<std::pair<std::string, std::vector<std::size_t>>> reasons;
  for (std::size_t i = 0; i < result.steps.size(); ++i) {
    planned += result.steps[i].pairs;
    uncovered += result.steps[i].not_covered.size();
    for (const auto& pair : result.steps[i].not_covered) {
      auto known = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first == pair.why; });
      if (known == reasons.end()) known = reasons.insert(reasons.end(), {pair.why, {}});
      if (known->second.empty() || known->second.back() != i + 1) known->second.push_back(i + 1);
    }
  }
  if (uncovered == 0) return std::nullopt;
  std::vector<std::string> parts;
  for (const auto& [why, steps] : reasons) {
    parts.push_back(fmt::format("{} (step{} {})", why, steps.size() > 1 ? "s" : "", fmt::join(steps, ", ")));
  }
  return fmt::format("{} of {} planned pairs not covered: {} (report.json: tests[].method.steps[].not_covered)",
                     uncovered, planned, fmt::join(parts, "; "));
}

}  // namespace

std::vector<std::string> method_problems(const MethodResult& result) {
  std::vector<std::string> problems;
  if (result.ecmp_balance) problems = result.ecmp_balance->problems;
  if (result.burst_absorption) problems = result.burst_absorption->problems;
  if (result.link_failure) problems = result.link_failure->problems;
  if (auto uncovered = uncovered_text(result)) problems.push_back(std::move(*uncovered));
  if (const auto& c = result.congestion; c && c->head_of_line_blocking) {
    problems.push_back(fmt::format(
        "head-of-line blocking: the flow to the uncongested port ({}) lost {:.4g}% ({} frames) while {} was "
        "congested ({:.4g}% lost); it may lose {:.4g}%",
        c->uncongested_agent, c->uncongested_loss_ratio * 100, c->uncongested_lost_frames, c->congested_agent,
        c->congested_loss_ratio * 100, c->uncongested_loss_allowed * 100));
  }
  return problems;
}

std::vector<std::string> method_warnings(const MethodResult& result) {
  std::vector<std::string> warnings;
  if (result.ecmp_balance) warnings = result.ecmp_balance->warnings;
  if (result.burst_absorption) warnings = result.burst_absorption->warnings;
  if (result.link_failure) warnings = result.link_failure->warnings;
  for (const auto& size : result.throughput) {
    if (!size.resolved && size.trials > 0) {
      warnings.push_back(fmt::format("{} B: the search did not resolve within {} trials: NDR between {} and {}",
                                     size.frame_size, size.trials, units::format_bit_rate(size.ndr_bps()),
                                     units::format_bit_rate(size.ndr_failed_share * size.ceiling_bps)));
    }
    if (size.receiver_limited) {
      warnings.push_back(
          fmt::format("{} B: a receiving host dropped frames itself during the search: the rate found "
                      "may be the tester's limit, not the device's",
                      size.frame_size));
    }
    if (size.sender_short) {
      warnings.push_back(
          fmt::format("{} B: a passing trial sent less than it offered (the NDR trial sent {}): the "
                      "tester could not offer the rate",
                      size.frame_size, units::format_bit_rate(size.ndr_sent_bps)));
    }
  }
  if (const auto& c = result.congestion; c && c->congested_lost_frames == 0 && c->congested_rx_frames > 0) {
    warnings.push_back(
        fmt::format("the congested port ({}) lost nothing: it was not congested, so head-of-line "
                    "blocking was not tested; raise the rate",
                    c->congested_agent));
  }
  return warnings;
}

TestVerdict method_verdict(const MethodResult& result) {
  if (result.steps.empty()) return TestVerdict::Incomplete;
  bool lost = false, failed = false;
  for (const auto& step : result.steps) {
    lost |= step.verdict == TestVerdict::Incomplete || !step.not_covered.empty();
    failed |= step.verdict == TestVerdict::Fail;
  }
  return lost ? TestVerdict::Incomplete : failed ? TestVerdict::Fail : TestVerdict::Pass;
}

}  // namespace tusk
