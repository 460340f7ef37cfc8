#include "controller/history/history_rows.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>

#include "common/json_text.hpp"
#include "common/ordered_json.hpp"
#include "common/units.hpp"

namespace tusk {
using json = nlohmann::ordered_json;
namespace fs = std::filesystem;

namespace {

// A value of the report and the path that leads to it, so every complaint names the field.
struct Field {
  const json& value;
  std::string path;
};

[[noreturn]] void unreadable(const std::string& path, std::string_view message) {
  throw ReportUnreadable(fmt::format("{}: {}", path.empty() ? "report" : path, message));
}

std::string member_path(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : fmt::format("{}.{}", path, key);
}

void expect(const Field& field, bool ok, std::string_view wanted) {
  if (!ok) unreadable(field.path, fmt::format("expected {}, found {}", wanted, field.value.type_name()));
}

// A member of an object; nullopt when it is absent or null (the report writes "none" as null).
std::optional<Field> optional_member(const Field& object, std::string_view key) {
  expect(object, object.value.is_object(), "an object");
  const auto it = object.value.find(key);
  if (it == object.value.end() || it->is_null()) return std::nullopt;
  return Field{*it, member_path(object.path, key)};
}

Field required_member(const Field& object, std::string_view key) {
  auto field = optional_member(object, key);
  if (!field) unreadable(member_path(object.path, key), "missing");
  return *field;
}

std::string string_of(const Field& field) {
  expect(field, field.value.is_string(), "a string");
  return field.value.get<std::string>();
}

std::string required_string(const Field& object, std::string_view key) {
  return string_of(required_member(object, key));
}

// A name that identifies a row: an empty one would match nothing across runs.
std::string required_name(const Field& object, std::string_view key) {
  std::string name = required_string(object, key);
  if (name.empty()) unreadable(member_path(object.path, key), "empty");
  return name;
}

std::string optional_string(const Field& object, std::string_view key) {
  const auto field = optional_member(object, key);
  return field ? string_of(*field) : std::string();
}

std::optional<double> optional_number(const Field& object, std::string_view key) {
  const auto field = optional_member(object, key);
  if (!field) return std::nullopt;
  expect(*field, field->value.is_number(), "a number");
  return field->value.get<double>();
}

// The first of the (object, key) places that has the number: the verdict's metrics before the raw
// counters, so history shows what the report judged.
std::optional<double> first_number(
    std::initializer_list<std::pair<const std::optional<Field>*, std::string_view>> places) {
  for (const auto& [object, key] : places) {
    if (!object->has_value()) continue;
    if (auto value = optional_number(**object, key)) return value;
  }
  return std::nullopt;
}

Field element(const Field& array, std::size_t index) {
  return Field{array.value[index], fmt::format("{}[{}]", array.path, index)};
}

std::vector<Field> elements(const Field& array) {
  expect(array, array.value.is_array(), "an array");
  std::vector<Field> out;
  for (std::size_t i = 0; i < array.value.size(); ++i) out.push_back(element(array, i));
  return out;
}

std::vector<Field> optional_elements(const Field& object, std::string_view key) {
  const auto field = optional_member(object, key);
  return field ? elements(*field) : std::vector<Field>{};
}

// The hosts a stream's traffic went between. The report says so where it names sender and receiver;
// older reports do not, and then the kind in the stream id tells: a receiver's stream ("rx", an RDMA
// "sink", or the side that reads) carried its peer's traffic to it. A port's or NIC's counters are
// no one link's.
std::string link_of(const Field& stream, const std::string& agent, const std::string& stream_id,
                    const std::string& peer) {
  const std::string sender = optional_string(stream, "sender");
  const std::string receiver = optional_string(stream, "receiver");
  if (!sender.empty() && !receiver.empty()) return fmt::format("{}->{}", sender, receiver);
  if (peer.empty()) return {};
  std::string kind = optional_string(stream, "kind");
  if (kind.empty()) kind = stream_id.substr(0, stream_id.find(':'));
  if (kind == "rx" || kind == "sink" || kind == "read") return fmt::format("{}->{}", peer, agent);
  if (kind == "tx" || kind == "flow" || kind == "source") return fmt::format("{}->{}", agent, peer);
  return {};
}

StreamRow stream_row(const Field& stream, const std::string& test, const std::string& engine) {
  StreamRow row;
  row.test = test;
  row.engine = engine;
  row.agent = required_name(stream, "agent");
  row.stream_id = required_name(stream, "stream_id");
  row.peer = optional_string(stream, "peer");
  const Field passed = required_member(stream, "passed");
  expect(passed, passed.value.is_boolean(), "a boolean");
  row.passed = passed.value.get<bool>();
  if (const auto flow = optional_member(stream, "flow")) row.flow = optional_string(*flow, "text");
  row.link = link_of(stream, row.agent, row.stream_id, row.peer);

  const auto metrics = optional_member(stream, "metrics");
  const auto counters = optional_member(stream, "counters");
  const auto gauges = optional_member(stream, "gauges");
  const auto ber = optional_member(stream, "ber");
  row.throughput_bps = first_number({{&metrics, "throughput_bps"}});
  row.lost_frames = first_number({{&metrics, "lost_frames"}, {&counters, "lost_frames"}});
  row.loss_ratio = first_number({{&metrics, "loss_ratio"}});
  if (!row.loss_ratio && row.lost_frames) {
    // A report whose verdict did not work the ratio out: lost over lost and received.
    if (const auto received = first_number({{&counters, "rx_frames"}}); received && *row.lost_frames + *received > 0) {
      row.loss_ratio = *row.lost_frames / (*row.lost_frames + *received);
    }
  }
  row.bit_errors = first_number({{&ber, "bit_errors"}, {&metrics, "bit_errors"}, {&counters, "bit_errors"}});
  row.bits_compared = first_number({{&ber, "bits_compared"}, {&counters, "bits_compared"}});
  row.ber_upper_bound = first_number({{&ber, "upper_bound"}});
  row.retransmits = first_number({{&metrics, "retransmits"}, {&counters, "retransmits"}});
  row.latency_p99_ns = first_number({{&metrics, "latency_p99_ns"}, {&gauges, "latency_p99_ns"}});
  row.completion_errors = first_number({{&metrics, "completion_errors"}, {&counters, "completion_errors"}});
  return row;
}

// Every link a routed test's flows crossed, with the suspects' names, confidence and votes.
std::vector<LinkRow> link_rows(const Field& localisation, const std::string& test) {
  std::map<std::string, LinkRow> by_key;
  std::vector<std::string> order;  // suspects first, in their rank, then links in the order flows crossed them
  const auto row_of = [&](const std::string& key) -> LinkRow& {
    auto [it, added] = by_key.try_emplace(key);
    if (added) {
      it->second.test = test;
      it->second.key = key;
      it->second.name = key;
      it->second.role = "crossed";
      order.push_back(key);
    }
    return it->second;
  };
  for (const Field& suspect : optional_elements(localisation, "suspects")) {
    LinkRow& row = row_of(required_name(suspect, "link"));
    if (const std::string name = optional_string(suspect, "name"); !name.empty()) row.name = name;
    row.role = "suspect";
    row.confidence = optional_string(suspect, "confidence");
    row.votes = optional_number(suspect, "votes").value_or(0);
    row.kind = optional_string(suspect, "kind");
    row.rate = optional_number(suspect, "rate");
  }
  for (const Field& flow : optional_elements(localisation, "flows")) {
    const auto passed = optional_member(flow, "passed");
    if (passed) expect(*passed, passed->value.is_boolean(), "a boolean");
    const bool failing = passed && !passed->value.get<bool>();
    for (const Field& link : optional_elements(flow, "links")) {
      const std::string key = string_of(link);
      if (key.empty()) unreadable(link.path, "empty");
      LinkRow& row = row_of(key);
      ++row.flows;
      if (failing) ++row.failing_flows;
    }
  }
  // A schedule's clean flows, summed per link as each step ended (not listed in flows).
  if (const auto summed = optional_member(localisation, "clean_flows_by_link")) {
    expect(*summed, summed->value.is_object(), "an object");
    for (const auto& [key, count] : summed->value.items()) {
      const Field field{count, summed->path + "." + key};
      expect(field, count.is_number_unsigned() || (count.is_number_integer() && count.get<std::int64_t>() >= 0),
             "a count");
      LinkRow& row = row_of(key);
      // Bounded: a report's number, summed into an int.
      row.flows += static_cast<int>(
          std::min<std::uint64_t>(count.get<std::uint64_t>(), std::numeric_limits<int>::max() - row.flows));
    }
  }
  std::vector<LinkRow> rows;
  for (const auto& key : order) rows.push_back(by_key.at(key));
  return rows;
}

}  // namespace

RunRows rows_of_report(const json& report, std::string_view run_directory) {
  const Field root{report, ""};
  expect(root, report.is_object(), "a JSON object");
  const std::string schema = required_string(root, "schema");
  if (std::find(std::begin(kHistoryReportSchemas), std::end(kHistoryReportSchemas), schema) ==
      std::end(kHistoryReportSchemas)) {
    unreadable("schema", fmt::format("'{}' is not a report this build reads ({})", schema,
                                     fmt::join(kHistoryReportSchemas, ", ")));
  }
  RunRows rows;
  RunRow& run = rows.run;
  run.run_id = required_name(root, "run_id");
  const Field profile = required_member(root, "profile");
  run.profile_name = required_string(profile, "name");
  run.profile_file = optional_string(profile, "file");
  for (const char* key : {"started", "finished"}) {
    const std::string text = optional_string(root, key);
    auto& ns = std::string_view(key) == "started" ? run.started_ns : run.finished_ns;
    ns = parse_report_time(text);
    if (!text.empty() && !ns) unreadable(key, fmt::format("'{}' is not a UTC time as report.json writes it", text));
  }
  const Field exit_code = required_member(root, "exit_code");
  expect(exit_code, exit_code.value.is_number_integer(), "an integer");
  run.exit_code = exit_code.value.get<int>();
  run.conclusion = optional_string(root, "conclusion");
  run.tusk_version = optional_string(root, "tusk_version");
  run.retest_of = optional_string(root, "retest_of");
  run.run_directory = std::string(run_directory);
  for (const Field& agent : optional_elements(root, "agents")) run.agents.push_back(required_string(agent, "name"));
  for (const Field& agent : optional_elements(root, "missing_agents")) run.agents.push_back(string_of(agent));

  for (const Field& test : elements(required_member(root, "tests"))) {
    const std::string name = required_name(test, "name");
    const std::string engine = optional_string(test, "engine");
    for (const Field& stream : elements(required_member(test, "streams"))) {
      rows.streams.push_back(stream_row(stream, name, engine));
    }
    if (const auto localisation = optional_member(test, "localisation")) {
      for (auto& link : link_rows(*localisation, name)) rows.links.push_back(std::move(link));
    }
  }
  return rows;
}

json read_report_file(const std::string& path_or_directory, std::string* directory) {
  std::error_code error;
  const fs::path given(path_or_directory);
  const fs::path file = fs::is_directory(given, error) ? given / "report.json" : given;
  std::ifstream in(file);
  if (!in) throw ReportUnreadable(fmt::format("{}: cannot read it: {}", file.string(), std::strerror(errno)));
  try {
    // Read as OrderedJson, which finds each key of an object in constant time (ordered_json
    // reads one of n keys in n² time), then handed on as the ordered_json the readers take.
    json report = parse_json<OrderedJson>(in);
    // Absolute: the history outlives the working directory it was recorded from.
    if (directory) *directory = fs::absolute(file, error).parent_path().lexically_normal().string();
    return report;
  } catch (const JsonTooDeep& e) {
    throw ReportUnreadable(fmt::format("{}: not a report: {}", file.string(), e.what()));
  } catch (const json::parse_error& e) {
    throw ReportUnreadable(fmt::format("{}: not a Tusk report.json: not JSON (byte {})", file.string(), e.byte));
  } catch (const json::exception& e) {
    throw ReportUnreadable(fmt::format("{}: not a Tusk report.json: {}", file.string(), e.what()));
  }
}

std::optional<std::int64_t> parse_report_time(std::string_view text) {
  // Exactly what report_json writes: 2026-11-24T20:19:50.040Z (24 characters).
  if (text.size() != 24 || text[10] != 'T' || text[23] != 'Z') return std::nullopt;
  const std::string copy(text);
  std::tm utc{};
  int millis = 0;
  int consumed = 0;
  if (std::sscanf(copy.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &utc.tm_year, &utc.tm_mon, &utc.tm_mday, &utc.tm_hour,
                  &utc.tm_min, &utc.tm_sec, &millis, &consumed) != 7 ||
      consumed != 24) {
    return std::nullopt;
  }
  // Each field in its range, and a year whose nanoseconds fit in 64 bits (up to 2262).
  if (utc.tm_year < 1970 || utc.tm_year > 2261 || utc.tm_mon < 1 || utc.tm_mon > 12 || utc.tm_mday < 1 ||
      utc.tm_mday > 31 || utc.tm_hour < 0 || utc.tm_hour > 23 || utc.tm_min < 0 || utc.tm_min > 59 || utc.tm_sec < 0 ||
      utc.tm_sec > 60 || millis < 0 || millis > 999) {
    return std::nullopt;
  }
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  const std::time_t seconds = timegm(&utc);
  if (seconds == static_cast<std::time_t>(-1) ||
      seconds > std::numeric_limits<std::int64_t>::max() / 1'000'000'000 - 1) {
    return std::nullopt;
  }
  return static_cast<std::int64_t>(seconds) * 1'000'000'000 + static_cast<std::int64_t>(millis) * 1'000'000;
}

std::string stored_count_text(double count) {
  return fmt::format("{:.0f}", count);
}

std::string stored_latency_text(double ns) {
  return units::format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(ns))));
}

}  // namespace tusk
