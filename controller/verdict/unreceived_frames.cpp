#include "controller/verdict/unreceived_frames.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "common/counter_names.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {

std::vector<std::string> account_unreceived_frames(std::vector<AgentStream>& streams,
                                                   const std::set<std::string>& reporting) {
  namespace c = counters;
  std::vector<std::string> problems;
  // Each receiver's "rx" streams by (receiver, sender, sender's stream id), and by (receiver,
  // sender) for a sender that names none: one pass, so pairing is n log n in the streams.
  using Key = std::tuple<std::string_view, std::string_view, std::uint32_t>;
  std::map<Key, std::size_t> rx_by_flow;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> rx_by_peer;
  std::vector<std::size_t> senders;
  for (std::size_t i = 0; i < streams.size(); ++i) {
    const auto& entry = streams[i];
    if (entry.stream.kind() == "tx") senders.push_back(i);
    if (entry.stream.kind() != "rx") continue;
    rx_by_flow.emplace(Key{entry.agent, entry.stream.peer(), entry.stream.sender_stream_id()}, i);
    rx_by_peer.emplace(std::pair<std::string_view, std::string_view>{entry.agent, entry.stream.peer()}, i);
  }
  for (const std::size_t s : senders) {
    const std::string& sender = streams[s].agent;
    const proto::StreamCounters& tx = streams[s].stream;
    const std::string& receiver = tx.peer();
    if (!reporting.contains(receiver)) continue;
    const std::uint64_t sent = counter_or_zero(tx, c::kTxFrames);
    std::optional<std::size_t> rx;
    if (tx.sender_stream_id() == 0) {
      if (const auto found = rx_by_peer.find({receiver, sender}); found != rx_by_peer.end()) rx = found->second;
    } else if (const auto found = rx_by_flow.find(Key{receiver, sender, tx.sender_stream_id()});
               found != rx_by_flow.end()) {
      rx = found->second;
    }
    if (!rx) {
      if (sent > 0) {
        problems.push_back(fmt::format("{} received none of the {} frames {} sent it{}", receiver, sent, sender,
                                       tx.sender_stream_id() == 0 ? "" : fmt::format(" on {}", tx.stream_id())));
      }
      continue;
    }
    // Receivers change below, senders never: the indexes' keys stay valid.
    auto& rx_stream = streams[*rx].stream;
    auto& counters = *rx_stream.mutable_counters();
    const std::uint64_t accounted = counter_or_zero(rx_stream, c::kRxFrames) +
                                    counter_or_zero(rx_stream, c::kLostFrames) +
                                    counter_or_zero(rx_stream, c::kGapLostFrames);
    const std::uint64_t tail = sent > accounted ? sent - accounted : 0;
    counters[std::string(c::kTailLostFrames)] = tail;
    counters[std::string(c::kLostFrames)] = counter_or_zero(rx_stream, c::kLostFrames) + tail;
  }
  return problems;
}

}  // namespace tusk
