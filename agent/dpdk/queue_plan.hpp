// How a test spreads a port's work over several queues and CPUs: W workers, each with one RX
// thread polling its share of the port's RX queues and one TX thread sending its share of the
// flows on its own TX queue. The port's driver (RSS on a NIC, fanout hashing under net_af_packet)
// keeps each flow on one RX queue, so sequence tracking stays per flow. Worked out once, in
// prepare, from the plan, the port and the agent's CPU list; pure, so unit-tested on its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tusk::dpdk {

struct QueueWorker {
  std::vector<std::uint16_t> rx_queues;  // the port's RX queues this worker's RX thread polls
  std::uint16_t tx_queue = 0;            // the TX queue its TX thread alone sends on
  std::optional<int> rx_cpu, tx_cpu;     // pinned CPUs; nullopt floats
};

struct QueuePlanInput {
  std::uint32_t wanted = 0;  // the plan's queues; 0: every queue the port has
  std::uint16_t port_queues = 1;
  std::vector<int> cpus;  // the agent's EAL lcore list
  bool busy_poll = true;  // no --idle-sleep-us: each thread keeps a CPU busy
  std::string port;       // for messages
};

// One worker per queue used; every RX queue of the port is polled by some worker (a queue nobody
// polls would drop its flows). With two or more CPUs the threads are pinned, RX threads from the
// first CPU up and TX threads from the last down, and a plan that needs more CPUs than the list
// gives is refused; with one CPU the threads float, which only the sleeping (shared-core) mode
// may do for more than one queue. Throws std::invalid_argument saying what to change.
std::vector<QueueWorker> plan_queues(const QueuePlanInput& input);

// The targets (indexes into the port's flow list) worker `worker` of `workers` sends to: every
// workers-th one, so each worker's share of the port rate is its share of the flows.
std::vector<std::size_t> targets_of_worker(std::size_t targets, std::size_t workers, std::size_t worker);

// The vdev string a port needs for `queues` queues (0: as given). net_af_packet takes qpairs=;
// a qpairs= the user gave must agree. Other drivers are returned unchanged. Throws
// std::invalid_argument naming the vdev.
std::string vdev_for_queues(const std::string& vdev, std::uint16_t queues);

// The queues a port made from `vdev` ("" for PCI) opens with: `queues` when given, else
// net_af_packet's qpairs=, else 1.
std::uint16_t port_queues(const std::string& vdev, std::uint16_t queues);

}  // namespace tusk::dpdk
