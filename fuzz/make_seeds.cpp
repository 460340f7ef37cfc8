// Writes the binary seed corpora under fuzz/corpus/ (checked in; run again when the wire
// changes): framed envelopes as a controller or an agent really sends them, so the fuzzers start
// from messages that pass the first checks and mutate from there.
//   make_seeds <fuzz/corpus>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "common/framing.hpp"
#include "common/version.hpp"

namespace {
namespace fs = std::filesystem;
using tusk::proto::Envelope;

std::string frames(const std::vector<Envelope>& messages) {
  std::string bytes;
  for (const auto& message : messages) bytes += tusk::framing::encode(message);
  return bytes;
}

void write(const fs::path& dir, const std::string& name, const std::string& bytes) {
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary) << bytes;
}

Envelope hello(const std::string& name) {
  Envelope e;
  auto* hello = e.mutable_hello();
  hello->set_protocol_version(tusk::kProtocolVersion);
  hello->set_agent_name(name);
  hello->set_agent_instance(42);
  hello->mutable_state()->set_first_unacked_seq(1);
  hello->mutable_inventory()->add_engines("dpdk");
  hello->mutable_inventory()->add_engines("rdma");
  return e;
}

Envelope records(std::uint64_t first_seq, int test_index, std::uint32_t samples, bool with_result) {
  Envelope e;
  std::uint64_t seq = first_seq;
  for (std::uint32_t i = 1; i <= samples; ++i) {
    auto* r = e.mutable_records()->add_records();
    r->set_seq(seq++);
    auto* sample = r->mutable_sample();
    sample->set_run_id("run-fuzz");
    sample->set_test_index(test_index);
    sample->set_index(i);
    sample->set_elapsed_ms(i * 1000);
    auto* stream = sample->add_streams();
    stream->set_stream_id("to-lab-b");
    stream->set_peer("lab-b");
    (*stream->mutable_counters())["tx_frames"] = i * 1000;
    (*stream->mutable_counters())["bits_compared"] = i * 8'000'000;
    (*stream->mutable_counters())["bit_errors"] = 0;
  }
  auto* event = e.mutable_records()->add_records();
  event->set_seq(seq++);
  event->mutable_event()->set_run_id("run-fuzz");
  event->mutable_event()->set_test_index(test_index);
  event->mutable_event()->set_kind(tusk::proto::AgentEvent::LINK_DOWN);
  event->mutable_event()->set_message("port down");
  if (with_result) {
    auto* r = e.mutable_records()->add_records();
    r->set_seq(seq++);
    auto* result = r->mutable_result();
    result->set_run_id("run-fuzz");
    result->set_test_index(test_index);
    result->set_completed(true);
    result->set_samples(samples);
  }
  return e;
}

Envelope clock_echo() {
  Envelope e;
  auto* echo = e.mutable_clock_echo();
  echo->set_probe_id(1);
  echo->set_controller_send_ns(1'789'999'999'999'000'000);
  echo->set_agent_receive_ns(1'789'999'999'999'400'000);
  echo->set_agent_send_ns(1'789'999'999'999'500'000);
  return e;
}

Envelope plan(const std::string& engine) {
  Envelope e;
  auto* plan = e.mutable_plan();
  plan->set_run_id("run-fuzz");
  plan->set_test_index(0);
  plan->set_test_name("seed");
  plan->set_engine(engine);
  plan->set_duration_ms(10'000);
  plan->set_sample_interval_ms(1000);
  plan->set_max_rate_bps(10e9);
  plan->set_max_duration_ms(60'000);
  plan->add_peers()->set_agent_name("lab-b");
  if (engine == "dpdk") {
    plan->mutable_dpdk()->set_port("net_af_packet0");
    plan->mutable_dpdk()->set_frame_size(1000);
    plan->mutable_dpdk()->add_frame_sizes(64);
    plan->mutable_dpdk()->add_frame_sizes(1500);
    plan->mutable_dpdk()->set_rate_pps(1000);
    plan->mutable_dpdk()->set_pattern("prbs31");
  } else {
    plan->mutable_rdma()->set_device("rxe0");
    plan->mutable_rdma()->set_operation("write");
    plan->mutable_rdma()->set_message_size(65536);
    plan->mutable_rdma()->set_qps_per_peer(2);
    plan->mutable_rdma()->set_outstanding(16);
  }
  return e;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_seeds <fuzz/corpus directory>\n");
    return 2;
  }
  const fs::path root = argv[1];
  Envelope heartbeat;
  heartbeat.mutable_heartbeat()->set_sender_time_ns(1);
  Envelope plan_ack;
  plan_ack.mutable_plan_ack()->set_run_id("run-fuzz");
  plan_ack.mutable_plan_ack()->set_ok(true);
  Envelope error;
  error.mutable_error()->set_message("engine failed");

  // The decoder: its first byte chooses the frame limit and how the rest is split.
  const std::string session = frames({hello("fuzz-agent"), heartbeat, clock_echo(), plan_ack, records(1, 0, 5, true)});
  write(root / "frame_decoder", "whole-session", std::string(1, '\x10') + session);
  write(root / "frame_decoder", "byte-by-byte", std::string(1, '\x00') + session);

  write(root / "controller_session", "hello-records-result",
        frames({hello("fuzz-agent"), records(1, 0, 10, true), records(12, 1, 3, false)}));
  write(root / "controller_session", "hello-clock-ack-error",
        frames({hello("fuzz-agent"), clock_echo(), clock_echo(), plan_ack, error, heartbeat}));
  write(root / "controller_session", "resend-with-gap",
        frames({hello("fuzz-agent"), records(1, 0, 3, false), records(1, 0, 3, false), records(9, 0, 2, true)}));

  Envelope hello_ack;
  hello_ack.mutable_hello_ack()->set_lease_ms(3000);
  hello_ack.mutable_hello_ack()->set_heartbeat_interval_ms(1000);
  Envelope start;
  start.mutable_start_at()->set_run_id("run-fuzz");
  start.mutable_start_at()->set_agent_start_ns(1);
  Envelope stop;
  stop.mutable_stop()->set_run_id("run-fuzz");
  stop.mutable_stop()->set_reason("seed");
  Envelope ack;
  ack.mutable_record_ack()->set_acked_through(3);
  write(root / "agent_messages", "dpdk-run", frames({hello_ack, plan("dpdk"), start, ack, stop}));
  write(root / "agent_messages", "rdma-run", frames({hello_ack, plan("rdma"), start, stop, plan("rdma")}));
  return 0;
}
