#include "agent/dpdk/eal.hpp"

#include <rte_eal.h>
#include <rte_errno.h>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "agent/engine.hpp"

namespace tusk::dpdk {

std::vector<std::string> eal_arguments(const EalOptions& options) {
  std::vector<std::string> args{"tusk-agent", "-l", options.lcores, "--file-prefix", options.file_prefix,
                                // The agent is one process; secondary processes never attach.
                                "--no-shconf", "--log-level", "lib.eal:warning"};
  if (!options.use_hugepages) {
    args.insert(args.end(), {"--no-huge", "-m", std::to_string(options.memory_mb)});
  } else if (!options.huge_dir.empty()) {
    // EAL takes the first hugetlbfs mount it finds, which a non-root agent (the systemd unit's
    // _tusk) may not write: the admin gives it a mount of its own.
    args.insert(args.end(), {"--huge-dir", options.huge_dir});
  }
  if (options.allow_pci.empty()) args.emplace_back("--no-pci");
  for (const auto& pci : options.allow_pci) args.insert(args.end(), {"-a", pci});
  for (const auto& vdev : options.vdevs) args.insert(args.end(), {"--vdev", vdev});
  return args;
}

Eal::Eal(const EalOptions& options) : arguments_(eal_arguments(options)) {
  std::vector<char*> argv;
  for (auto& arg : arguments_) argv.push_back(arg.data());
  argv.push_back(nullptr);
  // rte_eal_init may permute argv; it works on our copies.
  if (rte_eal_init(static_cast<int>(argv.size() - 1), argv.data()) < 0) {
    throw EngineError(
        fmt::format("DPDK EAL init failed ({}): {}", fmt::join(arguments_, " "), rte_strerror(rte_errno)));
  }
}

Eal::~Eal() {
  if (rte_eal_cleanup() != 0) spdlog::warn("rte_eal_cleanup failed: {}", rte_strerror(rte_errno));
}

}  // namespace tusk::dpdk
