#include "controller/engines/rdma/rdma_reach.hpp"

#include <arpa/inet.h>
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <optional>
#include <vector>

namespace tusk::rdma {
namespace {

struct GidAddress {
  std::uint32_t ip = 0;  // host order
  bool v2 = false;
};

std::vector<GidAddress> roce_ipv4_addresses(const proto::Inventory& inventory) {
  std::vector<GidAddress> addresses;
  for (const auto& device : inventory.rdma_devices()) {
    for (const auto& port : device.ports()) {
      for (const auto& gid : port.gids()) {
        in_addr parsed{};
        if (gid.ip().empty() || inet_pton(AF_INET, gid.ip().c_str(), &parsed) != 1) continue;
        addresses.push_back({ntohl(parsed.s_addr), gid.type() == "RoCE v2"});
      }
    }
  }
  return addresses;
}

// An agent's rails: its devices in inventory order (the agent lists them in --rdma-device order),
// each with the IPv4 address of its RoCE v2 GID (v1 if none); devices without one cannot be rails.
std::vector<proto::RdmaRail> rails_of(const proto::Inventory& inventory) {
  std::vector<proto::RdmaRail> rails;
  for (const auto& device : inventory.rdma_devices()) {
    proto::Inventory one;
    *one.add_rdma_devices() = device;
    const auto addresses = roce_ipv4_addresses(one);
    if (addresses.empty()) continue;
    const auto best = std::find_if(addresses.begin(), addresses.end(), [](const GidAddress& a) { return a.v2; });
    in_addr out{htonl((best != addresses.end() ? *best : addresses.front()).ip)};
    char text[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, &out, text, sizeof text) == nullptr) continue;
    proto::RdmaRail rail;
    rail.set_device(device.name());
    rail.set_address(text);
    rails.push_back(std::move(rail));
  }
  return rails;
}

}  // namespace

// The IPv4 address behind one of `to`'s RoCE v2 GIDs (v1 if none), the one sharing the longest
// prefix with an address of `from`, so that hosts with one NIC per link (a rail, or the lab's
// point-to-point links) talk over the link they share.
std::string data_plane_address(const proto::Inventory& from, const proto::Inventory& to) {
  const auto mine = roce_ipv4_addresses(from);
  std::optional<GidAddress> best;
  int best_score = -1;
  for (const auto& theirs : roce_ipv4_addresses(to)) {
    int common = 0;
    for (const auto& own : mine) common = std::max(common, std::countl_zero(own.ip ^ theirs.ip));
    const int score = common * 2 + (theirs.v2 ? 1 : 0);  // a shared prefix first, then RoCE v2
    if (score > best_score) {
      best_score = score;
      best = theirs;
    }
  }
  if (!best) return "";
  in_addr out{htonl(best->ip)};
  char text[INET_ADDRSTRLEN];
  return inet_ntop(AF_INET, &out, text, sizeof text) ? text : "";
}

// Rails: this agent's first `rails` devices, and each peer's address on every rail.
std::string bind_inventories(proto::Plan& plan, const std::string& agent,
                             const std::map<std::string, proto::Inventory>& inventories) {
  const std::uint32_t wanted = plan.rdma().rails();
  if (wanted == 0) return "";
  const auto rails_of_agent = [&](const std::string& name, std::vector<proto::RdmaRail>& rails) -> std::string {
    const auto it = inventories.find(name);
    rails = it == inventories.end() ? std::vector<proto::RdmaRail>{} : rails_of(it->second);
    if (rails.size() >= wanted) return "";
    std::vector<std::string> found;
    for (const auto& rail : rails) found.push_back(fmt::format("{} {}", rail.device(), rail.address()));
    return fmt::format("rails: {} needs {} RDMA devices with a RoCE IPv4 address on {}, which has {}{}", wanted, wanted,
                       name, rails.size(), found.empty() ? "" : fmt::format(" ({})", fmt::join(found, ", ")));
  };
  std::vector<proto::RdmaRail> own;
  if (auto problem = rails_of_agent(agent, own); !problem.empty()) return problem;
  plan.mutable_rdma()->clear_rail_endpoints();
  for (std::uint32_t r = 0; r < wanted; ++r) *plan.mutable_rdma()->add_rail_endpoints() = own[r];
  for (auto* endpoints : {plan.mutable_peers(), plan.mutable_senders()}) {
    for (auto& peer : *endpoints) {
      std::vector<proto::RdmaRail> theirs;
      if (auto problem = rails_of_agent(peer.agent_name(), theirs); !problem.empty()) return problem;
      peer.clear_rail_addresses();
      for (std::uint32_t r = 0; r < wanted; ++r) peer.add_rail_addresses(theirs[r].address());
    }
  }
  return "";
}

}  // namespace tusk::rdma
