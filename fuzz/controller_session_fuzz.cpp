// The controller's handling of one agent's frames, without a socket: the stream is decoded as it
// would arrive; the first frame must pass the hello check, every later one is absorbed into a
// session (records, clock echoes, plan acks, errors) and its records go into the run's data, whose
// accounting of samples and results is then asked for, as the orchestrator would.
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/framing.hpp"
#include "controller/run/run_data.hpp"
#include "controller/run/session_input.hpp"

namespace {
constexpr std::int64_t kReceivedNs = 1'790'000'000'000'000'000;  // a fixed "now": runs repeat
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace tusk;
  framing::FrameDecoder decoder(kMaxHelloFrame);
  decoder.feed(reinterpret_cast<const char*>(data), size);
  AgentSession session;
  // Two tests of 10 s and 60 s sampled every second, as a plan would bound them.
  RunData run("run-fuzz", {most_samples(std::chrono::seconds(10), std::chrono::seconds(1)),
                           most_samples(std::chrono::seconds(60), std::chrono::seconds(1))});
  proto::Envelope message;
  std::string error;
  bool registered = false;
  while (decoder.next(message, error) == framing::FrameDecoder::Status::Frame) {
    if (!registered) {
      if (check_hello(message, true, std::string("fuzz-agent"))) return 0;  // refused: the connection closes
      session.name = message.hello().agent_name();
      session.inbox.start_at(message.hello().state().first_unacked_seq());
      decoder.set_max_frame(framing::kDefaultMaxFrame);
      registered = true;
      // Plans for both tests, so samples are folded in (layouts, compact values, bins), not dropped.
      run.expect(session.name, 0, 16);
      run.expect(session.name, 1, 16);
      // Test 1 reads the optics every 5 s and judges them as they come, against the field preset.
      TestSpec optics_test;
      optics_test.duration = std::chrono::seconds(60);
      optics_test.optics.interval = std::chrono::seconds(5);
      optics_test.optics.preset = OpticsPreset::field_ber;
      optics_test.optics.thresholds.min_rx_power_dbm = -8;
      run.judge_optics_intervals(1, optics_test);
      continue;
    }
    const SessionInput input = absorb_message(session, message, kReceivedNs);
    for (const auto& fault : input.faults) run.on_fault(session.name, fault);
    if (input.plan_ack) run.on_plan_ack(session.name, *input.plan_ack);
    for (const auto& record : input.fresh) run.on_record(session.name, record);
  }
  (void)session.clock.best();
  run.with([](RunState& state) {
    for (const auto& [key, agent] : state.tests) {
      if (agent.result && key.first >= 0 && key.first < 2) {
        (void)account_samples(agent, agent.result->samples(), key.first == 0 ? 11 : 61);
      }
    }
    return 0;
  });
  return 0;
}
