// What the controller knows about one agent, across its reconnects: identity, inventory, the
// current connection (null while it is away), record dedup state and clock estimate.
// Owned by AgentRegistry; touched only under the registry's mutex.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/connection.hpp"
#include "controller/outcome/agent_data.hpp"
#include "controller/run/agent_identity.hpp"
#include "controller/run/clock_sync.hpp"
#include "controller/run/peer_texts.hpp"
#include "controller/run/record_inbox.hpp"
#include "tusk.pb.h"

namespace tusk {

struct AgentSession {
  std::string name;
  std::uint64_t instance = 0;
  proto::Inventory inventory;
  AgentNode node;  // from what its certificate proves (agent_identity.hpp)
  proto::AgentState state_at_hello;
  std::shared_ptr<Connection> connection;
  std::string remote;
  RecordInbox inbox;
  ClockEstimate clock;
  std::chrono::steady_clock::time_point last_heard{};
  std::chrono::steady_clock::time_point disconnected_since{};
  std::uint32_t connects = 0;
  PeerTextTally texts;  // what make_peer_texts_safe changed of its messages, across its connections
  // Sent again after every reconnect, so a command lost with a connection is not lost for good.
  std::vector<proto::Envelope> standing_orders;

  bool connected() const { return connection && connection->is_open(); }
};

}  // namespace tusk
