#include "controller/run/run_data.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "common/clock.hpp"
#include "common/units.hpp"
#include "common/wire_bounds.hpp"
#include "controller/verdict/optics_timeline.hpp"
#include "controller/verdict/port_optics.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {

SampleAccount account_samples(const AgentTestData& data, std::uint64_t claimed, std::uint32_t most) {
  SampleAccount account;
  account.claim_beyond_test = claimed > most;
  const std::uint64_t last = std::min<std::uint64_t>(claimed, most);
  for (std::uint64_t i = 1; i <= last; ++i) {
    if (data.samples.contains(static_cast<std::uint32_t>(i))) continue;
    ++account.missing_count;
    if (account.missing.size() < kMaxListedMissing) account.missing.push_back(static_cast<std::uint32_t>(i));
  }
  return account;
}

std::uint32_t most_samples(std::chrono::milliseconds duration, std::chrono::milliseconds sample_interval) {
  const auto interval = std::max<std::int64_t>(sample_interval.count(), 1);
  const auto most = std::max<std::int64_t>(duration.count(), 0) / interval + 1;
  return static_cast<std::uint32_t>(std::min<std::int64_t>(most, std::numeric_limits<std::uint32_t>::max()));
}

RunData::RunData(std::string run_id, std::vector<std::uint32_t> most_samples) : most_samples_(std::move(most_samples)) {
  state_.run_id = std::move(run_id);
}

void RunData::fault_once(const std::string& agent, int test_index, const std::string& what, std::string message) {
  if (!reported_.emplace(agent, test_index, what).second) return;
  spdlog::warn("agent '{}': {}", agent, message);
  state_.faults.push_back({realtime_ns(), agent, test_index, std::move(message)});
}

int RunData::add_test(std::uint32_t most_samples) {
  std::lock_guard lock(mutex_);
  most_samples_.push_back(most_samples);
  return static_cast<int>(most_samples_.size() - 1);
}

std::uint64_t SamplePace::most_by(std::int64_t now_ns) const {
  const std::int64_t interval_ns = std::max<std::int64_t>(1, std::chrono::nanoseconds(interval).count());
  constexpr std::int64_t kLeadNs = 2'000'000'000;
  const std::int64_t lead = std::max<std::int64_t>(3, (kLeadNs + interval_ns - 1) / interval_ns);
  const std::int64_t elapsed = std::max<std::int64_t>(0, now_ns - start_ns);
  return static_cast<std::uint64_t>(elapsed / interval_ns + lead);
}

void RunData::pace(int test_index, std::int64_t start_ns, std::chrono::milliseconds interval) {
  std::lock_guard lock(mutex_);
  paces_[test_index] = SamplePace{start_ns, interval};
  if (!origin_ns_ || start_ns < *origin_ns_) origin_ns_ = start_ns;
}

std::uint64_t RunData::run_ms_of(int test, std::uint32_t index) const {
  const auto pace = paces_.find(test);
  if (pace == paces_.end() || !origin_ns_) return 0;
  const std::int64_t start_ms = std::max<std::int64_t>(0, pace->second.start_ns - *origin_ns_) / 1'000'000;
  return static_cast<std::uint64_t>(start_ms) +
         std::uint64_t{index} * static_cast<std::uint64_t>(std::max<std::int64_t>(0, pace->second.interval.count()));
}

void RunData::expect(const std::string& agent, int test_index, std::size_t most_streams) {
  std::lock_guard lock(mutex_);
  most_streams_[{agent, test_index}] = most_streams;
}

void RunData::judge_windows(int test_index, const TestSpec& spec) {
  if (!spec.window || spec.sample_interval.count() <= 0) return;
  WindowTally rule;
  rule.window = *spec.window;
  rule.samples_per_window = static_cast<std::uint32_t>(std::max<std::int64_t>(1, *spec.window / spec.sample_interval));
  for (const auto& threshold : spec.thresholds) {
    if (judged_per_window(threshold)) rule.thresholds.push_back(threshold);
  }
  std::lock_guard lock(mutex_);
  window_rules_[test_index] = std::move(rule);
}

void RunData::judge_optics_intervals(int test_index, const TestSpec& spec) {
  if (!spec.optics.read || spec.optics.interval.count() <= 0) return;
  OpticsRule rule;
  rule.thresholds = optics_thresholds(spec.optics);
  // The agent reads at most once a second, and the interval ended by the test's end is one more.
  const auto every = std::max(wire::kMinOpticsInterval, spec.optics.interval).count();
  rule.most_intervals =
      static_cast<std::uint32_t>(std::min<std::int64_t>(spec.duration.count() / every + 2, 1'000'000));
  std::lock_guard lock(mutex_);
  optics_rules_[test_index] = std::move(rule);
}

void RunData::fold_optics(const std::string& agent, AgentTestData& data, const proto::OpticsSample& sample,
                          const OpticsThresholds& thresholds) {
  const auto ports = std::min<std::size_t>(static_cast<std::size_t>(sample.ports_size()), kMaxOpticsPortsPerAgent);
  for (std::size_t i = 0; i < ports; ++i) {
    const proto::PortOptics& reported = sample.ports(static_cast<int>(i));
    PortOpticsOutcome judged = judge_port_optics(agent, reported, thresholds);
    auto timeline = data.optics_timeline.find(judged.port);
    if (timeline == data.optics_timeline.end()) {
      if (data.optics_timeline.size() == kMaxOpticsPortsPerAgent) {
        fault_once(agent, sample.test_index(), "optics ports",
                   fmt::format("sent the optics of more than {} ports in test {}: the rest are dropped",
                               kMaxOpticsPortsPerAgent, sample.test_index()));
        continue;
      }
      timeline = data.optics_timeline.try_emplace(judged.port).first;
    }
    add_optics_interval(timeline->second, judged, sample.agent_time_ns(), reported.interval_ns());
  }
}

void RunData::bound_streams(const std::string& agent, int test_index,
                            google::protobuf::RepeatedPtrField<proto::StreamCounters>& streams) {
  const auto planned = most_streams_.find({agent, test_index});
  const std::size_t most = planned == most_streams_.end() ? 0 : planned->second;
  const std::size_t byte_budget = most * wire::kSampleBytesPerPlannedStream;
  std::size_t past_plan = 0, oversized = 0, past_budget = 0, hops_cut = 0, bytes = 0;
  int kept = 0;
  for (int i = 0; i < streams.size(); ++i) {
    auto& stream = streams[i];
    if (static_cast<std::size_t>(kept) >= most) {
      ++past_plan;
      continue;
    }
    if (stream.path_size() > static_cast<int>(wire::kMaxPathHops)) {
      hops_cut += static_cast<std::size_t>(stream.path_size()) - wire::kMaxPathHops;
      stream.mutable_path()->DeleteSubrange(wire::kMaxPathHops,
                                            stream.path_size() - static_cast<int>(wire::kMaxPathHops));
    }
    const std::size_t size = stream.ByteSizeLong();
    if (size > wire::kMaxStreamBytes) {
      ++oversized;
      continue;
    }
    if (bytes + size > byte_budget) {
      ++past_budget;
      continue;
    }
    bytes += size;
    if (kept != i) streams.SwapElements(kept, i);
    ++kept;
  }
  streams.DeleteSubrange(kept, streams.size() - kept);
  if (past_plan > 0) {
    fault_once(agent, test_index, "streams",
               fmt::format("reported {} streams in one record of test {}, more than the {} its plan can make: the "
                           "rest are dropped",
                           past_plan + static_cast<std::size_t>(kept) + oversized + past_budget, test_index, most));
  }
  if (oversized > 0) {
    fault_once(
        agent, test_index, "stream bytes",
        fmt::format("reported a stream of more than {} bytes in test {}: dropped", wire::kMaxStreamBytes, test_index));
  }
  if (past_budget > 0) {
    fault_once(agent, test_index, "sample bytes",
               fmt::format("reported streams of more than {} bytes in one record of test {} ({} per stream its plan "
                           "can make): the rest are dropped",
                           byte_budget, test_index, wire::kSampleBytesPerPlannedStream));
  }
  if (hops_cut > 0) {
    fault_once(agent, test_index, "path hops",
               fmt::format("reported a path of more than {} hops in test {}: the rest are dropped", wire::kMaxPathHops,
                           test_index));
  }
}

namespace {

// The layout `stream` names, or `known` when its names are the same (most layout samples repeat them).
std::shared_ptr<const StreamLayout> layout_named(const proto::StreamCounters& stream,
                                                 const std::shared_ptr<const StreamLayout>& known) {
  std::vector<std::string> counters, gauges;
  if (stream.counter_names_size() > 0 || stream.gauge_names_size() > 0) {
    counters.assign(stream.counter_names().begin(), stream.counter_names().end());
    gauges.assign(stream.gauge_names().begin(), stream.gauge_names().end());
  } else {
    for (const auto& [name, value] : stream.counters()) counters.push_back(name);
    for (const auto& [name, value] : stream.gauges()) gauges.push_back(name);
    // A map's order is its own, not the agent's, and may differ between two samples: sorted, the
    // same names are the same layout (a new one would end the series file's row and minute).
    std::sort(counters.begin(), counters.end());
    std::sort(gauges.begin(), gauges.end());
  }
  if (known && known->same_names(counters, gauges)) return known;
  return std::make_shared<const StreamLayout>(std::move(counters), std::move(gauges));
}

// Who a layout sample's stream is, without its values. A cleared field keeps its room for reuse,
// and the run keeps one of these per stream for as long as it lasts, so the values' room goes too.
proto::StreamCounters identity_of(const proto::StreamCounters& stream) {
  proto::StreamCounters info = stream;
  info.clear_counters();  // a map's clear frees its entries
  info.clear_gauges();
  google::protobuf::RepeatedPtrField<std::string>().Swap(info.mutable_counter_names());
  google::protobuf::RepeatedField<std::uint64_t>().Swap(info.mutable_counter_values());
  google::protobuf::RepeatedPtrField<std::string>().Swap(info.mutable_gauge_names());
  google::protobuf::RepeatedField<double>().Swap(info.mutable_gauge_values());
  return info;
}

// A compact sample's values put back in its streams' counter and gauge maps, with the stream's
// ids, by the names in the sample or those its series holds (`data`, null for none): what a reader
// of maps (the live metrics) takes.
void name_streams(const AgentTestData* data, proto::Sample& sample) {
  for (auto& stream : *sample.mutable_streams()) {
    if (stream.counter_values_size() == 0 && stream.gauge_values_size() == 0) continue;
    std::vector<std::string> counter_names(stream.counter_names().begin(), stream.counter_names().end());
    std::vector<std::string> gauge_names(stream.gauge_names().begin(), stream.gauge_names().end());
    if (counter_names.empty() && gauge_names.empty() && data != nullptr) {
      if (const auto series = data->series.find(stream.stream_id());
          series != data->series.end() && series->second.layout()) {
        counter_names = series->second.layout()->counters;
        gauge_names = series->second.layout()->gauges;
        const auto& info = series->second.info();
        stream.set_peer(info.peer());
        stream.set_kind(info.kind());
        if (info.has_flow()) *stream.mutable_flow() = info.flow();
        stream.set_sender_stream_id(info.sender_stream_id());
        stream.set_nic(info.nic());
      }
    }
    if (counter_names.size() != static_cast<std::size_t>(stream.counter_values_size()) ||
        gauge_names.size() != static_cast<std::size_t>(stream.gauge_values_size())) {
      continue;
    }
    for (int i = 0; i < stream.counter_values_size(); ++i) {
      (*stream.mutable_counters())[counter_names[static_cast<std::size_t>(i)]] = stream.counter_values(i);
    }
    for (int i = 0; i < stream.gauge_values_size(); ++i) {
      (*stream.mutable_gauges())[gauge_names[static_cast<std::size_t>(i)]] = stream.gauge_values(i);
    }
    stream.clear_counter_names();
    stream.clear_counter_values();
    stream.clear_gauge_names();
    stream.clear_gauge_values();
  }
}

}  // namespace

void RunData::fold_sample(const std::string& agent, AgentTestData& data, proto::Sample& sample) {
  const int test = sample.test_index();
  const std::size_t most = most_streams_.at({agent, test});
  for (auto& stream : *sample.mutable_streams()) {
    auto found = data.series.find(stream.stream_id());
    if (found == data.series.end()) {
      // Stream ids past the plan's count would each take a series: the plan's streams are all it keeps.
      if (data.series.size() >= most) {
        fault_once(agent, test, "stream ids",
                   fmt::format("named more than the {} streams its plan can make in test {}: the others are dropped",
                               most, test));
        continue;
      }
      found = data.series.emplace(stream.stream_id(), StreamSeries{}).first;
      if (const auto rule = window_rules_.find(test); rule != window_rules_.end()) {
        WindowTally& windows = found->second.windows;
        windows.window = rule->second.window;
        windows.samples_per_window = rule->second.samples_per_window;
        // Only what the stream's kind is judged on (a sender's stream is judged on nothing).
        for (const auto& threshold : rule->second.thresholds) {
          if (kind_judges(stream.kind(), threshold.metric)) windows.thresholds.push_back(threshold);
        }
      }
    }
    StreamSeries& series = found->second;
    std::shared_ptr<const StreamLayout> layout = series.layout();
    const bool compact = stream.counter_values_size() > 0 || stream.gauge_values_size() > 0 ||
                         stream.counter_names_size() > 0 || stream.gauge_names_size() > 0;
    const bool named = !compact || stream.counter_names_size() > 0 || stream.gauge_names_size() > 0;
    if (named) layout = layout_named(stream, layout);
    if (!layout) {
      fault_once(agent, test, "unnamed values",
                 fmt::format("sent values of stream '{}' in test {} before naming them: dropped until it does",
                             stream.stream_id(), test));
      continue;
    }
    // A compact stream's values are read where they arrived; a map's are put in layout order.
    std::vector<std::uint64_t> counters_of_map;
    std::vector<double> gauges_of_map;
    std::span<const std::uint64_t> counters;
    std::span<const double> gauges;
    if (compact) {
      if (static_cast<std::size_t>(stream.counter_values_size()) != layout->counters.size() ||
          static_cast<std::size_t>(stream.gauge_values_size()) != layout->gauges.size()) {
        fault_once(agent, test, "value count",
                   fmt::format("sent {} counter and {} gauge values for stream '{}' in test {}, whose names are {} "
                               "and {}: dropped",
                               stream.counter_values_size(), stream.gauge_values_size(), stream.stream_id(), test,
                               layout->counters.size(), layout->gauges.size()));
        continue;
      }
      counters = {stream.counter_values().data(), static_cast<std::size_t>(stream.counter_values_size())};
      gauges = {stream.gauge_values().data(), static_cast<std::size_t>(stream.gauge_values_size())};
    } else {
      for (const auto& name : layout->counters) counters_of_map.push_back(stream.counters().at(name));
      for (const auto& name : layout->gauges) gauges_of_map.push_back(stream.gauges().at(name));
      counters = counters_of_map;
      gauges = gauges_of_map;
    }
    if (named) {
      // A layout sample says who the stream is: keep that, without the values (which the spans
      // above still read).
      series.describe(identity_of(stream));
    }
    if (series_file_ && within_series_budget(agent, test)) {
      if (series.series_row == 0) series.series_row = series_file_->stream_row(test, agent, series.info());
      series_bytes_[{agent, test}] +=
          series_file_->append(series.series_row, sample, layout, counters, gauges, run_ms_of(test, sample.index()));
    }
    const std::uint32_t failed_before = series.windows.failed;
    series.add(sample.index(), sample.elapsed_ms(), std::move(layout), counters, gauges, sample.agent_time_ns());
    // A window judged failed keeps its full-resolution rows past the series file's retention.
    if (series_file_ && series.series_row != 0 && series.windows.failed > failed_before) {
      const auto start_ms = series.windows.latest_failed_start_ms;
      series_file_->keep(series.series_row, start_ms,
                         start_ms + static_cast<std::uint64_t>(series.windows.window.count()));
    }
  }
}

bool RunData::admit_event(const std::string& agent, int test_index) {
  if (++event_counts_[{agent, test_index}] <= kMaxEventsPerAgentTest) return true;
  fault_once(agent, test_index, "events",
             test_index < 0 ? fmt::format("sent more than {} events outside this run's tests: the rest are dropped",
                                          kMaxEventsPerAgentTest)
                            : fmt::format("sent more than {} events in test {}: the rest are dropped",
                                          kMaxEventsPerAgentTest, test_index));
  return false;
}

std::optional<proto::Record> RunData::on_record(const std::string& agent, proto::Record&& record, bool want_kept) {
  std::optional<proto::Record> kept_copy;
  std::lock_guard lock(mutex_);
  auto belongs = [&](const std::string& run_id) { return run_id == state_.run_id; };
  // A test this run has; anything else is dropped, and said once. A test already judged drops
  // what comes late, unsaid: its outcome is made.
  auto known_test = [&](int test_index) {
    if (taken_.contains(test_index)) return false;
    if (test_index >= 0 && static_cast<std::size_t>(test_index) < most_samples_.size()) return true;
    // Once per agent, whichever index: a fault per unknown index would let a peer that counts up
    // fill the run's faults and log.
    fault_once(agent, -1, "unknown test",
               fmt::format("sent records for test {}, which this run of {} tests does not have: dropped (and any "
                           "more for tests it does not have)",
                           test_index, most_samples_.size()));
    return false;
  };
  // A test this agent was handed a plan for; records of any other are dropped, and said once.
  auto planned = [&](int test_index) {
    if (most_streams_.contains({agent, test_index})) return true;
    fault_once(agent, test_index, "plan",
               fmt::format("sent records for test {}, for which it was handed no plan: dropped", test_index));
    return false;
  };
  switch (record.body_case()) {
    case proto::Record::kSample: {
      const auto& sample = record.sample();
      if (!belongs(sample.run_id()) || !known_test(sample.test_index())) return std::nullopt;
      const std::uint32_t most = most_samples_[static_cast<std::size_t>(sample.test_index())];
      if (sample.index() == 0 || sample.index() > most) {
        fault_once(agent, sample.test_index(), "sample index",
                   fmt::format("sent sample {} of test {}, which makes at most {}: dropped", sample.index(),
                               sample.test_index(), most));
        return std::nullopt;
      }
      if (!planned(sample.test_index())) return std::nullopt;
      if (const auto pace = paces_.find(sample.test_index()); pace != paces_.end()) {
        const std::int64_t now = realtime_ns();
        if (const std::uint64_t by_now = pace->second.most_by(now); sample.index() > by_now) {
          fault_once(agent, sample.test_index(), "sample pace",
                     fmt::format("sent sample {} of test {} {} after its start, when at most {} can have been "
                                 "taken (one every {}): dropped, and any other ahead of the test's time",
                                 sample.index(), sample.test_index(),
                                 units::format_duration(std::chrono::milliseconds(
                                     std::max<std::int64_t>(0, now - pace->second.start_ns) / 1'000'000)),
                                 by_now, units::format_duration(pace->second.interval)));
          return std::nullopt;
        }
      }
      AgentTestData& data = state_.tests[{sample.test_index(), agent}];
      if (!data.samples.insert(sample.index())) return std::nullopt;  // a retry of one already folded in
      proto::Sample& kept = *record.mutable_sample();
      bound_streams(agent, sample.test_index(), *kept.mutable_streams());
      if (want_kept) {
        kept_copy = record;
        name_streams(&data, *kept_copy->mutable_sample());
      }
      fold_sample(agent, data, kept);
      break;
    }
    case proto::Record::kResult: {
      const auto& result = record.result();
      if (!belongs(result.run_id()) || !known_test(result.test_index()) || !planned(result.test_index()))
        return std::nullopt;
      const int test_index = result.test_index();
      proto::TestResult kept = std::move(*record.mutable_result());
      bound_streams(agent, test_index, *kept.mutable_streams());
      if (want_kept) *kept_copy.emplace().mutable_result() = kept;
      state_.tests[{test_index, agent}].result = std::move(kept);
      break;
    }
    case proto::Record::kOptics: {
      const auto& sample = record.optics();
      if (!belongs(sample.run_id()) || !known_test(sample.test_index()) || !planned(sample.test_index()))
        return std::nullopt;
      const auto rule = optics_rules_.find(sample.test_index());
      if (rule == optics_rules_.end() || sample.index() == 0 || sample.index() > rule->second.most_intervals) {
        fault_once(agent, sample.test_index(), "optics index",
                   fmt::format("sent optics interval {} of test {}, which reads at most {}: dropped", sample.index(),
                               sample.test_index(), rule == optics_rules_.end() ? 0 : rule->second.most_intervals));
        return std::nullopt;
      }
      AgentTestData& data = state_.tests[{sample.test_index(), agent}];
      if (!data.optics_samples.insert(sample.index())) return std::nullopt;  // a retry of one already judged
      fold_optics(agent, data, sample, rule->second.thresholds);
      break;
    }
    case proto::Record::kEvent: {
      proto::AgentEvent event = std::move(*record.mutable_event());
      // Events outside this run (e.g. a lease that expired while idle) are still faults worth
      // telling, under the same limit as a test's.
      const bool ours = belongs(event.run_id());
      if (ours && !known_test(event.test_index())) return std::nullopt;
      if (!admit_event(agent, ours ? event.test_index() : -1)) return std::nullopt;
      spdlog::warn("agent '{}': {}: {}", agent, proto::AgentEvent::Kind_Name(event.kind()), event.message());
      if (!ours) {
        state_.faults.push_back(
            {event.agent_time_ns(), agent, -1, proto::AgentEvent::Kind_Name(event.kind()) + ": " + event.message()});
        return std::nullopt;
      }
      state_.tests[{event.test_index(), agent}].events.push_back(std::move(event));
      break;
    }
    case proto::Record::BODY_NOT_SET:
      break;
  }
  return kept_copy;
}

bool RunData::within_series_budget(const std::string& agent, int test) {
  const std::uint64_t budget = std::uint64_t{most_samples_[static_cast<std::size_t>(test)]} *
                               most_streams_.at({agent, test}) * kSeriesBytesPerStreamSample;
  const std::uint64_t written = series_bytes_[{agent, test}];
  if (written < budget) return true;
  fault_once(agent, test, "series budget",
             fmt::format("wrote {} to the series file in test {}, its budget ({} per sample and stream its plan "
                         "allows): its later samples are judged but not written",
                         units::format_size(written), test, units::format_size(kSeriesBytesPerStreamSample)));
  return false;
}

void RunData::keep_closing_windows(const AgentTestData& data) {
  if (!series_file_) return;
  for (const auto& [id, series] : data.series) {
    if (series.series_row == 0 || !series.windows.active()) continue;
    WindowTally closed = series.windows;
    closed.close();
    if (closed.failed > series.windows.failed) {
      series_file_->keep(series.series_row, closed.latest_failed_start_ms,
                         closed.latest_failed_start_ms + static_cast<std::uint64_t>(closed.window.count()));
    }
  }
}

std::map<std::string, AgentTestData> RunData::take_test(int test_index, const std::vector<std::string>& agents) {
  std::map<std::string, AgentTestData> taken;
  std::lock_guard lock(mutex_);
  for (const auto& name : agents) {
    const auto found = state_.tests.find({test_index, name});
    if (found == state_.tests.end()) {
      taken[name];
      continue;
    }
    keep_closing_windows(found->second);
    taken[name] = std::move(found->second);
    state_.tests.erase(found);
  }
  taken_.insert(test_index);
  // The test's admission rules go with its data; taken_ drops whatever comes later.
  paces_.erase(test_index);
  std::erase_if(series_bytes_, [&](const auto& entry) { return entry.first.second == test_index; });
  return taken;
}

void RunData::on_plan_ack(const std::string& agent, const proto::PlanAck& ack) {
  std::lock_guard lock(mutex_);
  if (ack.run_id() != state_.run_id || taken_.contains(ack.test_index())) return;
  // Only for a plan this agent was handed, one ack each (the latest): an ack for any index, kept whole until the run
  // ends, let one agent hold the controller's memory and write on the operator's screen.
  if (!most_streams_.contains({agent, ack.test_index()})) return;
  auto& kept = state_.tests[{ack.test_index(), agent}].plan_ack;
  kept = ack;
}

void RunData::on_fault(const std::string& agent, const std::string& message) {
  std::lock_guard lock(mutex_);
  if (++connection_faults_[{agent, state_.current_test}] > kMaxConnectionFaultsPerAgentTest) {
    fault_once(agent, state_.current_test, "connection faults",
               fmt::format("more than {} connection faults in this test; the rest are not listed",
                           kMaxConnectionFaultsPerAgentTest));
    return;
  }
  state_.faults.push_back({realtime_ns(), agent, state_.current_test, message});
}

}  // namespace tusk
