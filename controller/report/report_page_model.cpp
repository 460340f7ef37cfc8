#include "controller/report/report_page_model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cmath>
#include <map>
#include <set>
#include <iomanip>
#include <sstream>
#include <stdexcept>

#include "common/counter_names.hpp"

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

const json& member(const json& object, const char* name) {
  static const json none;
  if (!object.is_object()) return none;
  const auto it = object.find(name);
  return it == object.end() ? none : *it;
}

std::string text_of(const json& object, const char* name) {
  const json& value = member(object, name);
  return value.is_string() ? value.get<std::string>() : std::string();
}

// A stream's metric as the verdict measured it, else its counter.
json measured(const json& stream, std::string_view name, bool whole = false) {
  const std::string key(name);
  const json& metrics = member(stream, "metrics");
  if (metrics.is_object() && metrics.contains(key)) return number_or_null(metrics[key], whole);
  const json& counters = member(stream, "counters");
  if (counters.is_object() && counters.contains(key)) return number_or_null(counters[key], whole);
  const json& gauges = member(stream, "gauges");
  if (gauges.is_object() && gauges.contains(key)) return number_or_null(gauges[key], whole);
  return nullptr;
}

double counter_delta(const json& point, std::string_view name) {
  const json& value = member(member(point, "counters"), std::string(name).c_str());
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

// Per stream, the per-interval series the charts draw: seconds into the test, throughput, frames
// lost, frames damaged (errored, integrity, completion errors), retransmits and, for a training
// replay, the time per step.
json stream_series(const json& stream) {
  json t = json::array(), throughput = json::array(), lost = json::array(), damaged = json::array(),
       retransmits = json::array(), step_time = json::array();
  bool any_step_time = false;
  for (const json& point : member(stream, "series")) {
    t.push_back(member(point, "elapsed_ms").is_number() ? member(point, "elapsed_ms").get<double>() / 1e3 : 0.0);
    throughput.push_back(number_or_null(member(point, "throughput_bps"), true));
    lost.push_back(counter_delta(point, counters::kLostFrames) + counter_delta(point, counters::kGapLostFrames));
    damaged.push_back(counter_delta(point, counters::kErroredFrames) +
                      counter_delta(point, counters::kIntegrityErrors) +
                      counter_delta(point, counters::kCompletionErrors));
    retransmits.push_back(counter_delta(point, counters::kRetransmits));
    step_time.push_back(number_or_null(member(point, "step_time_ns"), true));
    any_step_time = any_step_time || member(point, "step_time_ns").is_number();
  }
  // A column that is zero throughout is left out: on a clean fabric that is nearly all of them.
  const auto any_nonzero = [](const json& column) {
    return std::any_of(column.begin(), column.end(), [](const json& v) { return v.is_number() && v.get<double>() != 0; });
  };
  json series{{"t", t}, {"throughput_bps", throughput}};
  if (any_nonzero(lost)) series["lost"] = lost;
  if (any_nonzero(damaged)) series["damaged"] = damaged;
  if (any_nonzero(retransmits)) series["retransmits"] = retransmits;
  if (any_step_time) series["step_time_ns"] = step_time;
  return series;
}

// The streams of one test as columns (one array per field, one entry per stream): a fabric of 256
// hosts has 130,000 streams, and columns keep the page small and its parse fast.
json stream_columns(const json& test, std::vector<std::string>& hosts) {
  std::map<std::string, int> host_index;
  const auto index_of = [&](const std::string& name) -> json {
    if (name.empty()) return -1;
    auto [it, added] = host_index.emplace(name, static_cast<int>(hosts.size()));
    if (added) hosts.push_back(name);
    return it->second;
  };
  // Every agent of the test has a row and a column, even one that sent and received nothing.
  for (const json& agent : member(test, "agents")) {
    if (const std::string name = agent.is_string() ? agent.get<std::string>() : text_of(agent, "agent"); !name.empty()) {
      index_of(name);
    }
  }
  json columns;
  for (const char* name : {"agent", "id", "kind", "sender", "receiver", "passed", "flow", "failed_checks",
                           "throughput_bps", "rx_frames", "lost_frames", "loss_ratio", "bit_errors",
                           "errored_frames", "ber_upper", "retransmits", "completion_errors", "integrity_errors",
                           "latency_p99_ns", "traffic_gaps", "host_drops", "series"}) {
    columns[name] = json::array();
  }
  for (const json& stream : member(test, "streams")) {
    columns["agent"].push_back(index_of(text_of(stream, "agent")));
    columns["id"].push_back(text_of(stream, "stream_id"));
    columns["kind"].push_back(text_of(stream, "kind"));
    columns["sender"].push_back(index_of(text_of(stream, "sender")));
    columns["receiver"].push_back(index_of(text_of(stream, "receiver")));
    columns["passed"].push_back(member(stream, "passed").is_boolean() && member(stream, "passed").get<bool>() ? 1 : 0);
    columns["flow"].push_back(text_of(member(stream, "flow"), "text"));
    json failed = json::array();
    for (const json& check : member(stream, "checks")) {
      if (member(check, "passed").is_boolean() && !member(check, "passed").get<bool>()) {
        failed.push_back(text_of(check, "text"));
      }
    }
    columns["failed_checks"].push_back(failed);
    columns["throughput_bps"].push_back(measured(stream, "throughput_bps", true));
    columns["rx_frames"].push_back(measured(stream, counters::kRxFrames, true));
    columns["lost_frames"].push_back(measured(stream, counters::kLostFrames, true));
    columns["loss_ratio"].push_back(measured(stream, "loss_ratio"));
    columns["bit_errors"].push_back(measured(stream, counters::kBitErrors, true));
    columns["errored_frames"].push_back(measured(stream, counters::kErroredFrames, true));
    columns["ber_upper"].push_back(number_or_null(member(member(stream, "ber"), "upper_bound")));
    columns["retransmits"].push_back(measured(stream, counters::kRetransmits, true));
    columns["completion_errors"].push_back(measured(stream, counters::kCompletionErrors, true));
    columns["integrity_errors"].push_back(measured(stream, counters::kIntegrityErrors, true));
    columns["latency_p99_ns"].push_back(measured(stream, counters::kLatencyP99Ns, true));
    columns["traffic_gaps"].push_back(measured(stream, counters::kTrafficGaps, true));
    columns["host_drops"].push_back(measured(stream, counters::kHostDrops, true));
    columns["series"].push_back(stream_series(stream));
  }
  // One time axis for the test; a stream sampled on it leaves out its own.
  json axis = json::array();
  for (const json& series : columns["series"]) {
    if (series["t"].size() > axis.size()) axis = series["t"];
  }
  for (json& series : columns["series"]) {
    if (series["t"] == axis) series.erase("t");
  }
  columns["t"] = axis;
  return columns;
}

// The BER table: every stream whose bits were compared, with its bound and time to target.
json ber_rows(const json& test) {
  json rows = json::array();
  int index = 0;
  for (const json& stream : member(test, "streams")) {
    const json& ber = member(stream, "ber");
    if (ber.is_object()) {
      rows.push_back({{"stream", index},
                      {"bits_compared", number_or_null(member(ber, "bits_compared"))},
                      {"bit_errors", number_or_null(member(ber, "bit_errors"))},
                      {"measured", number_or_null(member(ber, "measured"))},
                      {"upper_bound", number_or_null(member(ber, "upper_bound"))},
                      {"confidence", number_or_null(member(ber, "confidence"))},
                      {"target", number_or_null(member(ber, "target"))},
                      {"seconds_more_for_target", number_or_null(member(ber, "seconds_more_for_target"))}});
    }
    ++index;
  }
  return rows;
}

// What happened on the time axis: agents' events, faults of this test and every interval in which
// a stream saw a traffic gap or a link flap, as seconds since the planned start.
json test_events(const json& report, const json& test) {
  json events = json::array();
  const auto start = epoch_seconds(text_of(test, "planned_start"));
  const auto since_start = [&](const std::string& iso) -> json {
    const auto at = epoch_seconds(iso);
    if (!at || !start) return nullptr;
    return *at - *start;
  };
  for (const json& agent : member(test, "agents")) {
    for (const json& event : member(agent, "events")) {
      events.push_back({{"t", since_start(text_of(event, "time"))},
                        {"agent", text_of(agent, "agent")},
                        {"kind", text_of(event, "kind")},
                        {"text", fmt::format("{} {}: {}", text_of(agent, "agent"), text_of(event, "kind"),
                                             text_of(event, "message"))}});
    }
  }
  const json& index = member(test, "index");
  for (const json& fault : member(report, "faults")) {
    if (member(fault, "test_index") != index) continue;
    events.push_back({{"t", since_start(text_of(fault, "time"))},
                      {"agent", text_of(fault, "agent")},
                      {"kind", "FAULT"},
                      {"text", fmt::format("{}: {}", text_of(fault, "agent"), text_of(fault, "message"))}});
  }
  for (const json& stream : member(test, "streams")) {
    for (const json& point : member(stream, "series")) {
      const double gaps = counter_delta(point, counters::kTrafficGaps);
      const double flaps = counter_delta(point, counters::kLinkFlaps);
      if (gaps <= 0 && flaps <= 0) continue;
      events.push_back({{"t", member(point, "elapsed_ms").is_number() ? member(point, "elapsed_ms").get<double>() / 1e3 : 0.0},
                        {"agent", text_of(stream, "agent")},
                        {"kind", flaps > 0 ? "LINK_FLAP" : "TRAFFIC_GAP"},
                        {"text", fmt::format("{} {}: {}", text_of(stream, "agent"), text_of(stream, "stream_id"),
                                             flaps > 0 ? "link flap" : "traffic gap")}});
    }
  }
  return events;
}

json copy_of(const json& object, std::initializer_list<const char*> names) {
  json out = json::object();
  for (const char* name : names) out[name] = member(object, name);
  return out;
}

json test_model(const json& report, const json& test) {
  json out = copy_of(test, {"index", "name", "engine", "topology", "duration_s", "sample_interval_s", "verdict",
                            "problems", "warnings", "planned_start", "start_skew_ns", "starts", "thresholds",
                            "offered", "collective", "localisation"});
  json path_faults = json::array();
  for (const json& sign : member(test, "path_faults")) path_faults.push_back(text_of(sign, "text"));
  out["path_faults"] = path_faults;
  std::vector<std::string> hosts;
  out["streams"] = stream_columns(test, hosts);
  out["hosts"] = hosts;
  out["ber"] = ber_rows(test);
  out["events"] = test_events(report, test);
  json agents = json::array();
  for (const json& agent : member(test, "agents")) {
    agents.push_back(copy_of(agent, {"agent", "lost", "samples_received", "samples_made", "completed", "stop_reason"}));
  }
  out["agent_results"] = agents;
  return out;
}

}  // namespace

json report_page_model(const json& report) {
  if (!report.is_object() || text_of(report, "schema").rfind("tusk.report/", 0) != 0) {
    throw std::runtime_error("not a Tusk report.json (no \"schema\": \"tusk.report/...\")");
  }
  json model;
  model["schema"] = "tusk.report-page/1";
  model["run"] = copy_of(report, {"run_id", "tusk_version", "profile", "started", "finished", "exit_code", "conclusion",
                                  "missing_agents"});
  json agents = json::array();
  for (const json& agent : member(report, "agents")) {
    agents.push_back(copy_of(agent, {"name", "hostname", "version", "remote", "connected_at_end", "connections",
                                     "duplicate_records_dropped", "records_missing", "engines", "notes"}));
  }
  model["agents"] = agents;
  model["faults"] = member(report, "faults").is_array() ? member(report, "faults") : json::array();
  json tests = json::array();
  for (const json& test : member(report, "tests")) tests.push_back(test_model(report, test));
  model["tests"] = tests;
  return model;
}

}  // namespace tusk
