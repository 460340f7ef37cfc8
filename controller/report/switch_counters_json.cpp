#include "controller/report/switch_counters_json.hpp"

#include "common/clock.hpp"

namespace tusk {
namespace {

using json = nlohmann::ordered_json;

json port_json(const std::optional<SwitchPortCounters>& port) {
  if (!port) return nullptr;
  return {{"in_octets", port->in_octets},   {"in_packets", port->in_packets},
          {"in_errors", port->in_errors},   {"in_discards", port->in_discards},
          {"out_octets", port->out_octets}, {"out_packets", port->out_packets},
          {"out_errors", port->out_errors}, {"out_discards", port->out_discards},
          {"counters_64bit", port->wide},   {"oper_up", port->oper_up ? json(*port->oper_up) : json(nullptr)}};
}

json direction_json(const CountedDirection& d) {
  return {{"link", d.key},
          {"sender_read", d.sender_read},
          {"receiver_read", d.receiver_read},
          {"sent", d.sender_read ? json(d.sent) : json(nullptr)},
          {"received", d.receiver_read ? json(d.received) : json(nullptr)},
          {"in_errors", d.in_errors},
          {"in_discards", d.in_discards},
          {"out_errors", d.out_errors},
          {"out_discards", d.out_discards},
          {"vanished", d.vanished()},
          {"lost", d.lost()},
          {"counts_loss", d.counts_loss()}};
}

}  // namespace

json switch_counters_json(const SwitchCounterEvidence& evidence) {
  json links = json::array();
  for (const auto& link : evidence.links) {
    links.push_back({{"ends", {link.a_end.text(), link.b_end.text()}},
                     {"cable", link.cable.empty() ? json(nullptr) : json(link.cable)},
                     {"name", link.name},
                     {"a", port_json(link.a)},
                     {"b", port_json(link.b)},
                     {"a_to_b", direction_json(link.a_to_b)},
                     {"b_to_a", direction_json(link.b_to_a)}});
  }
  return {{"links", links},
          {"unreadable", evidence.unreadable},
          {"warnings", evidence.warnings},
          {"text", evidence.text()}};
}

json switch_intervals_json(const std::vector<SwitchInterval>& intervals) {
  json noted = json::array();
  for (const auto& interval : intervals) {
    if (interval.lossy.empty() && interval.unreadable == 0) continue;
    json lossy = json::array();
    for (const auto& d : interval.lossy) {
      lossy.push_back({{"link", d.key}, {"lost", d.lost()}, {"counts", d.counts_text()}});
    }
    noted.push_back({{"from", utc_iso_time(interval.from_ns)},
                     {"to", utc_iso_time(interval.to_ns)},
                     {"lossy", lossy},
                     {"lossy_dropped", interval.lossy_dropped},
                     {"switches_unreadable", interval.unreadable}});
  }
  return {{"intervals", intervals.size()}, {"noted", noted}, {"text", switch_intervals_text(intervals)}};
}

json cabling_json(const CablingCheck& check) {
  json findings = json::array();
  for (const auto& finding : check.findings) {
    findings.push_back({{"kind", to_string(finding.kind)},
                        {"device", finding.device},
                        {"port", finding.port},
                        {"expected", finding.expected.empty() ? json(nullptr) : json(finding.expected)},
                        {"found", finding.found.empty() ? json(nullptr) : json(finding.found)},
                        {"source", finding.source},
                        {"text", finding.text()}});
  }
  json seen = json::array();
  for (const auto& cable : check.seen)
    seen.push_back({{"ends", {cable.a, cable.b}}, {"in_topology_file", cable.in_file}});
  return {{"clean", check.clean()},
          {"checked", check.checked()},
          {"not_checked", check.checked() ? json(nullptr) : json(check.not_checked)},
          {"ends_checked", check.ends_checked},
          {"ends_matched", check.ends_matched},
          {"findings", findings},
          {"cables_seen", seen},
          {"unverified", check.unverified},
          {"unreadable", check.unreadable},
          {"text", check.text()}};
}

}  // namespace tusk
