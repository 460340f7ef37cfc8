#include "controller/engines/dpdk/dpdk_check_load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/check_share.hpp"
#include "common/wire_bounds.hpp"
#include "controller/engines/senders_ask.hpp"

namespace tusk {

std::string dpdk_check_load(const proto::Plan& plan, const proto::Inventory& inventory,
                            const std::map<std::string, const proto::Plan*>& test_plans) {
  const auto& test = plan.dpdk();
  const double bytes_per_s = inventory.check_rates().dpdk_frame_bytes_per_s();
  if (plan.senders_size() == 0 || !std::isfinite(bytes_per_s) || bytes_per_s <= 0) return "";
  // The plan's port, or where it names none yet (offline: the agent picks), the fastest it has.
  const proto::DpdkPort* port = nullptr;
  for (const auto& candidate : inventory.dpdk_ports()) {
    if (!test.port().empty() ? candidate.name() == test.port()
                             : port == nullptr || candidate.speed_mbps() > port->speed_mbps()) {
      port = &candidate;
    }
  }
  const double port_gbps = port ? port->speed_mbps() / 1e3 : 0;
  // Each queue checks on its own core; a plan's 0 is every queue the port opened with.
  std::uint32_t queues = test.queues() != 0 ? test.queues() : port ? port->queues() : 1;
  queues = std::clamp<std::uint32_t>(queues, 1, wire::kMaxDpdkQueues);
  const auto [asked, whence] = senders_ask(plan.senders(), test.offered_bps(), test_plans,
                                           [](const proto::Plan& sender) { return sender.dpdk().offered_bps(); });
  const CheckDemand demand = check_demand(port ? port->name() : test.port(), port_gbps, asked, whence);
  if (demand.bytes_per_s <= 0) return "";
  const double share = check_share(demand.bytes_per_s, 1e9 / bytes_per_s, 1, queues);
  if (share < kCheckLoadSaid) return "";
  return fmt::format(
      "it may receive {:.2f} GB/s ({}) and one of its cores checks {:.2f} GB/s of 1500 B frames' PRBS payloads "
      "(measured as it started): checking every bit would take about {:.0f} % of the {} core{} of its receiving "
      "queue{}, and frames it cannot take are counted as host-side drops; spread the port over more queues "
      "(--dpdk-queues, `queues:`) or lower the rate",
      demand.bytes_per_s / 1e9, demand.whence, bytes_per_s / 1e9, 100 * share, queues, queues == 1 ? "" : "s",
      queues == 1 ? "" : "s");
}

}  // namespace tusk
