#include "agent/rdma/check_load.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include "agent/rdma/message_format.hpp"
#include "common/rdma_limits.hpp"

namespace tusk::rdma {

double check_ns_per_byte(std::size_t message_size) {
  constexpr std::size_t kMeasuredBytes = std::size_t{256} << 10;
  const std::size_t size = std::clamp<std::size_t>(message_size, kMessageHeaderBytes + 1, kMeasuredBytes);
  const std::size_t count = std::max<std::size_t>(1, kMeasuredBytes / size);
  std::vector<std::uint8_t> messages(size * count, 0x5A);
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    const auto start = std::chrono::steady_clock::now();
    std::uint32_t sink = 0;
    for (std::size_t m = 0; m < count; ++m) sink ^= payload_crc(messages.data() + m * size, size);
    const double ns = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
    messages[sink % messages.size()] ^= 1;  // the CRCs are used
    const double per_byte = ns / static_cast<double>(messages.size());
    best = round == 0 ? per_byte : std::min(best, per_byte);
  }
  return best;
}

std::optional<std::string> check_load_notice(double bytes, double seconds, double ns_per_byte,
                                             std::uint32_t check_every, std::uint64_t message_size) {
  if (!(seconds > 0) || !(bytes > 0) || !(ns_per_byte > 0)) return std::nullopt;
  const double share = check_share(bytes / seconds, ns_per_byte, 1);
  if (share < kCheckLoadSaid) return std::nullopt;
  const std::uint32_t every = advised_check_every(share, check_every);
  return fmt::format(
      "checking payloads took about {:.0f} % of the RDMA datapath thread ({:.2f} GB/s checked; this core checks "
      "{:.2f} GB/s of {} B messages): the throughput measured may be what the check allows, not the link; "
      "check_every: {} would check one message in {}",
      100 * share, bytes / seconds / 1e9, 1 / ns_per_byte, message_size, every, every);
}

std::optional<std::string> check_capacity_notice(double offered_bytes_per_s, const std::string& whence,
                                                 double ns_per_byte, std::uint32_t check_every,
                                                 std::uint64_t message_size) {
  if (!(offered_bytes_per_s > 0) || !(ns_per_byte > 0)) return std::nullopt;
  const double share = check_share(offered_bytes_per_s, ns_per_byte, check_every);
  if (share < kCheckLoadSaid) return std::nullopt;
  const std::uint32_t every = advised_check_every(share, check_every);
  return fmt::format(
      "this agent may receive {:.2f} GB/s ({}) and one core checks {:.2f} GB/s of {} B messages: checking {} would "
      "take about {:.0f} % of the RDMA datapath thread and may set the throughput; check_every: {} would check one "
      "message in {}",
      offered_bytes_per_s / 1e9, whence, 1 / ns_per_byte, message_size,
      check_every <= 1 ? std::string("every payload") : fmt::format("one payload in {}", check_every), 100 * share,
      every, every);
}

}  // namespace tusk::rdma
