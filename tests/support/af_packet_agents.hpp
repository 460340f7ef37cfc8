// Starting tusk-agents whose DPDK ports are af_packet ports of this host, all at once.
// DPDK 22.11's af_packet PMD joins its port's sockets to the PACKET_FANOUT group
// (getpid() ^ ifindex) & 0xffff, and groups are per network namespace: two agents can draw one
// number, and then the second one's port fails to open (EINVAL) and it serves no DPDK. The number
// follows from the pid, which posix_spawn returns long before the port opens, so an agent that
// drew a taken number is killed and spawned again at once, and no agent has to be waited for
// (the labs used to wait for each agent's log, and start the clashing ones again).
#pragma once

#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/e2e/process.hpp"

namespace tusk::testing {

class AfPacketAgents {
 public:
  struct Agent {
    std::vector<std::string> command;  // the agent and its arguments (or a prefix that execs it)
    std::string iface;                 // the af_packet port's kernel interface, in this namespace
    std::string log;
  };

  // Spawns every agent; the processes come back in `agents`' order. Throws where an interface is
  // not there or no free group turns up.
  std::vector<std::unique_ptr<Process>> start(const std::vector<Agent>& agents) {
    std::vector<std::unique_ptr<Process>> started;
    for (const Agent& agent : agents) {
      const unsigned ifindex = ifindex_of(agent.iface);
      for (int attempt = 1;; ++attempt) {
        if (attempt > 64) throw std::runtime_error("no free PACKET_FANOUT group for " + agent.iface);
        std::filesystem::remove(agent.log);
        auto process = std::make_unique<Process>(agent.command, agent.log);
        // Groups already taken stay taken for the fixture's life: an agent started again in a
        // test may run beside its predecessor's last moments.
        if (taken_.insert((static_cast<unsigned>(process->pid()) ^ ifindex) & 0xffffu).second) {
          started.push_back(std::move(process));
          break;
        }
      }
    }
    return started;
  }

 private:
  static unsigned ifindex_of(const std::string& iface) {
    std::ifstream file("/sys/class/net/" + iface + "/ifindex");
    unsigned ifindex = 0;
    if (!(file >> ifindex)) throw std::runtime_error("no interface " + iface + " in this namespace");
    return ifindex;
  }

  std::set<unsigned> taken_;
};

}  // namespace tusk::testing
