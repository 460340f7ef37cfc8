// What one frame from an agent means to the controller, apart from the socket it came on: whether
// a hello may register, and what a registered agent's frame changes in its session. Pure, so the
// registry's networking and the fuzzers share one reading of every value a peer can send.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/run/agent_session.hpp"
#include "tusk.pb.h"

namespace tusk {

// The largest first frame (the hello, with the host's inventory) an unknown peer may send; the
// full frame size is allowed once the hello is accepted.
inline constexpr std::uint32_t kMaxHelloFrame = 256u << 10;
// An agent's name: by default its host's name, which DNS bounds at 253.
inline constexpr std::size_t kMaxAgentNameBytes = 253;

struct HelloRefusal {
  proto::Error::Code code;
  std::string why;
};

// `peer_common_name`: the name in the peer's verified certificate; nullopt on a plaintext link.
// Returns why the first frame cannot register anyone, or nullopt when it is an acceptable hello.
std::optional<HelloRefusal> check_hello(const proto::Envelope& first_frame, bool encrypted,
                                        const std::optional<std::string>& peer_common_name);

struct SessionInput {
  std::vector<proto::Record> fresh;  // stored for the first time, in sequence order
  std::vector<std::string> faults;   // for the run's report
  std::optional<proto::PlanAck> plan_ack;
  std::optional<std::uint64_t> acked_through;  // answer with a RecordAck
  bool unexpected = false;                     // a frame an agent never sends: logged, ignored
};

// Applies one frame from a registered agent to its session (records, clock echoes, ...).
// `received_ns`: when it arrived, on the controller's realtime clock.
SessionInput absorb_message(AgentSession& session, proto::Envelope& message, std::int64_t received_ns);

}  // namespace tusk
