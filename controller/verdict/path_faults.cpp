#include "controller/verdict/path_faults.hpp"

#include <fmt/format.h>

#include <map>
#include <tuple>
#include <utility>

namespace tusk {

std::string flow_text(const proto::StreamCounters& stream) {
  if (!stream.has_flow()) return "";
  const auto& flow = stream.flow();
  return fmt::format("{}:{} > {}:{} {}", flow.src_address(), flow.src_port(), flow.dst_address(), flow.dst_port(),
                     flow.protocol());
}

std::string PathFaultSign::text(const std::vector<StreamVerdict>& streams) const {
  std::vector<std::string> names;
  for (const std::size_t index : failing) {
    const proto::StreamCounters& stream = streams.at(index).stream;
    const std::string flow = flow_text(stream);
    names.push_back(flow.empty() ? stream.stream_id() : fmt::format("{} ({})", stream.stream_id(), flow));
  }
  return fmt::format(
      "{} from {}: {} of {} flows fail ({}) while {} between the same hosts pass: a fault on the "
      "path{} those flows take (a link or switch between the hosts), not at either host",
      receiver, sender, failing.size(), failing.size() + passing.size() + passing_not_kept, fmt::join(names, ", "),
      passing.size() + passing_not_kept == 1 ? "its sibling"
                                             : fmt::format("their {} siblings", passing.size() + passing_not_kept),
      failing.size() == 1 ? "" : "s");
}

std::vector<PathFaultSign> path_fault_signs(const std::vector<StreamVerdict>& streams) {
  // Siblings are streams of one kind (an RDMA QP's flow and its sink are one flow, not two).
  std::map<std::tuple<std::string, std::string, std::string>, PathFaultSign> by_hosts;
  for (std::size_t index = 0; index < streams.size(); ++index) {
    const StreamVerdict& verdict = streams[index];
    const std::string& kind = verdict.stream.kind();
    // Only judged streams of one flow with a peer: a sender's own count, a port's statistics or
    // a NIC's counters (one port, every peer's traffic) tell nothing about a path.
    if (!kind_counts_a_flow(kind) || verdict.stream.peer().empty()) continue;
    // A stream that counts what its peer sent is the receiver's; any other is the sender's.
    const bool receives = kind.empty() || kind_receives(kind);
    const std::string& receiver = receives ? verdict.agent : verdict.stream.peer();
    const std::string& sender = receives ? verdict.stream.peer() : verdict.agent;
    PathFaultSign& sign = by_hosts[{receiver, sender, kind}];
    sign.receiver = receiver;
    sign.sender = sender;
    (verdict.passed() ? sign.passing : sign.failing).push_back(index);
  }
  std::vector<PathFaultSign> signs;
  for (auto& [hosts, sign] : by_hosts) {
    if (!sign.failing.empty() && !sign.passing.empty()) signs.push_back(std::move(sign));
  }
  return signs;
}

}  // namespace tusk
