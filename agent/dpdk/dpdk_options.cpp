#include "agent/dpdk/dpdk_options.hpp"

#include <unistd.h>

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <filesystem>
#include <stdexcept>

#include "agent/dpdk/dpdk_engine.hpp"
#include "agent/dpdk/frame_room.hpp"
#include "agent/dpdk/queue_plan.hpp"
#include "agent/option_checks.hpp"
#include "common/wire_bounds.hpp"

namespace tusk::dpdk {
namespace {

// The device name DPDK gives a vdev is its text before the first comma ("net_af_packet0,iface=x").
std::string device_name(const std::string& vdev) {
  return vdev.substr(0, vdev.find(','));
}

// "net_af_packet0,iface=eth1,..." → "eth1"; "" for other drivers.
std::string af_packet_interface(const std::string& vdev) {
  return is_af_packet(vdev) ? vdev_argument(vdev, "iface").value_or("") : "";
}

bool missing(const std::string& path) {
  std::error_code ignored;
  return !std::filesystem::exists(path, ignored);
}

class DpdkOptions final : public EngineOptions {
 public:
  DpdkOptions() { options_.eal.file_prefix = "tusk-" + std::to_string(getpid()); }

  void add_to(CLI::App& app) override {
    app.add_option("--dpdk-vdev", vdevs_, "DPDK virtual device, e.g. net_af_packet0,iface=eth1; repeatable")
        ->group("DPDK");
    app.add_option("--dpdk-pci", pci_, "DPDK PCI device, e.g. 0000:3b:00.0 (mlx5 bifurcated); repeatable")
        ->group("DPDK");
    app.add_option("--dpdk-address", addresses_,
                   "IPv4 address of a DPDK port on a routed fabric, ADDRESS/PREFIX[,gw=GATEWAY]; the n-th is the "
                   "n-th port's (vdevs first, then PCI); repeatable")
        ->check(parsed_by("ADDRESS/PREFIX[,gw=GATEWAY]", [](const std::string& text) { parse_ipv4_interface(text); }))
        ->group("DPDK");
    app.add_option("--dpdk-lcores", options_.eal.lcores,
                   "EAL lcore list; with two or more CPUs the TX thread is pinned to the last and RX to the first")
        ->capture_default_str()
        ->group("DPDK");
    app.add_flag("--dpdk-hugepages", options_.eal.use_hugepages, "use reserved hugepages (default: --no-huge)")
        ->group("DPDK");
    app.add_option("--dpdk-huge-dir", options_.eal.huge_dir,
                   "hugetlbfs mount for DPDK's hugepage files, one this user may write (implies --dpdk-hugepages)")
        ->check(CLI::ExistingDirectory)
        ->each([this](const std::string&) { options_.eal.use_hugepages = true; })
        ->group("DPDK");
    app.add_option("--dpdk-memory-mb", options_.eal.memory_mb, "memory without hugepages")
        ->capture_default_str()
        ->group("DPDK");
    app.add_option("--dpdk-max-frame", options_.max_frame,
                   fmt::format("largest frame (bytes, without FCS) the DPDK ports carry: jumbo frames up to {}; sizes "
                               "the mbufs, a NIC's MTU and net_af_packet's ring frames (default: 2048-byte mbufs)",
                               kLargestMaxFrame))
        ->check(CLI::Range(std::uint32_t{64}, kLargestMaxFrame))
        ->group("DPDK");
    app.add_option("--dpdk-queues", options_.queues,
                   fmt::format("RX and TX queues per DPDK port, 1..{}: a test spreads its flows over them, one RX and "
                               "one TX thread per queue (net_af_packet: sets qpairs=; default: qpairs= or 1)",
                               tusk::wire::kMaxDpdkQueues))
        ->check(CLI::Range(std::uint32_t{1}, tusk::wire::kMaxDpdkQueues))
        ->group("DPDK");
    app.add_option("--dpdk-file-prefix", options_.eal.file_prefix,
                   "EAL file prefix, unique per DPDK process on a host (default: tusk-<pid>)")
        ->group("DPDK");
  }

  std::vector<std::string> host_problems() const override {
    std::vector<std::string> problems;
    for (const auto& vdev : vdevs_) {
      const std::string interface = af_packet_interface(vdev);
      if (!interface.empty() && missing("/sys/class/net/" + interface)) {
        problems.push_back(fmt::format("--dpdk-vdev {}: this host has no network interface '{}'", vdev, interface));
      }
    }
    for (const auto& pci : pci_) {
      if (missing("/sys/bus/pci/devices/" + pci)) {
        problems.push_back(
            fmt::format("--dpdk-pci {}: this host has no PCI device {} (lspci -D lists them)", pci, pci));
      }
    }
    if (addresses_.size() > vdevs_.size() + pci_.size()) problems.push_back(too_many_addresses());
    return problems;
  }

  std::optional<std::string> unused() const override {
    if (!vdevs_.empty() || !pci_.empty()) return std::nullopt;
    return std::string("it names no DPDK port (--dpdk-pci, --dpdk-vdev; dpdk: pci, vdev)");
  }

  void add_engine(EngineCatalog& catalog, const EngineContext& context) override {
    for (const auto& vdev : vdevs_) {
      options_.eal.vdevs.push_back(vdev_for_queues(vdev_for_max_frame(vdev, options_.max_frame), options_.queues));
      options_.ports.push_back(device_name(vdev));
      options_.kernel_interfaces.push_back(af_packet_interface(vdev));
    }
    options_.eal.allow_pci = pci_;
    for (const auto& pci : pci_) {
      options_.ports.push_back(pci);
      options_.kernel_interfaces.emplace_back();
    }
    if (addresses_.size() > options_.ports.size()) throw std::invalid_argument(too_many_addresses());
    for (const auto& address : addresses_) options_.addresses.push_back(parse_ipv4_interface(address));
    options_.idle_sleep_us = context.idle_sleep_us;
    add_dpdk_engine(catalog, options_);
  }

 private:
  std::string too_many_addresses() const {
    return fmt::format("--dpdk-address given {} times for {} DPDK ports: one per port, in order", addresses_.size(),
                       vdevs_.size() + pci_.size());
  }

  std::vector<std::string> vdevs_;
  std::vector<std::string> pci_;
  std::vector<std::string> addresses_;
  DpdkAgentOptions options_;
};

}  // namespace

std::unique_ptr<EngineOptions> dpdk_options() {
  return std::make_unique<DpdkOptions>();
}

}  // namespace tusk::dpdk
