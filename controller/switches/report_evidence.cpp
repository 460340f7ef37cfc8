#include "controller/switches/report_evidence.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/json_text.hpp"
#include "common/lldp_neighbour.hpp"
#include "controller/topology/fabric_topology.hpp"

namespace tusk {
namespace {

using plain_json = nlohmann::json;  // not `json`: the report files alias that as ordered_json

// A member's text as an LLDP field would be kept (printable, bounded).
std::string text_at(const plain_json& object, const char* key) {
  return lldp_text(string_member(object, key));
}

// The address before a flow text's port ("192.168.1.11:49152 > 192.168.2.11:4791 udp"), canonical.
std::string flow_address(const std::string& endpoint) {
  return canonical_ipv4(endpoint.substr(0, endpoint.rfind(':'))).value_or("");
}

// Each flow's source and destination and the address that answered each TTL.
void add_traced_paths(const plain_json& report, const std::string& file, std::vector<TracedPath>& paths) {
  const auto tests = report.find("tests");
  if (tests == report.end() || !tests->is_array()) return;
  for (const auto& test : *tests) {
    const auto localisation = test.is_object() ? test.find("localisation") : test.end();
    if (!test.is_object() || localisation == test.end() || !localisation->is_object()) continue;
    const auto flows = localisation->find("flows");
    if (flows == localisation->end() || !flows->is_array()) continue;
    for (const auto& flow : *flows) {
      const auto hops = flow.is_object() ? flow.find("path") : flow.end();
      if (!flow.is_object() || hops == flow.end() || !hops->is_array() || hops->empty()) continue;
      const std::string text = text_at(flow, "flow");
      const auto arrow = text.find(" > ");
      if (arrow == std::string::npos) continue;
      TracedPath path;
      path.source = flow_address(text.substr(0, arrow));
      path.destination = flow_address(text.substr(arrow + 3, text.find(' ', arrow + 3) - arrow - 3));
      if (path.source.empty() || path.destination.empty()) continue;
      bool answered = false;
      for (const auto& hop : *hops) {
        const auto ttl = hop.is_object() ? hop.find("ttl") : hop.end();
        if (!hop.is_object() || ttl == hop.end() || !ttl->is_number_unsigned()) continue;
        const auto at = ttl->get<std::uint64_t>();
        if (at == 0 || at > kMaxReportPathHops) {
          throw std::runtime_error(
              fmt::format("{}: a traced hop at TTL {} (at most {})", file, at, kMaxReportPathHops));
        }
        if (path.hops.size() < at) path.hops.resize(at);
        path.hops[at - 1] = canonical_ipv4(text_at(hop, "address")).value_or("");
        answered = answered || !path.hops[at - 1].empty();
      }
      if (!answered) continue;
      if (paths.size() == kMaxReportPaths) {
        throw std::runtime_error(fmt::format("{}: more than {} traced paths", file, kMaxReportPaths));
      }
      paths.push_back(std::move(path));
    }
  }
}

}  // namespace

ReportEvidence report_evidence_text(const std::string& text, const std::string& file) {
  const plain_json report = plain_json::parse(text, nullptr, false);
  if (report.is_discarded()) throw std::runtime_error(fmt::format("{}: not JSON", file));
  const auto agents = report.is_object() ? report.find("agents") : report.end();
  if (!report.is_object() || agents == report.end() || !agents->is_array()) {
    throw std::runtime_error(fmt::format("{}: no agents[] (not a Tusk report.json?)", file));
  }
  ReportEvidence evidence;
  std::vector<HostLldp>& hosts = evidence.hosts;
  // A port's neighbour (lldp_neighbour), address (ipv4 with its prefix, or roce_ipv4) and kernel name.
  const auto add = [&](const plain_json& agent, const plain_json& port, const char* address_key,
                       const char* fallback_name_key) {
    const auto heard = port.is_object() ? port.find("lldp_neighbour") : port.end();
    if (!port.is_object() || heard == port.end() || !heard->is_object()) return;
    if (hosts.size() == kMaxReportHostPorts) {
      throw std::runtime_error(
          fmt::format("{}: more than {} host ports with LLDP neighbours", file, kMaxReportHostPorts));
    }
    HostLldp host;
    host.agent = text_at(agent, "name");
    const std::string address = text_at(port, address_key);
    host.address = canonical_ipv4(address.substr(0, address.find('/'))).value_or("");
    host.netdev = text_at(port, "netdev");
    if (host.netdev.empty() && fallback_name_key) host.netdev = text_at(port, fallback_name_key);
    host.neighbour.local_port = host.netdev;
    host.neighbour.system_name = text_at(*heard, "system_name");
    host.neighbour.port_id = text_at(*heard, "port_id");
    host.neighbour.port_description = text_at(*heard, "port_description");
    host.neighbour.chassis_id = text_at(*heard, "chassis_id");
    host.from_frames = text_at(*heard, "source") == "frames";
    hosts.push_back(std::move(host));
  };
  const auto array_at = [](const plain_json& object, const char* key) -> const plain_json* {
    const auto found = object.find(key);
    return found != object.end() && found->is_array() ? &*found : nullptr;
  };
  for (const auto& agent : *agents) {
    if (!agent.is_object()) continue;
    if (const plain_json* ports = array_at(agent, "dpdk_ports")) {
      for (const auto& port : *ports) add(agent, port, "ipv4", "name");
    }
    const plain_json* devices = array_at(agent, "rdma_devices");
    if (!devices) continue;
    for (const auto& device : *devices) {
      const plain_json* ports = device.is_object() ? array_at(device, "ports") : nullptr;
      if (!ports) continue;
      for (const auto& port : *ports) add(agent, port, "roce_ipv4", nullptr);
    }
  }
  add_traced_paths(report, file, evidence.paths);
  return evidence;
}

ReportEvidence report_evidence(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read it", file));
  std::ostringstream text;
  text << in.rdbuf();
  return report_evidence_text(text.str(), file);
}

}  // namespace tusk
