#include "controller/engines/rdma/rdma_check_load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "common/check_share.hpp"
#include "controller/engines/senders_ask.hpp"

namespace tusk {
namespace {

// The port a plan's QPs use: the named device's port, else the fastest active port the agent has
// (the NIC it will pick is not known before the run).
std::pair<std::string, double> receiving_port(const proto::RdmaTest& test, const proto::Inventory& inventory) {
  std::pair<std::string, double> best{"", 0};
  for (const auto& device : inventory.rdma_devices()) {
    if (!test.device().empty() && device.name() != test.device()) continue;
    for (const auto& port : device.ports()) {
      if (test.port() != 0 && port.port_num() != test.port()) continue;
      if (!std::isfinite(port.speed_gbps()) || port.speed_gbps() <= best.second) continue;
      best = {fmt::format("{}/{}", device.name(), port.port_num()), port.speed_gbps()};
    }
  }
  return best;
}

// The measured rate for messages nearest `size` in ratio (a message's check costs per byte the
// less the larger it is); 0 when the inventory has none.
std::pair<std::uint64_t, double> nearest_rate(const proto::CheckRates& rates, std::uint64_t size) {
  std::pair<std::uint64_t, double> best{0, 0};
  double best_distance = 0;
  const int count = std::min(rates.rdma_size(), kMaxCheckRates);
  for (int i = 0; i < count; ++i) {
    const auto& rate = rates.rdma(i);
    if (rate.message_size() == 0 || !std::isfinite(rate.bytes_per_s()) || rate.bytes_per_s() <= 0) continue;
    const double distance = std::abs(std::log(static_cast<double>(rate.message_size()) / std::max<double>(1, size)));
    if (best.second == 0 || distance < best_distance) {
      best = {rate.message_size(), rate.bytes_per_s()};
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace

std::string rdma_check_load(const proto::Plan& plan, const proto::Inventory& inventory,
                            const std::map<std::string, const proto::Plan*>& test_plans) {
  const auto& test = plan.rdma();
  if (!test.data_check()) return "";
  // A READ's initiator checks what it reads from its peers; any other operation's receiver what
  // its senders write or send.
  const bool reads = test.operation() == "read";
  if ((reads ? plan.peers_size() : plan.senders_size()) == 0) return "";
  std::uint64_t size = test.message_size();
  for (const std::uint64_t swept : test.message_sizes()) size = size == 0 ? swept : std::min(size, swept);
  const auto [measured_size, bytes_per_s] = nearest_rate(inventory.check_rates(), size);
  if (bytes_per_s <= 0) return "";
  const auto [port, port_gbps] = receiving_port(test, inventory);
  // What it reads is what it asks; what it is written or sent, what its senders ask of it.
  const auto [asked, whence] =
      reads ? std::pair{test.rate_bps(), fmt::format("its reads at {:g} Gb/s", test.rate_bps() / 1e9)}
            : senders_ask(plan.senders(), test.rate_bps(), test_plans,
                          [](const proto::Plan& sender) { return sender.rdma().rate_bps(); });
  const CheckDemand demand = check_demand(port, port_gbps, asked, whence);
  if (demand.bytes_per_s <= 0) return "";
  const double share = check_share(demand.bytes_per_s, 1e9 / bytes_per_s, test.check_every());
  if (share < kCheckLoadSaid) return "";
  const std::uint32_t every = advised_check_every(share, test.check_every());
  return fmt::format(
      "it may receive {:.2f} GB/s ({}) and one of its cores checks {:.2f} GB/s of {} B messages (measured as it "
      "started): checking {} would take about {:.0f} % of its RDMA datapath thread and may set the throughput; "
      "check_every: {} would check one message in {}",
      demand.bytes_per_s / 1e9, demand.whence, bytes_per_s / 1e9, measured_size,
      test.check_every() <= 1 ? std::string("every payload") : fmt::format("one payload in {}", test.check_every()),
      100 * share, every, every);
}

}  // namespace tusk
