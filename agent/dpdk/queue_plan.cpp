#include "agent/dpdk/queue_plan.hpp"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>

#include "agent/dpdk/frame_room.hpp"
#include "common/wire_bounds.hpp"

namespace tusk::dpdk {
namespace {

std::optional<std::uint16_t> qpairs_of(const std::string& vdev) {
  const auto text = vdev_argument(vdev, "qpairs");
  if (!text) return std::nullopt;
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc() || end != text->data() + text->size() || value == 0 || value > tusk::wire::kMaxDpdkQueues) {
    throw std::invalid_argument(
        fmt::format("--dpdk-vdev {}: qpairs={} is not a queue count 1..{}", vdev, *text, tusk::wire::kMaxDpdkQueues));
  }
  return static_cast<std::uint16_t>(value);
}

}  // namespace

std::vector<QueueWorker> plan_queues(const QueuePlanInput& input) {
  const std::uint16_t port_queues = std::max<std::uint16_t>(1, input.port_queues);
  if (input.wanted > port_queues) {
    throw std::invalid_argument(fmt::format(
        "DPDK port {}: the test asks for {} queues and the port has {}: start the agent with --dpdk-queues {}",
        input.port, input.wanted, port_queues, input.wanted));
  }
  const std::size_t workers = input.wanted == 0 ? port_queues : input.wanted;
  const bool pinned = input.cpus.size() >= 2;
  if (pinned && 2 * workers > input.cpus.size()) {
    throw std::invalid_argument(fmt::format(
        "DPDK port {}: {} queues need {} CPUs, one RX and one TX thread each, and --dpdk-lcores gives {}: give more "
        "CPUs or ask for fewer queues",
        input.port, workers, 2 * workers, input.cpus.size()));
  }
  if (!pinned && workers > 1 && input.busy_poll) {
    throw std::invalid_argument(fmt::format(
        "DPDK port {}: {} queues busy-poll {} threads, and --dpdk-lcores gives one CPU: give {} CPUs, or share "
        "cores with --idle-sleep-us",
        input.port, workers, 2 * workers, 2 * workers));
  }
  std::vector<QueueWorker> plan(workers);
  for (std::uint16_t queue = 0; queue < port_queues; ++queue) plan[queue % workers].rx_queues.push_back(queue);
  for (std::size_t w = 0; w < workers; ++w) {
    plan[w].tx_queue = static_cast<std::uint16_t>(w);
    if (pinned) {
      plan[w].rx_cpu = input.cpus[w];
      plan[w].tx_cpu = input.cpus[input.cpus.size() - 1 - w];
    }
  }
  return plan;
}

std::vector<std::size_t> targets_of_worker(std::size_t targets, std::size_t workers, std::size_t worker) {
  std::vector<std::size_t> mine;
  for (std::size_t t = worker; workers > 0 && t < targets; t += workers) mine.push_back(t);
  return mine;
}

std::string vdev_for_queues(const std::string& vdev, std::uint16_t queues) {
  if (!is_af_packet(vdev)) return vdev;
  const auto given = qpairs_of(vdev);
  if (queues == 0) return vdev;
  if (given && *given != queues) {
    throw std::invalid_argument(
        fmt::format("--dpdk-vdev {}: qpairs={} disagrees with --dpdk-queues {}: leave qpairs= out and Tusk sets it",
                    vdev, *given, queues));
  }
  return given ? vdev : fmt::format("{},qpairs={}", vdev, queues);
}

std::uint16_t port_queues(const std::string& vdev, std::uint16_t queues) {
  if (queues != 0) return queues;
  if (is_af_packet(vdev)) {
    if (const auto given = qpairs_of(vdev)) return *given;
  }
  return 1;
}

}  // namespace tusk::dpdk
