#include "controller/run/run_data.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "common/clock.hpp"

namespace tusk {

SampleAccount account_samples(const AgentTestData& data, std::uint64_t claimed, std::uint32_t most) {
  SampleAccount account;
  account.claim_beyond_test = claimed > most;
  const std::uint64_t last = std::min<std::uint64_t>(claimed, most);
  for (std::uint64_t i = 1; i <= last; ++i) {
    if (data.samples.count(static_cast<std::uint32_t>(i))) continue;
    ++account.missing_count;
    if (account.missing.size() < kMaxListedMissing) account.missing.push_back(static_cast<std::uint32_t>(i));
  }
  return account;
}

std::uint32_t most_samples(std::chrono::milliseconds duration, std::chrono::milliseconds sample_interval) {
  const auto interval = std::max<std::int64_t>(sample_interval.count(), 1);
  const auto most = std::max<std::int64_t>(duration.count(), 0) / interval + 1;
  return static_cast<std::uint32_t>(std::min<std::int64_t>(most, std::numeric_limits<std::uint32_t>::max()));
}

RunData::RunData(std::string run_id, std::vector<std::uint32_t> most_samples)
    : most_samples_(std::move(most_samples)) {
  state_.run_id = std::move(run_id);
}

void RunData::fault_once(const std::string& agent, int test_index, const std::string& what, std::string message) {
  if (!reported_.emplace(agent, test_index, what).second) return;
  spdlog::warn("agent '{}': {}", agent, message);
  state_.faults.push_back({realtime_ns(), agent, test_index, std::move(message)});
}

int RunData::add_test(std::uint32_t most_samples) {
  std::lock_guard lock(mutex_);
  most_samples_.push_back(most_samples);
  return static_cast<int>(most_samples_.size() - 1);
}

void RunData::on_record(const std::string& agent, const proto::Record& record) {
  std::lock_guard lock(mutex_);
  auto belongs = [&](const std::string& run_id) { return run_id == state_.run_id; };
  // A test this run has; anything else is dropped, and said once.
  auto known_test = [&](int test_index) {
    if (test_index >= 0 && static_cast<std::size_t>(test_index) < most_samples_.size()) return true;
    fault_once(agent, test_index, "test",
               fmt::format("sent records for test {}, which this run of {} tests does not have: dropped", test_index,
                           most_samples_.size()));
    return false;
  };
  switch (record.body_case()) {
    case proto::Record::kSample: {
      const auto& sample = record.sample();
      if (!belongs(sample.run_id()) || !known_test(sample.test_index())) return;
      const std::uint32_t most = most_samples_[static_cast<std::size_t>(sample.test_index())];
      if (sample.index() == 0 || sample.index() > most) {
        fault_once(agent, sample.test_index(), "sample index",
                   fmt::format("sent sample {} of test {}, which makes at most {}: dropped", sample.index(),
                               sample.test_index(), most));
        return;
      }
      state_.tests[{sample.test_index(), agent}].samples[sample.index()] = sample;
      break;
    }
    case proto::Record::kResult:
      if (!belongs(record.result().run_id()) || !known_test(record.result().test_index())) return;
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
      if (!known_test(event.test_index())) return;
      auto& events = state_.tests[{event.test_index(), agent}].events;
      if (events.size() >= kMaxEventsPerAgentTest) {
        fault_once(agent, event.test_index(), "events",
                   fmt::format("sent more than {} events in test {}: the rest are dropped", kMaxEventsPerAgentTest,
                               event.test_index()));
        return;
      }
      events.push_back(event);
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
  if (++connection_faults_[{agent, state_.current_test}] > kMaxConnectionFaultsPerAgentTest) {
    fault_once(agent, state_.current_test, "connection faults",
               fmt::format("more than {} connection faults in this test; the rest are not listed",
                           kMaxConnectionFaultsPerAgentTest));
    return;
  }
  state_.faults.push_back({realtime_ns(), agent, state_.current_test, message});
}

}  // namespace tusk
