// The shipped tusk-agent, with the engines this version has.
#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <stdexcept>

#include "agent/agent_app.hpp"
#include "agent/dpdk/dpdk_engine.hpp"
#include "agent/dpdk/frame_room.hpp"
#include "agent/dpdk/queue_plan.hpp"
#include "agent/option_checks.hpp"
#include "agent/rdma/rdma_engine.hpp"
#include "common/wire_bounds.hpp"

namespace {

struct DpdkFlags {
  std::vector<std::string> vdevs;
  std::vector<std::string> pci;
  std::vector<std::string> addresses;
  tusk::dpdk::DpdkAgentOptions options;
};

// The device name DPDK gives a vdev is its text before the first comma ("net_af_packet0,iface=x").
std::string device_name(const std::string& vdev) {
  return vdev.substr(0, vdev.find(','));
}

// "net_af_packet0,iface=eth1,..." → "eth1"; "" for other drivers.
std::string af_packet_interface(const std::string& vdev) {
  return tusk::dpdk::is_af_packet(vdev) ? tusk::dpdk::vdev_argument(vdev, "iface").value_or("") : "";
}

}  // namespace

int main(int argc, char** argv) {
  DpdkFlags dpdk;
  std::vector<std::string> rdma_devices;
  dpdk.options.eal.file_prefix = "tusk-" + std::to_string(getpid());
  tusk::EngineSetup setup;
  setup.add_options = [&](CLI::App& app) {
    app.add_option("--dpdk-vdev", dpdk.vdevs, "DPDK virtual device, e.g. net_af_packet0,iface=eth1; repeatable")
        ->group("DPDK");
    app.add_option("--dpdk-pci", dpdk.pci, "DPDK PCI device, e.g. 0000:3b:00.0 (mlx5 bifurcated); repeatable")
        ->group("DPDK");
    app.add_option("--dpdk-address", dpdk.addresses,
                   "IPv4 address of a DPDK port on a routed fabric, ADDRESS/PREFIX[,gw=GATEWAY]; the n-th is the "
                   "n-th port's (vdevs first, then PCI); repeatable")
        ->check(tusk::parsed_by("ADDRESS/PREFIX[,gw=GATEWAY]",
                                [](const std::string& text) { tusk::dpdk::parse_ipv4_interface(text); }))
        ->group("DPDK");
    app.add_option("--dpdk-lcores", dpdk.options.eal.lcores,
                   "EAL lcore list; with two or more CPUs the TX thread is pinned to the last and RX to the first")
        ->capture_default_str()
        ->group("DPDK");
    app.add_flag("--dpdk-hugepages", dpdk.options.eal.use_hugepages, "use reserved hugepages (default: --no-huge)")
        ->group("DPDK");
    app.add_option("--dpdk-memory-mb", dpdk.options.eal.memory_mb, "memory without hugepages")
        ->capture_default_str()
        ->group("DPDK");
    app.add_option("--dpdk-max-frame", dpdk.options.max_frame,
                   fmt::format("largest frame (bytes, without FCS) the DPDK ports carry: jumbo frames up to {}; sizes "
                               "the mbufs, a NIC's MTU and net_af_packet's ring frames (default: 2048-byte mbufs)",
                               tusk::dpdk::kLargestMaxFrame))
        ->check(CLI::Range(std::uint32_t{64}, tusk::dpdk::kLargestMaxFrame))
        ->group("DPDK");
    app.add_option("--dpdk-queues", dpdk.options.queues,
                   fmt::format("RX and TX queues per DPDK port, 1..{}: a test spreads its flows over them, one RX and "
                               "one TX thread per queue (net_af_packet: sets qpairs=; default: qpairs= or 1)",
                               tusk::wire::kMaxDpdkQueues))
        ->check(CLI::Range(std::uint32_t{1}, tusk::wire::kMaxDpdkQueues))
        ->group("DPDK");
    app.add_option("--dpdk-file-prefix", dpdk.options.eal.file_prefix,
                   "EAL file prefix, unique per DPDK process on a host (default: tusk-<pid>)")
        ->group("DPDK");
    app.add_option("--rdma-device", rdma_devices,
                   "offer and use only this RDMA device, e.g. mlx5_0 (default: every device found); repeatable")
        ->group("RDMA");
    app.add_option("--idle-sleep-us", dpdk.options.idle_sleep_us,
                   "sleep when a poll finds nothing (labs on few cores); 0 busy-polls")
        ->capture_default_str()
        ->group("Agent");
  };
  setup.check_host = [&] {
    std::vector<std::string> problems;
    const auto missing = [](const std::string& path) {
      std::error_code ignored;
      return !std::filesystem::exists(path, ignored);
    };
    for (const auto& vdev : dpdk.vdevs) {
      const std::string interface = af_packet_interface(vdev);
      if (!interface.empty() && missing("/sys/class/net/" + interface)) {
        problems.push_back(fmt::format("--dpdk-vdev {}: this host has no network interface '{}'", vdev, interface));
      }
    }
    for (const auto& pci : dpdk.pci) {
      if (missing("/sys/bus/pci/devices/" + pci)) {
        problems.push_back(
            fmt::format("--dpdk-pci {}: this host has no PCI device {} (lspci -D lists them)", pci, pci));
      }
    }
    for (const auto& device : rdma_devices) {
      if (missing("/sys/class/infiniband/" + device)) {
        problems.push_back(fmt::format("--rdma-device {}: this host has no RDMA device '{}' (ibv_devices lists them)",
                                       device, device));
      }
    }
    if (dpdk.addresses.size() > dpdk.vdevs.size() + dpdk.pci.size()) {
      problems.push_back(fmt::format("--dpdk-address given {} times for {} DPDK ports: one per port, in order",
                                     dpdk.addresses.size(), dpdk.vdevs.size() + dpdk.pci.size()));
    }
    return problems;
  };
  setup.no_engine = [&]() -> std::optional<std::string> {
    if (!dpdk.vdevs.empty() || !dpdk.pci.empty() || !rdma_devices.empty()) return std::nullopt;
    std::error_code error;
    if (std::filesystem::directory_iterator devices("/sys/class/infiniband", error);
        !error && devices != std::filesystem::directory_iterator()) {
      return std::nullopt;
    }
    return std::string(
        "this agent can run no test here: it names no DPDK port (--dpdk-pci, --dpdk-vdev; dpdk: pci, vdev) and this "
        "host has no RDMA device (ibv_devices lists none)");
  };
  setup.make_engines = [&](const std::string& agent_name) {
    tusk::EngineCatalog engines;
    for (const auto& vdev : dpdk.vdevs) {
      dpdk.options.eal.vdevs.push_back(tusk::dpdk::vdev_for_queues(
          tusk::dpdk::vdev_for_max_frame(vdev, dpdk.options.max_frame), dpdk.options.queues));
    }
    dpdk.options.eal.allow_pci = dpdk.pci;
    for (const auto& vdev : dpdk.vdevs) {
      dpdk.options.ports.push_back(device_name(vdev));
      dpdk.options.kernel_interfaces.push_back(af_packet_interface(vdev));
    }
    for (const auto& pci : dpdk.pci) {
      dpdk.options.ports.push_back(pci);
      dpdk.options.kernel_interfaces.emplace_back();
    }
    if (dpdk.addresses.size() > dpdk.options.ports.size()) {
      throw std::invalid_argument(fmt::format("--dpdk-address given {} times for {} DPDK ports: one per port, in order",
                                              dpdk.addresses.size(), dpdk.options.ports.size()));
    }
    for (const auto& address : dpdk.addresses)
      dpdk.options.addresses.push_back(tusk::dpdk::parse_ipv4_interface(address));
    tusk::dpdk::add_dpdk_engine(engines, dpdk.options);
    tusk::rdma::add_rdma_engine(engines, agent_name, dpdk.options.idle_sleep_us, rdma_devices);
    return engines;
  };
  return tusk::run_agent(argc, argv, setup);
}
