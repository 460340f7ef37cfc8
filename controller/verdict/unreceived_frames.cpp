#include "controller/verdict/unreceived_frames.hpp"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <string_view>
#include <tuple>

#include "common/counter_names.hpp"
#include "common/loopback_peer.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {
namespace {

// The receiver's stream of a flow none of whose frames arrived: every frame sent is lost (at the
// tail), so the stream fails on loss where a receiver's own stream would, and names its sender.
AgentStream stream_that_never_arrived(const std::string& receiver, std::string_view from,
                                      const proto::StreamCounters& tx, std::uint64_t sent) {
  namespace c = counters;
  AgentStream entry{receiver, {}};
  entry.stream.set_kind("rx");
  entry.stream.set_peer(std::string(from));
  entry.stream.set_sender_stream_id(tx.sender_stream_id());
  entry.stream.set_stream_id(tx.sender_stream_id() == 0 ? fmt::format("rx:{}", from)
                                                        : fmt::format("rx:{}/{}", from, tx.sender_stream_id()));
  auto& counters = *entry.stream.mutable_counters();
  counters[std::string(c::kRxFrames)] = 0;
  counters[std::string(c::kLostFrames)] = sent;
  counters[std::string(c::kTailLostFrames)] = sent;
  return entry;
}

}  // namespace

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
  std::vector<AgentStream> never_arrived;  // appended after the loop: the keys above view `streams`
  for (const std::size_t s : senders) {
    const std::string& sender = streams[s].agent;
    const proto::StreamCounters& tx = streams[s].stream;
    // A loopback test's sender is its own receiver, which names the frames' sender
    // wire::kLoopbackPeer.
    const bool loopback = tx.peer() == wire::kLoopbackPeer;
    const std::string& receiver = loopback ? sender : tx.peer();
    const std::string_view from = loopback ? wire::kLoopbackPeer : std::string_view(sender);
    if (!reporting.contains(receiver)) continue;
    const std::uint64_t sent = counter_or_zero(tx, c::kTxFrames);
    std::optional<std::size_t> rx;
    if (tx.sender_stream_id() == 0) {
      if (const auto found = rx_by_peer.find({receiver, from}); found != rx_by_peer.end()) rx = found->second;
    } else if (const auto found = rx_by_flow.find(Key{receiver, from, tx.sender_stream_id()});
               found != rx_by_flow.end()) {
      rx = found->second;
    }
    if (!rx) {
      if (sent > 0) {
        const std::string flow = tx.sender_stream_id() == 0 ? "" : fmt::format(" on {}", tx.stream_id());
        problems.push_back(
            loopback ? fmt::format("{}'s port returned none of the {} frames it sent itself{}", sender, sent, flow)
                     : fmt::format("{} received none of the {} frames {} sent it{}", receiver, sent, sender, flow));
        never_arrived.push_back(stream_that_never_arrived(receiver, from, tx, sent));
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
  for (auto& stream : never_arrived) streams.push_back(std::move(stream));
  return problems;
}

}  // namespace tusk
