#include "controller/report/optics_json.hpp"

#include <cmath>
#include <string_view>

#include "common/clock.hpp"

namespace tusk {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
json maybe(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

std::string_view status_name(ModuleStatus status) {
  switch (status) {
    case ModuleStatus::diagnostics:
      return "diagnostics";
    case ModuleStatus::no_diagnostics:
      return "no_diagnostics";
    case ModuleStatus::unreadable:
      break;
  }
  return "unreadable";
}

std::string_view status_name(FecStatus status) {
  switch (status) {
    case FecStatus::statistics:
      return "statistics";
    case FecStatus::no_statistics:
      return "no_statistics";
    case FecStatus::unreadable:
      break;
  }
  return "unreadable";
}

std::string_view mode_name(FecMode mode) {
  switch (mode) {
    case FecMode::none:
      return "None";
    case FecMode::off:
      return "Off";
    case FecMode::auto_select:
      return "Auto";
    case FecMode::baser:
      return "BaseR";
    case FecMode::rs:
      return "RS";
    case FecMode::llrs:
      return "LLRS";
    case FecMode::other:
      break;
  }
  return "other";
}

std::string_view severity_name(OpticsSeverity severity) {
  return severity == OpticsSeverity::failure ? "failure" : "warning";
}

std::string_view limit_source_name(OpticsLimitSource source) {
  switch (source) {
    case OpticsLimitSource::profile:
      return "profile";
    case OpticsLimitSource::module_threshold:
      return "module_threshold";
    case OpticsLimitSource::module_flag:
      return "module_flag";
    case OpticsLimitSource::none:
      break;
  }
  return "none";
}

// dBm as the module gave it, else from its mW.
std::optional<double> dbm_of(std::optional<double> dbm, std::optional<double> mw) {
  return dbm ? dbm : dbm_of_mw(mw);
}

json module_json(const ModuleReading& module) {
  json lanes = json::array();
  for (std::size_t i = 0; i < module.lanes.size(); ++i) {
    const OpticalLane& lane = module.lanes[i];
    lanes.push_back({{"lane", i + 1},
                     {"tx_bias_ma", maybe(lane.tx_bias_ma)},
                     {"tx_power_dbm", maybe(dbm_of(lane.tx_power_dbm, lane.tx_power_mw))},
                     {"rx_power_dbm", maybe(dbm_of(lane.rx_power_dbm, lane.rx_power_mw))},
                     {"rx_power_mw", maybe(lane.rx_power_mw)}});
  }
  return {{"status", status_name(module.status)},
          {"note", module.note.empty() ? json(nullptr) : json(module.note)},
          {"type", module.identifier_text.empty() ? json(nullptr) : json(module.identifier_text)},
          {"vendor", module.vendor_name.empty() ? json(nullptr) : json(module.vendor_name)},
          {"part_number", module.part_number.empty() ? json(nullptr) : json(module.part_number)},
          {"serial_number", module.serial_number.empty() ? json(nullptr) : json(module.serial_number)},
          {"temperature_c", maybe(module.temperature_c)},
          {"supply_voltage_v", maybe(module.supply_voltage_v)},
          {"rx_power_kind", module.rx_power_kind == RxPowerKind::oma       ? json("oma")
                            : module.rx_power_kind == RxPowerKind::average ? json("average")
                                                                           : json(nullptr)},
          {"lanes", lanes},
          {"lanes_dropped", module.lanes_dropped},
          {"flags_raised", module.flags_raised.size()}};
}

json counter_json(const FecCounter& counter) {
  json lanes = json::array();
  for (const auto& lane : counter.lanes) lanes.push_back(maybe(lane));
  return {{"total", maybe(counter.total)}, {"lanes", lanes}};
}

json fec_json(const FecReading& fec) {
  json configured = json::array();
  for (FecMode mode : fec.configured) configured.push_back(mode_name(mode));
  return {{"status", status_name(fec.status)},
          {"note", fec.note.empty() ? json(nullptr) : json(fec.note)},
          {"configured", configured},
          {"active", fec.active ? json(mode_name(*fec.active)) : json(nullptr)},
          {"corrected_blocks", counter_json(fec.corrected_blocks)},
          {"uncorrectable_blocks", counter_json(fec.uncorrectable_blocks)},
          {"corrected_bits", counter_json(fec.corrected_bits)},
          {"histogram_bins", fec.histogram.size()}};
}

json rate_json(const FecErrorRate& rate) {
  return {{"fec_lane", maybe(rate.fec_lane)},
          {"rate", rate.rate},
          {"errors", rate.errors},
          {"bits", rate.bits},
          {"lower_bound", rate.lower_bound()}};
}

json rates_json(const FecErrorRates& rates) {
  json lanes = json::array();
  for (const auto& lane : rates.pre_fec_lanes) lanes.push_back(rate_json(lane));
  return {{"pre_fec_ber", rates.pre_fec_port ? rate_json(*rates.pre_fec_port) : json(nullptr)},
          {"pre_fec_ber_lanes", lanes},
          {"post_fec_symbol_ber", rates.post_fec_port ? rate_json(*rates.post_fec_port) : json(nullptr)},
          {"counters_went_back", rates.counters_went_back}};
}

json finding_json(const OpticsFinding& finding) {
  return {{"lane", maybe(finding.lane)},
          {"measure", optics_measure_name(finding.what)},
          {"measured", maybe(finding.measured)},
          {"limit", maybe(finding.limit)},
          {"limit_source", limit_source_name(finding.limit_source)},
          {"severity", severity_name(finding.severity)},
          {"text", finding.text}};
}

json timeline_json(const OpticsTimeline& timeline) {
  const bool found = timeline.with_findings > 0;
  const auto time = [&](std::int64_t ns) { return found ? json(utc_iso_time(ns)) : json(nullptr); };
  return {{"agent", timeline.agent},
          {"port", timeline.port},
          {"netdev", timeline.netdev},
          {"title", timeline.title},
          {"intervals", timeline.intervals},
          {"with_findings", timeline.with_findings},
          {"failing", timeline.failing},
          {"first_start", time(timeline.first_start_ns)},
          {"first_end", time(timeline.first_end_ns)},
          {"failing_start", timeline.failed() ? json(utc_iso_time(timeline.failing_start_ns)) : json(nullptr)},
          {"failing_end", timeline.failed() ? json(utc_iso_time(timeline.failing_end_ns)) : json(nullptr)},
          {"last_end", time(timeline.last_end_ns)},
          {"first_finding", found ? json(timeline.first_text) : json(nullptr)},
          {"worst_finding", found ? json(timeline.worst_text) : json(nullptr)},
          {"text", optics_timeline_text(timeline)}};
}

}  // namespace

json optics_json(const std::vector<PortOpticsOutcome>& ports, const std::vector<OpticsTimeline>& timelines) {
  json out = json::array();
  out.get_ref<json::array_t&>().reserve(ports.size());
  for (const auto& port : ports) {
    json findings = json::array();
    for (const auto& finding : port.verdict.findings) findings.push_back(finding_json(finding));
    out.push_back({{"agent", port.agent},
                   {"port", port.port},
                   {"netdev", port.netdev},
                   {"title", port_optics_title(port)},
                   {"failed", port.verdict.failed()},
                   {"module", port.module ? module_json(*port.module) : json(nullptr)},
                   {"fec", port.fec ? fec_json(*port.fec) : json(nullptr)},
                   {"bits_carried", port.bits_carried},
                   {"bits_from", port.bits_from_line_rate ? "line_rate" : "received_bytes"},
                   {"error_rates", rates_json(port.verdict.fec)},
                   {"findings", findings},
                   {"note", port.note.empty() ? json(nullptr) : json(port.note)}});
  }
  json timeline = json::array();
  for (const auto& port : timelines) timeline.push_back(timeline_json(port));
  return {{"ports", out},
          {"text", optics_summary_text(ports)},
          {"timeline", timeline},
          {"timeline_text", timelines.empty() ? json(nullptr) : json(optics_timeline_summary(timelines))}};
}

}  // namespace tusk
