#include <fmt/format.h>

#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/clock.hpp"
#include "common/counter_names.hpp"
#include "common/rates.hpp"
#include "common/version.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/method/method_report.hpp"
#include "controller/report/localisation_json.hpp"
#include "controller/report/optics_json.hpp"
#include "controller/report/report_json_parts.hpp"
#include "controller/report/reports.hpp"
#include "controller/report/switch_counters_json.hpp"
#include "controller/verdict/ber_bound.hpp"

namespace tusk {
using json = nlohmann::ordered_json;

namespace {

json counters_json(const proto::StreamCounters& stream) {
  json counters = json::object();
  for (const auto& [name, value] : stream.counters()) counters[name] = value;
  return counters;
}

json gauges_json(const proto::StreamCounters& stream) {
  json gauges = json::object();
  for (const auto& [name, value] : stream.gauges()) gauges[name] = value;
  return gauges;
}

// A stream's series in bins of `width` samples (the test's widest, so every stream's bins cover the
// same sample indexes), as columns: one array per field, an entry per bin that holds a sample.
// Count columns that are zero throughout, and worst values never measured, are left out.
json series_bins_json(const StreamSeries* series, std::uint32_t width) {
  json bins = json::object();
  if (!series) return bins;
  json index = json::array(), elapsed = json::array(), samples = json::array(), throughput = json::array(),
       slowest = json::array(), step_time = json::array();
  json lost = json::array(), damaged = json::array(), retransmits = json::array(), gaps = json::array(),
       flaps = json::array();
  bool any_slowest = false, any_step_time = false, any_lost = false, any_damaged = false, any_retransmits = false,
       any_gaps = false, any_flaps = false;
  const auto worst = [](float value, bool& any) -> json {
    if (value < 0) return nullptr;
    any = true;
    return std::llround(value);
  };
  const auto count = [](std::uint64_t value, bool& any) {
    any = any || value != 0;
    return value;
  };
  for (const SeriesBin& bin : series->bins_at(width)) {
    if (bin.samples == 0) continue;
    index.push_back(bin.last_index);
    elapsed.push_back(bin.elapsed_ms);
    samples.push_back(bin.samples);
    const auto rate = bin.throughput_bps();
    throughput.push_back(rate ? json(std::llround(*rate)) : json(nullptr));
    slowest.push_back(worst(bin.min_throughput_bps, any_slowest));
    step_time.push_back(worst(bin.max_step_time_ns, any_step_time));
    lost.push_back(count(bin.lost, any_lost));
    damaged.push_back(count(bin.damaged, any_damaged));
    retransmits.push_back(count(bin.retransmits, any_retransmits));
    gaps.push_back(count(bin.traffic_gaps, any_gaps));
    flaps.push_back(count(bin.link_flaps, any_flaps));
  }
  bins["index"] = std::move(index);
  bins["elapsed_ms"] = std::move(elapsed);
  bins["samples"] = std::move(samples);
  bins["throughput_bps"] = std::move(throughput);
  if (any_slowest) bins["min_throughput_bps"] = std::move(slowest);
  if (any_lost) bins["lost"] = std::move(lost);
  if (any_damaged) bins["damaged"] = std::move(damaged);
  if (any_retransmits) bins["retransmits"] = std::move(retransmits);
  if (any_gaps) bins["traffic_gaps"] = std::move(gaps);
  if (any_flaps) bins["link_flaps"] = std::move(flaps);
  if (any_step_time) bins["step_time_ns"] = std::move(step_time);
  return bins;
}

json window_failure_json(const std::optional<WindowFailure>& failure) {
  if (!failure) return nullptr;
  return {{"window", failure->window},
          {"start", utc_iso_time(failure->start_agent_ns)},
          {"start_s", failure->start_ms / 1e3},
          {"failed", failure->text}};
}

// How the stream's windows went: how many were judged and failed (per threshold too), the first
// and the worst that failed, and how steady its throughput was from window to window.
json windows_json(const WindowTally& windows) {
  json failed_by = json::object();
  for (std::size_t i = 0; i < windows.thresholds.size() && i < windows.failed_by_threshold.size(); ++i) {
    failed_by[windows.thresholds[i].key] = windows.failed_by_threshold[i];
  }
  const auto cv = windows.throughput_cv();
  return {{"window_s", windows.window.count() / 1e3},
          {"judged", windows.judged},
          {"failed", windows.failed},
          {"failed_by_threshold", failed_by},
          {"first_failed", window_failure_json(windows.first)},
          {"worst_failed", window_failure_json(windows.worst)},
          {"throughput_mean_bps", windows.rate_windows > 0 ? json(windows.rate_mean) : json(nullptr)},
          {"throughput_cv", cv ? json(*cv) : json(nullptr)}};
}

}  // namespace

std::uint32_t test_bin_width(const TestOutcome& test) {
  std::uint32_t width = 1;
  for (const auto& [name, agent] : test.per_agent) {
    for (const auto& [id, series] : agent.series) width = std::max(width, series.width());
  }
  if (test.lent_series) width = std::max(width, test.lent_series->width);
  // A schedule's streams are the test's, their series its steps'.
  if (test.method && !test.streams.empty()) {
    for (const auto& step : test.method->step_outcomes) width = std::max(width, test_bin_width(step));
  }
  return width;
}

// A stream's id, or, where a schedule's steps are judged together, {step, stream}: each step's
// streams are numbered afresh.
json stream_ref(const StreamVerdict& verdict) {
  if (verdict.step == 0) return verdict.stream.stream_id();
  return {{"step", verdict.step}, {"stream", verdict.stream.stream_id()}};
}

namespace {

const StreamSeries* series_of(const TestOutcome& test, const StreamVerdict& verdict) {
  // A schedule's stream keeps its series with its step's agents.
  const TestOutcome& owner = verdict.step > 0 && test.method && verdict.step <= test.method->step_outcomes.size()
                                 ? test.method->step_outcomes[verdict.step - 1]
                                 : test;
  const auto agent = owner.per_agent.find(verdict.agent);
  if (agent == owner.per_agent.end()) return nullptr;
  const auto series = agent->second.series.find(verdict.stream.stream_id());
  return series == agent->second.series.end() ? nullptr : &series->second;
}

// What the bits compared prove (StreamVerdict::ber).
json ber_json(const StreamVerdict& verdict) {
  if (!verdict.ber) return nullptr;
  const auto& ber = *verdict.ber;
  const BerEstimate& estimate = ber.estimate;
  return {
      {"bits_compared", estimate.bits},
      {"bit_errors", estimate.errors},
      {"measured", estimate.has_data() ? json(estimate.measured) : json(nullptr)},
      {"upper_bound", estimate.has_data() ? json(estimate.upper_bound) : json(nullptr)},
      {"lower_bound", estimate.has_data() ? json(estimate.lower_bound) : json(nullptr)},
      {"confidence", estimate.confidence},
      {"target", ber.target},
      {"bits_needed_for_target", ber.bits_needed_for_target},
      {"seconds_more_for_target", ber.seconds_more_for_target ? json(*ber.seconds_more_for_target) : json(nullptr)}};
}

json coverage_json(const LinkCoverage& coverage) {
  return {{"links", coverage.links},
          {"directions", 2 * coverage.links},
          {"share", coverage.share()},
          {"exercised_a_to_b", coverage.forward},
          {"exercised_b_to_a", coverage.backward},
          {"exercised_both_ways", coverage.both_ways},
          {"never_exercised", coverage.never},
          {"flows_per_direction", {{"min", coverage.flows_min}, {"median", coverage.flows_median}}},
          {"flows", coverage.flows},
          {"partial_paths", coverage.partial_paths},
          {"text", coverage.text()}};
}

// One judged stream: who, which way, its flow, counters, metrics, BER, checks and series.
json judged_stream_json(const StreamVerdict& verdict, const StreamSeries* series, std::uint32_t bin_width,
                        StreamBins bins) {
  json stream;
  stream["agent"] = verdict.agent;
  if (verdict.step > 0) stream["step"] = verdict.step;
  stream["stream_id"] = verdict.stream.stream_id();
  stream["peer"] = verdict.stream.peer();
  stream["kind"] = verdict.stream.kind();
  if (!verdict.stream.nic().empty()) stream["nic"] = verdict.stream.nic();  // the local NIC port it went through
  // Which way its traffic went, so every view draws the same host pair.
  if (!verdict.stream.peer().empty()) {
    const bool receives = kind_receives(verdict.stream.kind());
    stream["sender"] = receives ? verdict.stream.peer() : verdict.agent;
    stream["receiver"] = receives ? verdict.agent : verdict.stream.peer();
  }
  if (verdict.stream.has_flow()) {
    const auto& flow = verdict.stream.flow();
    stream["flow"] = {{"src_address", flow.src_address()}, {"src_port", flow.src_port()},
                      {"dst_address", flow.dst_address()}, {"dst_port", flow.dst_port()},
                      {"protocol", flow.protocol()},       {"dscp", flow.dscp()},
                      {"text", flow_text(verdict.stream)}};
  }
  stream["passed"] = verdict.passed();
  stream["counters"] = counters_json(verdict.stream);
  stream["gauges"] = gauges_json(verdict.stream);
  stream["metrics"] = verdict.metrics;
  stream["ber"] = ber_json(verdict);
  json checks = json::array();
  for (const auto& check : verdict.checks) {
    checks.push_back({{"key", check.threshold.key},
                      {"measured", check.measured ? json(*check.measured) : json(nullptr)},
                      {"limit", check.threshold.value},
                      {"passed", check.passed},
                      {"text", check.describe()}});
  }
  stream["checks"] = checks;
  if (verdict.windows) {
    stream["windows"] = windows_json(*verdict.windows);
    // A soak's error rate: frames lost or damaged per hour of the stream's samples.
    std::uint64_t errors = 0, span_ms = 0;
    if (series) {
      for (const SeriesBin& bin : series->bins()) errors += bin.lost + bin.damaged, span_ms += bin.span_ms;
    }
    stream["windows"]["errors_per_hour"] = span_ms > 0 ? json(errors * 3.6e6 / span_ms) : json(nullptr);
  }
  if (bins == StreamBins::Written) stream["bins"] = series_bins_json(series, bin_width);
  return stream;
}

json path_faults_json(const TestOutcome& test) {
  json path_faults = json::array();
  for (const auto& sign : test.path_faults) {
    const auto ids = [&](const std::vector<std::size_t>& indexes) {
      json list = json::array();
      for (const std::size_t index : indexes) list.push_back(stream_ref(test.streams.at(index)));
      return list;
    };
    path_faults.push_back({{"receiver", sign.receiver},
                           {"sender", sign.sender},
                           {"failing_streams", ids(sign.failing)},
                           {"passing_streams", ids(sign.passing)},
                           {"passing_streams_not_kept", sign.passing_not_kept},
                           {"text", sign.text(test.streams)}});
  }
  return path_faults;
}

// The streams far from their class's median, worst first, at most kMaxOutliersReported; null
// with `outliers: off`.
json outliers_json(const TestOutcome& test) {
  if (test.spec.outliers == OutlierMode::Off) return nullptr;
  json list = json::array();
  const std::size_t listed = std::min(test.outliers.size(), kMaxOutliersReported);
  for (std::size_t i = 0; i < listed; ++i) {
    const StreamOutlier& outlier = test.outliers[i];
    // An index no stream has (code that moved streams without their outliers) loses that line,
    // never the whole report.
    if (outlier.stream >= test.streams.size()) continue;
    list.push_back({{"agent", test.streams[outlier.stream].agent},
                    {"stream", stream_ref(test.streams[outlier.stream])},
                    {"metric", outlier.metric},
                    {"value", outlier.value},
                    {"class", outlier.class_name},
                    {"class_size", outlier.class_size},
                    {"class_median", outlier.median},
                    {"spread", outlier.spread},
                    {"deviations", outlier.deviations},
                    {"text", outlier_text(outlier, test.streams, test.spec.outlier_k)}});
  }
  return {{"mode", test.spec.outliers == OutlierMode::Fail ? "fail" : "warn"},
          {"k", test.spec.outlier_k},
          {"count", test.outliers.size()},
          {"streams", std::move(list)}};
}

// Each agent of the test: lost or not, the samples it sent and made, how it ended, its events.
constexpr std::size_t kMaxListedSampleRanges = 100;

json agents_json(const TestOutcome& test) {
  json agents = json::array();
  for (const auto& name : test.agents) {
    const auto& agent = test.per_agent.at(name);
    json entry;
    entry["agent"] = name;
    entry["lost"] = agent.lost;
    entry["samples_received"] = agent.samples.size();
    // [first, last] of each run of samples that arrived: [[1, 600]] when none was missing.
    std::size_t more_ranges = 0;
    json ranges = json::array();
    for (const auto& [first, last] : agent.samples.ranges(kMaxListedSampleRanges, more_ranges)) {
      ranges.push_back({first, last});
    }
    entry["sample_ranges"] = std::move(ranges);
    if (more_ranges > 0) entry["sample_ranges_left_out"] = more_ranges;
    if (agent.result) {
      entry["samples_made"] = agent.result->samples();
      entry["completed"] = agent.result->completed();
      entry["stop_reason"] = agent.result->stop_reason();
    } else {
      entry["samples_made"] = nullptr;
      entry["completed"] = false;
      entry["stop_reason"] = "no result";
    }
    json events = json::array();
    for (const auto& event : agent.events) {
      events.push_back({{"time", utc_iso_time(event.agent_time_ns())},
                        {"kind", proto::AgentEvent::Kind_Name(event.kind())},
                        {"stream_id", event.stream_id()},
                        {"message", event.message()}});
    }
    entry["events"] = events;
    agents.push_back(std::move(entry));
  }
  return agents;
}

}  // namespace

json test_json_head(const TestOutcome& test, StreamBins bins) {
  json out;
  out["index"] = test.index;
  out["name"] = test.spec.name;
  out["engine"] = test.spec.engine;
  out["topology"] = std::string(to_string(test.spec.topology));
  out["duration_s"] = test.spec.duration.count() / 1e3;
  out["window_s"] = test.spec.window ? json(test.spec.window->count() / 1e3) : json(nullptr);
  out["sample_interval_s"] = test.spec.sample_interval.count() / 1e3;
  out["agents"] = test.agents;
  out["verdict"] = std::string(to_string(test.verdict));
  out["problems"] = test.problems;
  out["warnings"] = reader_warnings(test);
  out["planned_start"] = utc_iso_time(test.planned_start_ns);
  out["start_skew_ns"] = test.start_skew_ns ? json(*test.start_skew_ns) : json(nullptr);
  if (const EngineSlice* engine = find_engine(test.spec.engine); engine && engine->json_extra) {
    engine->json_extra(test, out);
  }
  if (test.method)
    out["method"] = method_json(*test.method, [bins](const TestOutcome& step) { return test_json(step, bins); });

  json thresholds = json::array();
  for (const auto& threshold : test.spec.thresholds) {
    thresholds.push_back({{"key", threshold.key},
                          {"metric", threshold.metric},
                          {"bound", threshold.bound == Bound::Max ? "max" : "min"},
                          {"value", threshold.value},
                          {"safe_default", threshold.implicit}});
  }
  out["thresholds"] = thresholds;

  json starts = json::array();
  for (const auto& start : test.starts) {
    starts.push_back({{"agent", start.agent},
                      {"clock_offset_ns", start.clock_offset_ns},
                      {"clock_rtt_ns", start.clock_rtt_ns},
                      {"start_error_ns", start.start_error_ns ? json(*start.start_error_ns) : json(nullptr)}});
  }
  out["starts"] = starts;

  out["samples_per_bin"] = test_bin_width(test);
  // A method's streams are its steps' (method.steps[].test.streams), but a schedule's, judged
  // together, are the test's, each with its step. Filled by test_json, or written one at a time.
  out["streams"] = json::array();
  out["coverage"] = test.coverage ? coverage_json(*test.coverage) : json(nullptr);
  out["switch_counters"] = test.switch_counters.empty() ? json(nullptr) : switch_counters_json(test.switch_counters);
  out["switch_intervals"] =
      test.switch_intervals.empty() ? json(nullptr) : switch_intervals_json(test.switch_intervals);
  out["optics"] = test.optics.empty() && test.optics_timeline.empty() ? json(nullptr)
                                                                      : optics_json(test.optics, test.optics_timeline);
  json rows = json::array();
  for (const auto& row : test.link_evidence) {
    const auto or_null = [](const std::string& text) { return text.empty() ? json(nullptr) : json(text); };
    rows.push_back({{"link", row.link},
                    {"failing", row.failing},
                    {"flows", or_null(row.flows)},
                    {"probes", or_null(row.probes)},
                    {"switch_counters", or_null(row.counters)},
                    {"optics", or_null(row.optics)},
                    {"next_step", or_null(row.next_step)}});
  }
  out["link_evidence"] = std::move(rows);

  out["path_faults"] = path_faults_json(test);
  out["outliers"] = outliers_json(test);
  if (const auto& flows = test.localisation.flows; flows && (!flows->empty() || flows->clean_flows() > 0)) {
    out["localisation"] = localisation_json(test);
  }

  out["agents"] = agents_json(test);
  return out;
}

json test_stream_json(const TestOutcome& test, const StreamVerdict& verdict, std::uint32_t bin_width, StreamBins bins) {
  if (test.lent_series && verdict.step == 0) {
    // Lent as it is now, a moment after the checkpoint judged it: bins that widened since are
    // written at their own width (their `index` column says where each ends).
    const std::optional<StreamSeries> lent = test.lent_series->lend(verdict.agent, verdict.stream.stream_id());
    return judged_stream_json(verdict, lent ? &*lent : nullptr, bin_width, bins);
  }
  return judged_stream_json(verdict, series_of(test, verdict), bin_width, bins);
}

json test_json(const TestOutcome& test, StreamBins bins) {
  json out = test_json_head(test, bins);
  json& streams = out["streams"];
  const std::uint32_t bin_width = test_bin_width(test);
  for (const auto& verdict : test.streams) streams.push_back(test_stream_json(test, verdict, bin_width, bins));
  return out;
}

json report_json_head(const RunOutcome& outcome) {
  json report;
  report["schema"] = kReportSchema;
  report["tusk_version"] = kTuskVersion;
  report["run_id"] = outcome.run_id;
  if (!outcome.retest_of.empty()) report["retest_of"] = outcome.retest_of;
  if (!outcome.resumed_from.empty()) {
    report["resumed_from"] = {{"run_id", outcome.resumed_from}, {"steps_restored", outcome.steps_restored}};
  }
  report["profile"] = {{"name", outcome.profile.name},
                       {"file", outcome.profile.file},
                       {"description", outcome.profile.description},
                       {"source", outcome.profile.source}};
  report["started"] = utc_iso_time(outcome.started_ns);
  report["finished"] = utc_iso_time(outcome.finished_ns);
  if (outcome.interrupted_ns != 0) report["interrupted"] = utc_iso_time(outcome.interrupted_ns);
  // "running": a checkpoint taken while the run went on (its last test judged on its samples so
  // far); "finished": the run's own report.
  report["status"] = outcome.checkpoint_ns != 0 ? "running" : "finished";
  if (outcome.checkpoint_ns != 0) report["checkpoint"] = utc_iso_time(outcome.checkpoint_ns);
  report["exit_code"] = outcome.exit_code;
  report["conclusion"] = outcome.conclusion;
  report["missing_agents"] = outcome.missing_agents;
  report["cabling"] = outcome.cabling ? cabling_json(*outcome.cabling) : json(nullptr);
  // Its name only: the file sits beside report.json (`tusk-controller series RUN_DIR`).
  report["series_file"] = outcome.series_file.empty()
                              ? json(nullptr)
                              : json(std::filesystem::path(outcome.series_file).filename().string());

  report["agents"] = agents_inventory_json(outcome.agents);

  report["tests"] = json::array();  // filled by report_json, or written one at a time

  json faults = json::array();
  for (const auto& fault : outcome.faults) {
    faults.push_back({{"time", utc_iso_time(fault.time_ns)},
                      {"agent", fault.agent},
                      {"test_index", fault.test_index},
                      {"message", fault.message}});
  }
  report["faults"] = faults;
  return report;
}

json report_json(const RunOutcome& outcome, StreamBins bins) {
  json report = report_json_head(outcome);
  json& tests = report["tests"];
  for (const auto& test : outcome.tests) tests.push_back(test_json(test, bins));
  return report;
}

}  // namespace tusk
