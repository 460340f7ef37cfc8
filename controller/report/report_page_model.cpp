#include "controller/report/report_page_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <iomanip>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "common/counter_names.hpp"
#include "common/json_text.hpp"
#include "controller/history/baseline_check.hpp"

namespace tusk {
using json = nlohmann::ordered_json;

namespace {

// A value the page shows as a number: rounded where the digits carry nothing (a 65,280-pair
// fabric's page stays a few megabytes), null where the report has none.
json number_or_null(const json& value, bool whole = false) {
  if (!value.is_number()) return nullptr;
  const double number = value.get<double>();
  if (!std::isfinite(number)) return nullptr;
  if (whole) return static_cast<std::int64_t>(std::llround(number));
  return number;
}

// A stream's metric as the verdict measured it, else its counter.
json measured(const json& stream, std::string_view name, bool whole = false) {
  const std::string key(name);
  const json& metrics = member_or_null(stream, "metrics");
  if (metrics.is_object() && metrics.contains(key)) return number_or_null(metrics[key], whole);
  const json& counters = member_or_null(stream, "counters");
  if (counters.is_object() && counters.contains(key)) return number_or_null(counters[key], whole);
  const json& gauges = member_or_null(stream, "gauges");
  if (gauges.is_object() && gauges.contains(key)) return number_or_null(gauges[key], whole);
  return nullptr;
}

double counter_delta(const json& point, std::string_view name) {
  const json& value = member_or_null(member_or_null(point, "counters"), std::string(name).c_str());
  return value.is_number() ? value.get<double>() : 0.0;
}

// ISO-8601 UTC with milliseconds, as report.json writes times, to seconds since the epoch.
std::optional<double> epoch_seconds(const std::string& iso) {
  std::tm utc{};
  int milliseconds = 0;
  std::istringstream in(iso);
  in >> std::get_time(&utc, "%Y-%m-%dT%H:%M:%S");
  if (in.fail()) return std::nullopt;
  if (in.peek() == '.') {
    in.get();
    in >> milliseconds;
  }
  return static_cast<double>(timegm(&utc)) + milliseconds / 1e3;
}

// A chart has a few hundred pixels across: a stream's series longer than this is drawn in bins, so
// an eight-hour burn-in's page stays the size of a ten-minute one.
constexpr std::size_t kMaxPointsPerStream = 240;

// One sample of a stream's series, as the charts read it.
struct SeriesPoint {
  double t = 0;  // seconds into the test, at the interval's end
  std::optional<double> throughput_bps;
  double lost = 0, damaged = 0, retransmits = 0;
  std::optional<double> step_time_ns;
};

// Consecutive samples merged `per_bin` at a time: counts summed, throughput averaged over the
// samples that had one, the slowest step kept (a straggler must not be averaged away).
std::vector<SeriesPoint> binned(const std::vector<SeriesPoint>& points, std::size_t per_bin) {
  std::vector<SeriesPoint> bins;
  for (std::size_t start = 0; start < points.size(); start += per_bin) {
    SeriesPoint bin;
    double throughput_sum = 0;
    int throughputs = 0;
    for (std::size_t i = start; i < std::min(points.size(), start + per_bin); ++i) {
      const SeriesPoint& p = points[i];
      bin.t = p.t;
      if (p.throughput_bps) {
        throughput_sum += *p.throughput_bps;
        ++throughputs;
      }
      bin.lost += p.lost;
      bin.damaged += p.damaged;
      bin.retransmits += p.retransmits;
      if (p.step_time_ns) bin.step_time_ns = std::max(bin.step_time_ns.value_or(0.0), *p.step_time_ns);
    }
    if (throughputs > 0) bin.throughput_bps = throughput_sum / throughputs;
    bins.push_back(bin);
  }
  return bins;
}

json optional_whole_number(const std::optional<double>& value) {
  return value ? json(static_cast<std::int64_t>(std::llround(*value))) : json(nullptr);
}

// A report of schema /1: every sample of the stream, a point each, with every counter's delta.
std::vector<SeriesPoint> points_of_samples(const json& samples) {
  std::vector<SeriesPoint> points;
  for (const json& point : samples) {
    SeriesPoint p;
    p.t =
        member_or_null(point, "elapsed_ms").is_number() ? member_or_null(point, "elapsed_ms").get<double>() / 1e3 : 0.0;
    if (member_or_null(point, "throughput_bps").is_number())
      p.throughput_bps = member_or_null(point, "throughput_bps").get<double>();
    p.lost = counter_delta(point, counters::kLostFrames) + counter_delta(point, counters::kGapLostFrames);
    p.damaged = counter_delta(point, counters::kErroredFrames) + counter_delta(point, counters::kIntegrityErrors) +
                counter_delta(point, counters::kCompletionErrors);
    p.retransmits = counter_delta(point, counters::kRetransmits);
    if (member_or_null(point, "step_time_ns").is_number())
      p.step_time_ns = member_or_null(point, "step_time_ns").get<double>();
    points.push_back(p);
  }
  return points;
}

// A report of schema /2: the stream's bins as columns (report_json.cpp), a point each.
std::vector<SeriesPoint> points_of_bins(const json& bins) {
  const json& elapsed = member_or_null(bins, "elapsed_ms");
  const auto at = [&](const char* column, std::size_t i) -> const json& {
    const json& values = member_or_null(bins, column);
    static const json none;
    return values.is_array() && i < values.size() ? values[i] : none;
  };
  const auto number = [&](const char* column, std::size_t i) {
    const json& value = at(column, i);
    return value.is_number() ? value.get<double>() : 0.0;
  };
  std::vector<SeriesPoint> points;
  if (!elapsed.is_array()) return points;
  for (std::size_t i = 0; i < elapsed.size(); ++i) {
    SeriesPoint p;
    p.t = number("elapsed_ms", i) / 1e3;
    if (at("throughput_bps", i).is_number()) p.throughput_bps = at("throughput_bps", i).get<double>();
    p.lost = number("lost", i);
    p.damaged = number("damaged", i);
    p.retransmits = number("retransmits", i);
    if (at("step_time_ns", i).is_number()) p.step_time_ns = at("step_time_ns", i).get<double>();
    points.push_back(p);
  }
  return points;
}

// Per stream, the series the charts draw: seconds into the test, throughput, frames lost, frames
// damaged (errored, integrity, completion errors), retransmits and, for a training replay, the
// time per step; in bins of `per_bin` samples (samples_per_bin) on a long run.
json stream_series(const json& stream, std::size_t& per_bin) {
  const json& bins = member_or_null(stream, "bins");
  std::vector<SeriesPoint> points =
      bins.is_object() ? points_of_bins(bins) : points_of_samples(member_or_null(stream, "series"));
  per_bin = (points.size() + kMaxPointsPerStream - 1) / kMaxPointsPerStream;
  if (per_bin > 1) points = binned(points, per_bin);
  json t = json::array(), throughput = json::array(), lost = json::array(), damaged = json::array(),
       retransmits = json::array(), step_time = json::array();
  bool any_lost = false, any_damaged = false, any_retransmits = false, any_step_time = false;
  for (const SeriesPoint& p : points) {
    t.push_back(p.t);
    throughput.push_back(optional_whole_number(p.throughput_bps));
    lost.push_back(p.lost);
    damaged.push_back(p.damaged);
    retransmits.push_back(p.retransmits);
    step_time.push_back(optional_whole_number(p.step_time_ns));
    any_lost = any_lost || p.lost != 0;
    any_damaged = any_damaged || p.damaged != 0;
    any_retransmits = any_retransmits || p.retransmits != 0;
    any_step_time = any_step_time || p.step_time_ns.has_value();
  }
  // A column that is zero throughout is left out: on a clean fabric that is nearly all of them.
  json series{{"t", t}, {"throughput_bps", throughput}};
  if (any_lost) series["lost"] = lost;
  if (any_damaged) series["damaged"] = damaged;
  if (any_retransmits) series["retransmits"] = retransmits;
  if (any_step_time) series["step_time_ns"] = step_time;
  return series;
}

// Stream `index` of `test`'s series for the page, in bins of `per_bin` of its samples.
// `whole_stream(i)`: stream i's whole JSON, its series' source; none: the stream's own.
json series_of_stream(const json& test, const json& stream, std::size_t index,
                      const std::function<json(std::size_t)>& whole_stream, std::size_t& per_bin) {
  json series = whole_stream ? stream_series(whole_stream(index), per_bin) : stream_series(stream, per_bin);
  // A report's own bins hold samples_per_bin samples each; the page's bins hold per_bin of those.
  if (const json& width = member_or_null(test, "samples_per_bin"); width.is_number_unsigned()) {
    per_bin *= std::max<std::size_t>(1, width.get<std::size_t>());
  }
  return series;
}

// The streams of one test as columns (one array per field, one entry per stream): a fabric of 256
// hosts has 130,000 streams, and columns keep the page small and its parse fast. The "series"
// column is left empty: TestModel::series makes its entries (test_model).
json stream_columns(const json& test, std::vector<std::string>& hosts) {
  std::map<std::string, int> host_index;
  const auto index_of = [&](const std::string& name) -> json {
    if (name.empty()) return -1;
    auto [it, added] = host_index.emplace(name, static_cast<int>(hosts.size()));
    if (added) hosts.push_back(name);
    return it->second;
  };
  // Every agent of the test has a row and a column, even one that sent and received nothing.
  for (const json& agent : member_or_null(test, "agents")) {
    if (const std::string name = agent.is_string() ? agent.get<std::string>() : string_member(agent, "agent");
        !name.empty()) {
      index_of(name);
    }
  }
  json columns;
  for (const char* name : {"agent",
                           "id",
                           "kind",
                           "sender",
                           "receiver",
                           "passed",
                           "flow",
                           "failed_checks",
                           "throughput_bps",
                           "rx_frames",
                           "lost_frames",
                           "loss_ratio",
                           "bit_errors",
                           "errored_frames",
                           "ber_upper",
                           "retransmits",
                           "completion_errors",
                           "integrity_errors",
                           "latency_p99_ns",
                           "traffic_gaps",
                           "host_drops",
                           "series"}) {
    columns[name] = json::array();
  }
  for (const json& stream : member_or_null(test, "streams")) {
    columns["agent"].push_back(index_of(string_member(stream, "agent")));
    columns["id"].push_back(string_member(stream, "stream_id"));
    columns["kind"].push_back(string_member(stream, "kind"));
    columns["sender"].push_back(index_of(string_member(stream, "sender")));
    columns["receiver"].push_back(index_of(string_member(stream, "receiver")));
    columns["passed"].push_back(
        member_or_null(stream, "passed").is_boolean() && member_or_null(stream, "passed").get<bool>() ? 1 : 0);
    columns["flow"].push_back(string_member(member_or_null(stream, "flow"), "text"));
    json failed = json::array();
    for (const json& check : member_or_null(stream, "checks")) {
      if (member_or_null(check, "passed").is_boolean() && !member_or_null(check, "passed").get<bool>()) {
        failed.push_back(string_member(check, "text"));
      }
    }
    columns["failed_checks"].push_back(failed);
    columns["throughput_bps"].push_back(measured(stream, "throughput_bps", true));
    columns["rx_frames"].push_back(measured(stream, counters::kRxFrames, true));
    columns["lost_frames"].push_back(measured(stream, counters::kLostFrames, true));
    columns["loss_ratio"].push_back(measured(stream, "loss_ratio"));
    columns["bit_errors"].push_back(measured(stream, counters::kBitErrors, true));
    columns["errored_frames"].push_back(measured(stream, counters::kErroredFrames, true));
    columns["ber_upper"].push_back(number_or_null(member_or_null(member_or_null(stream, "ber"), "upper_bound")));
    columns["retransmits"].push_back(measured(stream, counters::kRetransmits, true));
    columns["completion_errors"].push_back(measured(stream, counters::kCompletionErrors, true));
    columns["integrity_errors"].push_back(measured(stream, counters::kIntegrityErrors, true));
    columns["latency_p99_ns"].push_back(measured(stream, counters::kLatencyP99Ns, true));
    columns["traffic_gaps"].push_back(measured(stream, counters::kTrafficGaps, true));
    columns["host_drops"].push_back(measured(stream, counters::kHostDrops, true));
  }
  return columns;
}

// The BER table: every stream whose bits were compared, with its bound and time to target.
json ber_rows(const json& test) {
  json rows = json::array();
  int index = 0;
  for (const json& stream : member_or_null(test, "streams")) {
    const json& ber = member_or_null(stream, "ber");
    if (ber.is_object()) {
      // A stream with errors is shown what they prove, never "more time": an older report may
      // still carry a time computed as if no more errors would come.
      const json errors = number_or_null(member_or_null(ber, "bit_errors"));
      const bool errored = errors.is_number() && errors.get<double>() > 0;
      json errors_show = nullptr;
      if (errored) {
        const json lower = number_or_null(member_or_null(ber, "lower_bound"));
        const json target = number_or_null(member_or_null(ber, "target"));
        const json confidence = number_or_null(member_or_null(ber, "confidence"));
        if (lower.is_number()) {
          const bool above = target.is_number() && lower.get<double>() > target.get<double>();
          errors_show =
              fmt::format("errors show BER ≥ {:.2e}{}{}", lower.get<double>(),
                          confidence.is_number() ? fmt::format(" ({:.1f} %)", 100 * confidence.get<double>()) : "",
                          above ? ": above the target" : "");
        } else {
          errors_show = "errors: the target is not shown";
        }
      }
      rows.push_back({{"stream", index},
                      {"bits_compared", number_or_null(member_or_null(ber, "bits_compared"))},
                      {"bit_errors", number_or_null(member_or_null(ber, "bit_errors"))},
                      {"measured", number_or_null(member_or_null(ber, "measured"))},
                      {"upper_bound", number_or_null(member_or_null(ber, "upper_bound"))},
                      {"confidence", number_or_null(member_or_null(ber, "confidence"))},
                      {"target", number_or_null(member_or_null(ber, "target"))},
                      {"seconds_more_for_target",
                       errored ? json(nullptr) : number_or_null(member_or_null(ber, "seconds_more_for_target"))},
                      {"errors_show", errors_show}});
    }
    ++index;
  }
  return rows;
}

// What happened on the time axis: agents' events, faults of this test and every interval in which
// a stream saw a traffic gap or a link flap, as seconds since the planned start.
json test_events(const json& report, const json& test) {
  json events = json::array();
  const auto start = epoch_seconds(string_member(test, "planned_start"));
  const auto since_start = [&](const std::string& iso) -> json {
    const auto at = epoch_seconds(iso);
    if (!at || !start) return nullptr;
    return *at - *start;
  };
  for (const json& agent : member_or_null(test, "agents")) {
    for (const json& event : member_or_null(agent, "events")) {
      events.push_back({{"t", since_start(string_member(event, "time"))},
                        {"agent", string_member(agent, "agent")},
                        {"kind", string_member(event, "kind")},
                        {"text", fmt::format("{} {}: {}", string_member(agent, "agent"), string_member(event, "kind"),
                                             string_member(event, "message"))}});
    }
  }
  const json& index = member_or_null(test, "index");
  for (const json& fault : member_or_null(report, "faults")) {
    if (member_or_null(fault, "test_index") != index) continue;
    events.push_back({{"t", since_start(string_member(fault, "time"))},
                      {"agent", string_member(fault, "agent")},
                      {"kind", "FAULT"},
                      {"text", fmt::format("{}: {}", string_member(fault, "agent"), string_member(fault, "message"))}});
  }
  for (const json& stream : member_or_null(test, "streams")) {
    for (const json& point : member_or_null(stream, "series")) {
      const double gaps = counter_delta(point, counters::kTrafficGaps);
      const double flaps = counter_delta(point, counters::kLinkFlaps);
      if (gaps <= 0 && flaps <= 0) continue;
      events.push_back(
          {{"t", member_or_null(point, "elapsed_ms").is_number()
                     ? member_or_null(point, "elapsed_ms").get<double>() / 1e3
                     : 0.0},
           {"agent", string_member(stream, "agent")},
           {"kind", flaps > 0 ? "LINK_FLAP" : "TRAFFIC_GAP"},
           {"text", fmt::format("{} {}: {}", string_member(stream, "agent"), string_member(stream, "stream_id"),
                                flaps > 0 ? "link flap" : "traffic gap")}});
    }
  }
  return events;
}

json copy_of(const json& object, std::initializer_list<const char*> names) {
  json out = json::object();
  for (const char* name : names) out[name] = member_or_null(object, name);
  return out;
}

TestModel test_model(const json& report, const json& test, const std::function<json(std::size_t)>& whole_stream) {
  TestModel parts;
  json& out = parts.model;
  out =
      copy_of(test, {"index",      "name",         "engine",     "topology",      "duration_s",    "sample_interval_s",
                     "verdict",    "problems",     "warnings",   "planned_start", "start_skew_ns", "starts",
                     "thresholds", "offered",      "collective", "localisation",  "coverage",      "switch_counters",
                     "optics",     "link_evidence"});
  // A method's table and curve: its rows, without each step's whole outcome (report.json has those).
  if (const json& method = member_or_null(test, "method"); method.is_object()) {
    json rows = json::array();
    for (const json& step : member_or_null(method, "steps")) {
      json row = step;
      row.erase("test");
      rows.push_back(std::move(row));
    }
    out["method"] = copy_of(method, {"kind", "complete", "pdr_loss", "throughput", "congestion", "ecmp_balance",
                                     "link_failure", "burst_absorption"});
    out["method"]["steps"] = std::move(rows);
  }
  json path_faults = json::array();
  for (const json& sign : member_or_null(test, "path_faults")) path_faults.push_back(string_member(sign, "text"));
  out["path_faults"] = path_faults;
  std::vector<std::string> hosts;
  json columns = stream_columns(test, hosts);
  // The series are made twice, one at a time: first for the test's time axis (a stream sampled on
  // it leaves out its own) and its widest bins, then as the writer takes them. A night's page
  // never holds every stream's series at once.
  std::size_t samples_per_bin = 1;
  json axis = json::array();
  const json& streams = member_or_null(test, "streams");
  for (std::size_t i = 0; i < streams.size(); ++i) {
    std::size_t per_bin = 1;
    json series = series_of_stream(test, streams[i], i, whole_stream, per_bin);
    samples_per_bin = std::max(samples_per_bin, per_bin);
    if (series["t"].size() > axis.size()) axis = std::move(series["t"]);
  }
  columns["t"] = axis;
  out["streams"] = std::move(columns);
  parts.streams = streams.size();
  parts.series = [&test, whole_stream, axis = std::move(axis)](std::size_t i) {
    std::size_t per_bin = 1;
    json series = series_of_stream(test, member_or_null(test, "streams")[i], i, whole_stream, per_bin);
    if (series["t"] == axis) series.erase("t");
    return series;
  };
  out["samples_per_bin"] = samples_per_bin;
  out["hosts"] = hosts;
  out["ber"] = ber_rows(test);
  out["events"] = test_events(report, test);
  json agents = json::array();
  for (const json& agent : member_or_null(test, "agents")) {
    agents.push_back(copy_of(agent, {"agent", "lost", "samples_received", "samples_made", "completed", "stop_reason"}));
  }
  out["agent_results"] = agents;
  return parts;
}

// What the run's badge says: a run that never got to a test, or was interrupted, is not a failed
// cable. "pass" and "fail" only for a run that ran its tests to a verdict.
std::string run_status(const json& report) {
  const json& code = member_or_null(report, "exit_code");
  const int exit_code = code.is_number_integer() ? code.get<int>() : -1;
  if (!member_or_null(report, "interrupted").is_null() || exit_code >= 128) return "interrupted";
  const json& tests = member_or_null(report, "tests");
  if (!tests.is_array() || tests.empty()) return "not run";
  if (exit_code == 0) return "pass";
  if (exit_code == 1) return "fail";
  return "incomplete";  // agents lost (3), a report written elsewhere (4), a plan refused (2)
}

}  // namespace

json report_page_model(const json& report) {
  return report_page_model(report, WholeStream{});
}

json report_page_model(const json& report, const WholeStream& whole_stream) {
  json model = report_page_model_head(report);
  json& tests = model["tests"];
  for_each_test_model(report, whole_stream, [&tests](TestModel test) {
    json& series = test.model["streams"]["series"];
    for (std::size_t i = 0; i < test.streams; ++i) series.push_back(test.series(i));
    tests.push_back(std::move(test.model));
  });
  return model;
}

void for_each_test_model(const json& report, const WholeStream& whole_stream,
                         const std::function<void(TestModel)>& take) {
  std::size_t index = 0;
  for (const json& test : member_or_null(report, "tests")) {
    std::function<json(std::size_t)> stream_of;
    if (whole_stream) stream_of = [&whole_stream, index](std::size_t stream) { return whole_stream(index, stream); };
    take(test_model(report, test, stream_of));
    ++index;
  }
}

json report_page_model_head(const json& report) {
  if (!report.is_object() || string_member(report, "schema").rfind("tusk.report/", 0) != 0) {
    throw std::runtime_error("not a Tusk report.json (no \"schema\": \"tusk.report/...\")");
  }
  json model;
  model["schema"] = "tusk.report-page/1";
  model["run"] = copy_of(report, {"run_id", "tusk_version", "profile", "started", "finished", "interrupted",
                                  "exit_code", "conclusion", "missing_agents", "cabling"});
  model["run"]["status"] = run_status(report);
  if (const json& baseline = member_or_null(report, "baseline"); baseline.is_object()) {
    json regressions = json::array();
    for (const auto& regression : member_or_null(baseline, "regressions")) {
      regressions.push_back(string_member(regression, "subject") + ": " + string_member(regression, "text"));
    }
    model["run"]["baseline"] = {{"headline", baseline_headline(baseline)},
                                {"compared", !string_member(baseline, "run_id").empty()},
                                {"regressions", std::move(regressions)}};
  }
  json agents = json::array();
  for (const json& agent : member_or_null(report, "agents")) {
    agents.push_back(copy_of(agent, {"name", "hostname", "version", "remote", "connected_at_end", "connections",
                                     "duplicate_records_dropped", "records_missing", "engines", "notes"}));
  }
  model["agents"] = agents;
  model["faults"] = member_or_null(report, "faults").is_array() ? member_or_null(report, "faults") : json::array();
  model["tests"] = json::array();  // last: a writer writes it a test at a time
  return model;
}

}  // namespace tusk
