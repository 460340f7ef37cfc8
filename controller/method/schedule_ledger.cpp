#include "controller/method/schedule_ledger.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "controller/method/schedule_ledger_flows.hpp"
#include "schedule_ledger.pb.h"

namespace tusk {

namespace {

void save(const Threshold& threshold, ledger::Threshold& out) {
  out.set_key(threshold.key);
  out.set_metric(threshold.metric);
  out.set_min(threshold.bound == Bound::Min);
  out.set_value(threshold.value);
  out.set_file(threshold.pos.file);
  out.set_line(threshold.pos.line);
  out.set_column(threshold.pos.column);
  out.set_implicit(threshold.implicit);
}

Threshold load(const ledger::Threshold& in) {
  Threshold threshold;
  threshold.key = in.key();
  threshold.metric = in.metric();
  threshold.bound = in.min() ? Bound::Min : Bound::Max;
  threshold.value = in.value();
  threshold.pos = {in.file(), in.line(), in.column()};
  threshold.implicit = in.implicit();
  return threshold;
}

void save(const WindowFailure& failure, ledger::WindowFailure& out) {
  out.set_window(failure.window);
  out.set_start_ms(failure.start_ms);
  out.set_start_agent_ns(failure.start_agent_ns);
  out.set_excess(failure.excess);
  out.set_text(failure.text);
}

WindowFailure load(const ledger::WindowFailure& in) {
  return {in.window(), in.start_ms(), in.start_agent_ns(), in.excess(), in.text()};
}

void save(const WindowTally& windows, ledger::Windows& out) {
  out.set_window_ms(windows.window.count());
  out.set_samples_per_window(windows.samples_per_window);
  for (const auto& threshold : windows.thresholds) save(threshold, *out.add_thresholds());
  out.set_judged(windows.judged);
  out.set_failed(windows.failed);
  out.mutable_failed_by_threshold()->Add(windows.failed_by_threshold.begin(), windows.failed_by_threshold.end());
  if (windows.first) save(*windows.first, *out.mutable_first());
  if (windows.worst) save(*windows.worst, *out.mutable_worst());
  out.set_latest_failed_start_ms(windows.latest_failed_start_ms);
  out.set_rate_windows(windows.rate_windows);
  out.set_rate_mean(windows.rate_mean);
  out.set_rate_m2(windows.rate_m2);
}

std::shared_ptr<const WindowTally> load(const ledger::Windows& in) {
  auto windows = std::make_shared<WindowTally>();
  windows->window = std::chrono::milliseconds(in.window_ms());
  windows->samples_per_window = in.samples_per_window();
  for (const auto& threshold : in.thresholds()) windows->thresholds.push_back(load(threshold));
  windows->judged = in.judged();
  windows->failed = in.failed();
  windows->failed_by_threshold.assign(in.failed_by_threshold().begin(), in.failed_by_threshold().end());
  if (in.has_first()) windows->first = load(in.first());
  if (in.has_worst()) windows->worst = load(in.worst());
  windows->latest_failed_start_ms = in.latest_failed_start_ms();
  windows->rate_windows = in.rate_windows();
  windows->rate_mean = in.rate_mean();
  windows->rate_m2 = in.rate_m2();
  return windows;
}

void save(const StreamVerdict& verdict, ledger::Stream& out) {
  out.set_agent(verdict.agent);
  out.set_step(verdict.step);
  *out.mutable_counters() = verdict.stream;
  out.mutable_metrics()->insert(verdict.metrics.begin(), verdict.metrics.end());
  if (const auto& ber = verdict.ber) {
    ledger::Ber& saved = *out.mutable_ber();
    saved.set_measured(ber->estimate.measured);
    saved.set_upper_bound(ber->estimate.upper_bound);
    saved.set_lower_bound(ber->estimate.lower_bound);
    saved.set_confidence(ber->estimate.confidence);
    saved.set_bits(ber->estimate.bits);
    saved.set_errors(ber->estimate.errors);
    saved.set_target(ber->target);
    saved.set_bits_needed_for_target(ber->bits_needed_for_target);
    if (ber->seconds_more_for_target) saved.set_seconds_more_for_target(*ber->seconds_more_for_target);
  }
  for (const ThresholdCheck& check : verdict.checks) {
    ledger::Check& saved = *out.add_checks();
    save(check.threshold, *saved.mutable_threshold());
    if (check.measured) saved.set_measured(*check.measured);
    saved.set_passed(check.passed);
    saved.set_caveat(check.caveat);
    saved.set_not_the_link(static_cast<std::uint32_t>(check.not_the_link));
  }
  if (verdict.windows) save(*verdict.windows, *out.mutable_windows());
}

StreamVerdict load(ledger::Stream& in) {
  StreamVerdict verdict;
  verdict.agent = in.agent();
  verdict.step = in.step();
  verdict.stream = std::move(*in.mutable_counters());
  verdict.metrics.insert(in.metrics().begin(), in.metrics().end());
  if (in.has_ber()) {
    const ledger::Ber& saved = in.ber();
    BerResult ber;
    ber.estimate = {saved.measured(),   saved.upper_bound(), saved.lower_bound(),
                    saved.confidence(), saved.bits(),        saved.errors()};
    ber.target = saved.target();
    ber.bits_needed_for_target = saved.bits_needed_for_target();
    if (saved.has_seconds_more_for_target()) ber.seconds_more_for_target = saved.seconds_more_for_target();
    verdict.ber = ber;
  }
  for (const auto& saved : in.checks()) {
    ThresholdCheck check;
    check.threshold = load(saved.threshold());
    if (saved.has_measured()) check.measured = saved.measured();
    check.passed = saved.passed();
    check.caveat = saved.caveat();
    if (saved.not_the_link() > static_cast<std::uint32_t>(ThresholdCheck::NotTheLink::PeerLost)) {
      throw std::runtime_error(fmt::format("a check of {}'s stream says no reason there is", verdict.agent));
    }
    check.not_the_link = static_cast<ThresholdCheck::NotTheLink>(saved.not_the_link());
    verdict.checks.push_back(std::move(check));
  }
  if (in.has_windows()) verdict.windows = load(in.windows());
  return verdict;
}

TestVerdict verdict_of(std::uint32_t saved) {
  if (saved > static_cast<std::uint32_t>(TestVerdict::Incomplete)) throw std::runtime_error("no such verdict");
  return static_cast<TestVerdict>(saved);
}

void save(const MethodStep& step, ledger::StepRow& out) {
  out.set_label(step.label);
  out.set_frame_size(step.frame_size);
  out.set_offered_bps(step.offered_bps);
  out.set_offered_pps(step.offered_pps);
  out.set_rate_fraction(step.rate_fraction);
  out.set_senders(step.senders);
  out.set_pairs(step.pairs);
  out.set_streams(step.streams);
  for (const auto& pair : step.not_covered) {
    auto& saved = *out.add_not_covered();
    saved.set_sender(pair.sender);
    saved.set_receiver(pair.receiver);
    saved.set_why(pair.why);
  }
  out.set_tx_frames(step.tx_frames);
  out.set_tx_messages(step.tx_messages);
  out.set_messages_per_s(step.messages_per_s);
  out.set_rx_frames(step.rx_frames);
  out.set_lost_frames(step.lost_frames);
  out.set_host_drops(step.host_drops);
  out.set_ce_marked(step.ce_marked);
  out.set_loss_ratio(step.loss_ratio);
  out.set_rx_bps(step.rx_bps);
  out.set_sent_bps(step.sent_bps);
  out.set_sender_short(step.sender_short);
  if (step.latency_p50_ns) out.set_latency_p50_ns(*step.latency_p50_ns);
  if (step.latency_p99_ns) out.set_latency_p99_ns(*step.latency_p99_ns);
  if (step.latency_max_ns) out.set_latency_max_ns(*step.latency_max_ns);
  out.mutable_nic()->insert(step.nic.begin(), step.nic.end());
  out.set_verdict(static_cast<std::uint32_t>(step.verdict));
}

MethodStep load(const ledger::StepRow& in) {
  MethodStep step;
  step.label = in.label();
  step.frame_size = in.frame_size();
  step.offered_bps = in.offered_bps();
  step.offered_pps = in.offered_pps();
  step.rate_fraction = in.rate_fraction();
  step.senders = in.senders();
  step.pairs = in.pairs();
  step.streams = in.streams();
  for (const auto& pair : in.not_covered()) step.not_covered.push_back({pair.sender(), pair.receiver(), pair.why()});
  step.tx_frames = in.tx_frames();
  step.tx_messages = in.tx_messages();
  step.messages_per_s = in.messages_per_s();
  step.rx_frames = in.rx_frames();
  step.lost_frames = in.lost_frames();
  step.host_drops = in.host_drops();
  step.ce_marked = in.ce_marked();
  step.loss_ratio = in.loss_ratio();
  step.rx_bps = in.rx_bps();
  step.sent_bps = in.sent_bps();
  step.sender_short = in.sender_short();
  if (in.has_latency_p50_ns()) step.latency_p50_ns = in.latency_p50_ns();
  if (in.has_latency_p99_ns()) step.latency_p99_ns = in.latency_p99_ns();
  if (in.has_latency_max_ns()) step.latency_max_ns = in.latency_max_ns();
  step.nic.insert(in.nic().begin(), in.nic().end());
  step.verdict = verdict_of(in.verdict());
  return step;
}

void save(const TestOutcome& step, ledger::StepOutcome& out) {
  out.set_index(step.index);
  for (const auto& agent : step.agents) out.add_agents(agent);
  out.set_planned_start_ns(step.planned_start_ns);
  for (const auto& verdict : step.streams) save(verdict, *out.add_streams());
  for (const auto& outlier : step.outliers) {
    auto& saved = *out.add_outliers();
    saved.set_stream(outlier.stream);
    saved.set_metric(outlier.metric);
    saved.set_value(outlier.value);
    saved.set_median(outlier.median);
    saved.set_spread(outlier.spread);
    saved.set_deviations(outlier.deviations);
    saved.set_class_size(outlier.class_size);
    saved.set_class_name(outlier.class_name);
  }
  for (const auto& sign : step.path_faults) {
    auto& saved = *out.add_path_faults();
    saved.set_receiver(sign.receiver);
    saved.set_sender(sign.sender);
    saved.mutable_failing()->Add(sign.failing.begin(), sign.failing.end());
    saved.mutable_passing()->Add(sign.passing.begin(), sign.passing.end());
    saved.set_passing_not_kept(sign.passing_not_kept);
  }
  for (const auto& line : step.problems) out.add_problems(line);
  for (const auto& line : step.warnings) out.add_warnings(line);
  out.set_agents_lost(step.agents_lost);
  out.set_verdict(static_cast<std::uint32_t>(step.verdict));
}

TestOutcome load(ledger::StepOutcome& in) {
  TestOutcome step;
  step.index = in.index();
  step.agents.assign(in.agents().begin(), in.agents().end());
  for (const auto& agent : step.agents) step.per_agent[agent] = AgentTestData{};
  step.planned_start_ns = in.planned_start_ns();
  for (auto& saved : *in.mutable_streams()) step.streams.push_back(load(saved));
  const auto stream_at = [&](std::uint64_t s) {
    if (s >= step.streams.size()) throw std::runtime_error(fmt::format("step {}: no stream {}", step.index, s));
    return static_cast<std::size_t>(s);
  };
  for (const auto& saved : in.outliers()) {
    step.outliers.push_back({stream_at(saved.stream()), saved.metric(), saved.value(), saved.median(), saved.spread(),
                             saved.deviations(), static_cast<std::size_t>(saved.class_size()), saved.class_name()});
  }
  for (const auto& saved : in.path_faults()) {
    PathFaultSign sign;
    sign.receiver = saved.receiver();
    sign.sender = saved.sender();
    for (const auto s : saved.failing()) sign.failing.push_back(stream_at(s));
    for (const auto s : saved.passing()) sign.passing.push_back(stream_at(s));
    sign.passing_not_kept = static_cast<std::size_t>(saved.passing_not_kept());
    step.path_faults.push_back(std::move(sign));
  }
  step.problems.assign(in.problems().begin(), in.problems().end());
  step.warnings.assign(in.warnings().begin(), in.warnings().end());
  step.agents_lost = in.agents_lost();
  step.verdict = verdict_of(in.verdict());
  return step;
}

std::string ledger_path(const std::string& directory) {
  return (std::filesystem::path(directory) / kScheduleLedgerFileName).string();
}

}  // namespace

void write_schedule_ledger(const std::string& directory, const LedgerIdentity& identity, const MethodResult& so_far,
                           const std::vector<Fault>& faults, const FabricTopology* topology) {
  ledger::ScheduleLedger out;
  out.set_version(kScheduleLedgerVersion);
  out.set_run_id(identity.run_id);
  out.set_started_ns(identity.started_ns);
  out.set_profile_digest(identity.profile_digest);
  out.set_topology_digest(identity.topology_digest);
  out.set_test_index(identity.test_index);
  out.set_test_name(identity.test_name);
  for (const auto& agent : identity.agents) out.add_agents(agent);
  for (const auto& [name, verdict] : identity.tests_before) {
    out.add_tests_before(name);
    out.add_tests_before_verdicts(static_cast<std::uint32_t>(verdict));
  }
  out.set_series_file(identity.series_file);
  out.set_complete(so_far.complete);
  for (const auto& step : so_far.steps) save(step, *out.add_steps());
  for (const auto& step : so_far.step_outcomes) save(step, *out.add_outcomes());
  if (so_far.schedule_flows) save_flow_table(*so_far.schedule_flows, *out.mutable_flows(), topology);
  for (const auto& fault : faults) {
    auto& saved = *out.add_faults();
    saved.set_time_ns(fault.time_ns);
    saved.set_agent(fault.agent);
    saved.set_test_index(fault.test_index);
    saved.set_message(fault.message);
  }
  // Whole or not at all: a controller killed while writing leaves the last step's ledger.
  const std::string path = ledger_path(directory);
  const std::string temporary = path + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(fmt::format("{}: cannot write the ledger: {}", temporary, std::strerror(errno)));
  const bool written = out.SerializeToFileDescriptor(fd);
  const int sync_error = ::fsync(fd) == 0 ? 0 : errno;
  ::close(fd);
  if (!written || sync_error != 0) {
    std::filesystem::remove(temporary);
    throw std::runtime_error(fmt::format("{}: cannot write the ledger: {}", temporary,
                                         sync_error ? std::strerror(sync_error) : "the disk refused it"));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) throw std::runtime_error(fmt::format("{}: cannot replace the ledger: {}", path, error.message()));
}

ScheduleLedger read_schedule_ledger(const std::string& directory, const FabricTopology* topology) {
  const std::string path = ledger_path(directory);
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw std::runtime_error(fmt::format("{}: no schedule ledger: the run finished no step of a schedule{}", path,
                                         std::filesystem::is_directory(directory) ? "" : " (no such directory)"));
  }
  ledger::ScheduleLedger in;
  if (!in.ParseFromIstream(&file)) throw std::runtime_error(fmt::format("{}: not a schedule ledger", path));
  if (in.version() != kScheduleLedgerVersion) {
    throw std::runtime_error(
        fmt::format("{}: ledger version {}, this controller reads {}", path, in.version(), kScheduleLedgerVersion));
  }
  try {
    ScheduleLedger ledger;
    LedgerIdentity& id = ledger.identity;
    id.run_id = in.run_id();
    id.started_ns = in.started_ns();
    id.profile_digest = in.profile_digest();
    id.topology_digest = in.topology_digest();
    id.test_index = in.test_index();
    id.test_name = in.test_name();
    id.agents.assign(in.agents().begin(), in.agents().end());
    if (in.tests_before_size() != in.tests_before_verdicts_size()) throw std::runtime_error("tests_before: uneven");
    for (int i = 0; i < in.tests_before_size(); ++i) {
      id.tests_before.emplace_back(in.tests_before(i), verdict_of(in.tests_before_verdicts(i)));
    }
    id.series_file = in.series_file();
    ledger.complete = in.complete();
    for (const auto& row : in.steps()) ledger.steps.push_back(load(row));
    if (in.outcomes_size() != in.steps_size()) throw std::runtime_error("a step without its outcome");
    std::size_t streams = 0;
    for (auto& outcome : *in.mutable_outcomes()) {
      ledger.outcomes.push_back(load(outcome));
      streams += ledger.outcomes.back().streams.size();
    }
    if (in.has_flows()) {
      ledger.flows = load_flow_table(in.flows(), topology);
      for (std::size_t f = 0; f < ledger.flows->size(); ++f) {
        const FlowRecord& flow = (*ledger.flows)[f];
        for (const std::uint32_t s : {flow.rx_stream, flow.tx_stream}) {
          if (s != kNoStream && s >= streams) throw std::runtime_error(fmt::format("flow {}: no stream {}", f, s));
        }
      }
    }
    for (const auto& fault : in.faults()) {
      ledger.faults.push_back({fault.time_ns(), fault.agent(), fault.test_index(), fault.message()});
    }
    return ledger;
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(fmt::format("{}: a damaged schedule ledger: {}", path, e.what()));
  }
}

std::uint64_t file_digest(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return 0;
  std::uint64_t digest = 0xcbf29ce484222325ULL;
  char buffer[1 << 14];
  while (file.read(buffer, sizeof buffer) || file.gcount() > 0) {
    for (std::streamsize i = 0; i < file.gcount(); ++i) {
      digest = (digest ^ static_cast<unsigned char>(buffer[i])) * 0x100000001b3ULL;
    }
  }
  return digest;
}

}  // namespace tusk
