#include "controller/run/session_input.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "common/printable.hpp"
#include "common/version.hpp"

namespace tusk {

std::optional<HelloRefusal> check_hello(const proto::Envelope& first_frame, bool encrypted,
                                        const std::optional<std::string>& peer_common_name) {
  if (first_frame.body_case() != proto::Envelope::kHello) {
    return HelloRefusal{proto::Error::BAD_MESSAGE, "the first frame must be a hello"};
  }
  const auto& hello = first_frame.hello();
  if (hello.protocol_version() != kProtocolVersion) {
    return HelloRefusal{proto::Error::VERSION_MISMATCH,
                        fmt::format("protocol version {} is not ours ({}); upgrade the agent or the controller",
                                    static_cast<int>(hello.protocol_version()), static_cast<int>(kProtocolVersion))};
  }
  const std::string& name = hello.agent_name();
  if (name.empty()) return HelloRefusal{proto::Error::BAD_MESSAGE, "hello without an agent name"};
  // A name is a key of the plan, the report and the scheduler's node: one that printable() would
  // change, or longer than a host's name (an agent's default name), is refused, not rewritten.
  if (name.size() > kMaxAgentNameBytes || !printable_as_is(name)) {
    return HelloRefusal{proto::Error::BAD_MESSAGE,
                        fmt::format("agent name '{}' is not one: at most {} printable ASCII characters, no '\\'",
                                    printable(cut_utf8(name, kMaxAgentNameBytes)), kMaxAgentNameBytes)};
  }
  if (encrypted && (!peer_common_name || *peer_common_name != name)) {
    return HelloRefusal{proto::Error::NOT_AUTHORISED,
                        fmt::format("agent calls itself '{}' but its certificate names '{}'", name,
                                    peer_common_name.value_or("nobody"))};
  }
  return std::nullopt;
}

SessionInput absorb_message(AgentSession& session, proto::Envelope& message, std::int64_t received_ns) {
  SessionInput input;
  switch (message.body_case()) {
    case proto::Envelope::kHeartbeat:
      break;
    case proto::Envelope::kClockEcho:
      if (const auto sample = clock_sample_from(message.clock_echo(), received_ns)) {
        session.clock.add(*sample);
      } else {
        spdlog::debug("agent '{}': clock echo {} dropped: its times do not fit our round trip", session.name,
                      message.clock_echo().probe_id());
      }
      break;
    case proto::Envelope::kPlanAck:
      input.plan_ack = message.plan_ack();
      break;
    case proto::Envelope::kRecords: {
      auto accepted = session.inbox.accept(std::move(*message.mutable_records()));
      if (!accepted.gaps.empty()) input.faults.push_back(describe_gaps(accepted.gaps));
      input.fresh = std::move(accepted.fresh);
      input.acked_through = session.inbox.acked_through();
      break;
    }
    case proto::Envelope::kError:
      // Cut and escaped where it arrived (peer_texts.hpp): it goes into the log, the summary and every report.
      input.faults.push_back(fmt::format("agent reported an error: {}", message.error().message()));
      break;
    default:
      input.unexpected = true;
  }
  return input;
}

}  // namespace tusk
