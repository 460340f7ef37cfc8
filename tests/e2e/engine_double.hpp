// TEST ONLY. An engine double for the control-plane end-to-end tests: it moves no traffic and
// derives its counters from elapsed time at the plan's rate. It lives under tests/ and is linked
// only into tusk-agent-double, never into the shipped tusk-agent.
//
// TUSK_DOUBLE_BIT_ERRORS_PER_S (environment) makes every stream report that many bit errors per
// second, so a test can breach a threshold. TUSK_DOUBLE_STREAMS_PER_PEER (default 1) makes each
// peer carry that many streams, so a test can make samples as large as it needs (or larger than
// its plan allows). TUSK_DOUBLE_HOSTILE_TEXT (set) makes each peer's first stream what a hostile
// agent would send: an id with forged log lines, escapes and bad bytes, and a 400-hop path.
// TUSK_DOUBLE_DEAF_AT_TEST=N makes the plan of test N never ready, its agent's thread stuck in the
// asking: it answers nothing, heartbeats included, until killed (an agent hung mid-prepare).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>

#include "agent/engine.hpp"

namespace tusk::testing {

class EngineDouble final : public Engine {
 public:
  void prepare(const proto::Plan& plan, EngineEventSink events) override;
  bool ready() override;
  void start(std::int64_t start_ns) override;
  std::vector<proto::StreamCounters> sample() override;
  void stop() noexcept override;

 private:
  std::mutex mutex_;
  proto::Plan plan_;
  std::string self_;
  double frames_per_s_ = 0;
  double bit_errors_per_s_ = 0;
  int streams_per_peer_ = 1;
  bool hostile_text_ = false;
  std::int64_t start_ns_ = 0;
  std::int64_t stop_ns_ = 0;
};

}  // namespace tusk::testing
