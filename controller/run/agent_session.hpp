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
#include "controller/run/clock_sync.hpp"
#include "controller/run/record_inbox.hpp"
#include "tusk.pb.h"

namespace tusk {

struct AgentSession {
  std::string name;
  std::uint64_t instance = 0;
  proto::Inventory inventory;
  proto::AgentState state_at_hello;
  std::shared_ptr<Connection> connection;
  std::string remote;
  RecordInbox inbox;
  ClockEstimate clock;
  std::chrono::steady_clock::time_point last_heard{};
  std::chrono::steady_clock::time_point disconnected_since{};
  std::uint32_t connects = 0;
  // Sent again after every reconnect, so a command lost with a connection is not lost for good.
  std::vector<proto::Envelope> standing_orders;

  bool connected() const { return connection && connection->is_open(); }
};

// The small, frequently polled part of an agent's state: cheap to copy for thousands of agents.
struct AgentLink {
  std::string name;
  bool connected = false;
  std::chrono::steady_clock::duration away_for{};  // how long it has been disconnected
  std::optional<ClockSample> clock;
  std::size_t clock_samples = 0;
  std::uint64_t duplicate_records = 0;  // for the live metrics' health
  std::uint64_t missing_records = 0;
};

// A copy of what the orchestrator may read about an agent, taken under the registry's lock.
struct AgentView {
  std::string name;
  proto::Inventory inventory;
  bool connected = false;
  std::string remote;
  std::optional<ClockSample> clock;
  std::size_t clock_samples = 0;
  std::chrono::steady_clock::duration away_for{};  // how long it has been disconnected
  std::uint32_t connects = 0;
  std::uint64_t duplicate_records = 0;
  std::uint64_t missing_records = 0;
};

}  // namespace tusk
