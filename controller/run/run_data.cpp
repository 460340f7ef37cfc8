#include "controller/run/run_data.hpp"

#include <spdlog/spdlog.h>

#include "common/clock.hpp"

namespace tusk {

void RunData::on_record(const std::string& agent, const proto::Record& record) {
  std::lock_guard lock(mutex_);
  auto belongs = [&](const std::string& run_id) { return run_id == state_.run_id; };
  switch (record.body_case()) {
    case proto::Record::kSample:
      if (!belongs(record.sample().run_id())) return;
      state_.tests[{record.sample().test_index(), agent}].samples[record.sample().index()] = record.sample();
      break;
    case proto::Record::kResult:
      if (!belongs(record.result().run_id())) return;
      state_.tests[{record.result().test_index(), agent}].result = record.result();
      break;
    case proto::Record::kEvent: {
      const auto& event = record.event();
      spdlog::warn("agent '{}': {}: {}", agent, proto::AgentEvent::Kind_Name(event.kind()), event.message());
      // Events outside this run (e.g. a lease that expired while idle) are still faults worth telling.
      if (!belongs(event.run_id())) {
        state_.faults.push_back({event.agent_time_ns(), agent, -1,
                                 proto::AgentEvent::Kind_Name(event.kind()) + ": " + event.message()});
        return;
      }
      state_.tests[{event.test_index(), agent}].events.push_back(event);
      break;
    }
    case proto::Record::BODY_NOT_SET:
      break;
  }
}

void RunData::on_plan_ack(const std::string& agent, const proto::PlanAck& ack) {
  std::lock_guard lock(mutex_);
  if (ack.run_id() != state_.run_id) return;
  state_.tests[{ack.test_index(), agent}].plan_ack = ack;
}

void RunData::on_fault(const std::string& agent, const std::string& message) {
  std::lock_guard lock(mutex_);
  state_.faults.push_back({realtime_ns(), agent, state_.current_test, message});
}

}  // namespace tusk
