#include "controller/switches/report_lldp.hpp"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

#include "common/lldp_neighbour.hpp"

namespace tusk {
namespace {

using nlohmann::json;

std::string text_at(const json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_string() ? lldp_text(found->get<std::string>()) : std::string();
}

}  // namespace

std::vector<HostLldp> hosts_lldp_from_report_text(const std::string& text, const std::string& file) {
  const json report = json::parse(text, nullptr, false);
  if (report.is_discarded()) throw std::runtime_error(fmt::format("{}: not JSON", file));
  const auto agents = report.is_object() ? report.find("agents") : report.end();
  if (!report.is_object() || agents == report.end() || !agents->is_array()) {
    throw std::runtime_error(fmt::format("{}: no agents[] (not a Tusk report.json?)", file));
  }
  std::vector<HostLldp> hosts;
  for (const auto& agent : *agents) {
    if (!agent.is_object()) continue;
    const auto ports = agent.find("dpdk_ports");
    if (ports == agent.end() || !ports->is_array()) continue;
    for (const auto& port : *ports) {
      const auto heard = port.is_object() ? port.find("lldp_neighbour") : port.end();
      if (!port.is_object() || heard == port.end() || !heard->is_object()) continue;
      if (hosts.size() == kMaxReportHostPorts) {
        throw std::runtime_error(
            fmt::format("{}: more than {} host ports with LLDP neighbours", file, kMaxReportHostPorts));
      }
      HostLldp host;
      host.agent = text_at(agent, "name");
      const std::string ipv4 = text_at(port, "ipv4");
      host.address = ipv4.substr(0, ipv4.find('/'));
      host.netdev = text_at(port, "netdev");
      if (host.netdev.empty()) host.netdev = text_at(port, "name");
      host.neighbour.local_port = host.netdev;
      host.neighbour.system_name = text_at(*heard, "system_name");
      host.neighbour.port_id = text_at(*heard, "port_id");
      host.neighbour.port_description = text_at(*heard, "port_description");
      host.neighbour.chassis_id = text_at(*heard, "chassis_id");
      host.from_frames = text_at(*heard, "source") == "frames";
      hosts.push_back(std::move(host));
    }
  }
  return hosts;
}

std::vector<HostLldp> hosts_lldp_from_report(const std::string& file) {
  std::ifstream in(file);
  if (!in) throw std::runtime_error(fmt::format("{}: cannot read it", file));
  std::ostringstream text;
  text << in.rdbuf();
  return hosts_lldp_from_report_text(text.str(), file);
}

}  // namespace tusk
