// TEST ONLY. The controller's side of the wire with no controller behind it: real agents register
// with it over mutual TLS, and a test sends each exactly the plans it writes (a hostile
// controller's, or an honest one's) and reads its answers, the way tusk-controller would. The
// lab tests prove with it that an agent's engines, on real devices, refuse what no profile can
// produce and stay up.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/tls.hpp"
#include "tusk.pb.h"

namespace tusk::testing {

class ScriptedController {
 public:
  // Listens on 127.0.0.1:port with the controller's certificate; answers every Hello, acknowledges
  // every record and sends heartbeats, so the agents hold their lease.
  ScriptedController(std::uint16_t port, const TlsFiles& tls);
  ~ScriptedController();
  ScriptedController(const ScriptedController&) = delete;
  ScriptedController& operator=(const ScriptedController&) = delete;

  // True once every one of `names` has registered and is still connected.
  bool wait_for_agents(const std::vector<std::string>& names, std::chrono::milliseconds timeout);
  // Sends `plan` to the agent `name`: its run id and test index name the answer.
  void send_plan(const std::string& name, const proto::Plan& plan);
  // The agent's answer to the plan with this run id and test index; nullopt when none came in time.
  std::optional<proto::PlanAck> answer(const std::string& name, const std::string& run_id, int test_index,
                                       std::chrono::milliseconds timeout);
  void send_stop(const std::string& name, const std::string& run_id, int test_index);
  bool connected(const std::string& name) const;
  // What the agent's Hello said it has (its devices and ports); empty before it registered.
  proto::Inventory inventory(const std::string& name) const;
  // Why the agent's connection closed, if it did.
  std::string closed_reason(const std::string& name) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace tusk::testing
