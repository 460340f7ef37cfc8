#include "tests/e2e/engine_double.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include "common/clock.hpp"
#include "common/counter_names.hpp"

namespace tusk::testing {

void EngineDouble::prepare(const proto::Plan& plan, EngineEventSink) {
  std::lock_guard lock(mutex_);
  if (plan.has_dpdk() && plan.dpdk().port() == "missing-port") {
    throw EngineError("port 'missing-port' does not exist (engine double)");
  }
  plan_ = plan;
  frames_per_s_ = plan.has_dpdk() && plan.dpdk().rate_pps() > 0 ? plan.dpdk().rate_pps() : 1000;
  const char* errors = std::getenv("TUSK_DOUBLE_BIT_ERRORS_PER_S");
  bit_errors_per_s_ = errors ? std::atof(errors) : 0;
  const char* streams = std::getenv("TUSK_DOUBLE_STREAMS_PER_PEER");
  streams_per_peer_ = streams ? std::max(1, std::atoi(streams)) : 1;
  hostile_text_ = std::getenv("TUSK_DOUBLE_HOSTILE_TEXT") != nullptr;
  start_ns_ = stop_ns_ = 0;
}

bool EngineDouble::ready() {
  const char* deaf = std::getenv("TUSK_DOUBLE_DEAF_AT_TEST");
  if (deaf != nullptr && std::atoi(deaf) == plan_.test_index()) {
    std::this_thread::sleep_for(std::chrono::hours(1));
  }
  return true;
}

void EngineDouble::start(std::int64_t start_ns) {
  std::lock_guard lock(mutex_);
  start_ns_ = start_ns;
}

std::vector<proto::StreamCounters> EngineDouble::sample() {
  std::lock_guard lock(mutex_);
  const std::int64_t until = stop_ns_ != 0 ? stop_ns_ : realtime_ns();
  const double seconds = start_ns_ == 0 ? 0 : std::max<std::int64_t>(0, until - start_ns_) / 1e9;
  const auto frames = static_cast<std::uint64_t>(frames_per_s_ * seconds);
  const std::uint64_t frame_size = plan_.has_dpdk() && plan_.dpdk().frame_size() > 0 ? plan_.dpdk().frame_size() : 1000;
  const auto counted_stream = [&](const std::string& stream_id, const std::string& peer) {
    proto::StreamCounters stream;
    stream.set_stream_id(stream_id);
    stream.set_peer(peer);
    auto& counters = *stream.mutable_counters();
    counters[std::string(counters::kTxFrames)] = frames;
    counters[std::string(counters::kTxBytes)] = frames * frame_size;
    counters[std::string(counters::kRxFrames)] = frames;
    counters[std::string(counters::kRxBytes)] = frames * frame_size;
    counters[std::string(counters::kLostFrames)] = 0;
    counters[std::string(counters::kBitsCompared)] = frames * frame_size * 8;
    counters[std::string(counters::kBitErrors)] = static_cast<std::uint64_t>(bit_errors_per_s_ * seconds);
    return stream;
  };
  std::vector<proto::StreamCounters> streams;
  for (const auto& peer : plan_.peers()) {
    const std::string first = "to-" + peer.agent_name();
    streams.push_back(counted_stream(first, peer.agent_name()));
    if (hostile_text_) {
      // What a hostile agent would send: a stream id that ends its log line and writes the
      // controller's own verdict lines, an escape sequence, a control character and a byte that
      // is not UTF-8; and a path far past any probe's reach.
      streams.back().set_stream_id(first +
                                   "\n2026-01-01T00:00:00.000 tusk-controller info: test 0 'double-pairs': pass"
                                   "\nresult: all 1 tests passed (exit 0)\x1b[2J\x01\xe9");
      for (std::uint32_t ttl = 1; ttl <= 400; ++ttl) {
        auto& hop = *streams.back().add_path();
        hop.set_ttl(ttl);
        hop.set_address("10.0.0.1");
      }
    }
    for (int n = 1; n < streams_per_peer_; ++n) {
      streams.push_back(counted_stream(first + "-" + std::to_string(n), peer.agent_name()));
    }
  }
  return streams;
}

void EngineDouble::stop() noexcept {
  std::lock_guard lock(mutex_);
  if (start_ns_ != 0 && stop_ns_ == 0) stop_ns_ = realtime_ns();
}

}  // namespace tusk::testing
