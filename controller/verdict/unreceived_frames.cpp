#include "controller/verdict/unreceived_frames.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "common/counter_names.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {

namespace {

std::uint64_t counter(const proto::StreamCounters& stream, std::string_view name) {
  return counter_of(stream, name).value_or(0);
}

}  // namespace

std::vector<std::string> account_unreceived_frames(std::vector<AgentStream>& streams,
                                                   const std::set<std::string>& reporting) {
  namespace c = counters;
  std::vector<std::string> problems;
  // Index the senders first: receivers are modified below.
  std::vector<std::pair<std::string, proto::StreamCounters>> senders;
  for (const auto& entry : streams) {
    if (entry.stream.kind() == "tx") senders.emplace_back(entry.agent, entry.stream);
  }
  for (const auto& sent_by : senders) {
    // Named, not a structured binding: clang before 16 cannot capture those in the lambda below.
    const std::string& sender = sent_by.first;
    const proto::StreamCounters& tx = sent_by.second;
    const std::string& receiver = tx.peer();
    if (!reporting.contains(receiver)) continue;
    const std::uint64_t sent = counter(tx, c::kTxFrames);
    const auto rx = std::find_if(streams.begin(), streams.end(), [&](const AgentStream& entry) {
      return entry.agent == receiver && entry.stream.kind() == "rx" && entry.stream.peer() == sender &&
             (tx.sender_stream_id() == 0 || entry.stream.sender_stream_id() == tx.sender_stream_id());
    });
    if (rx == streams.end()) {
      if (sent > 0) {
        problems.push_back(fmt::format("{} received none of the {} frames {} sent it{}", receiver, sent, sender,
                                       tx.sender_stream_id() == 0 ? "" : fmt::format(" on {}", tx.stream_id())));
      }
      continue;
    }
    auto& counters = *rx->stream.mutable_counters();
    const std::uint64_t accounted =
        counter(rx->stream, c::kRxFrames) + counter(rx->stream, c::kLostFrames) + counter(rx->stream, c::kGapLostFrames);
    const std::uint64_t tail = sent > accounted ? sent - accounted : 0;
    counters[std::string(c::kTailLostFrames)] = tail;
    counters[std::string(c::kLostFrames)] = counter(rx->stream, c::kLostFrames) + tail;
  }
  return problems;
}

}  // namespace tusk
