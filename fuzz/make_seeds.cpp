// Writes the binary seed corpora under fuzz/corpus/ (checked in; run again when the wire
// changes): framed envelopes as a controller or an agent really sends them, so the fuzzers start
// from messages that pass the first checks and mutate from there.
//   make_seeds <fuzz/corpus>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "agent/dpdk/frame_format.hpp"
#include "agent/dpdk/neighbour.hpp"
#include "agent/dpdk/wire_bytes.hpp"
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

// A test frame of `size` bytes as a DPDK sender writes it (payload left zero), after the fuzz
// target's selector byte.
std::string test_frame(std::uint8_t selector, const tusk::dpdk::FrameSpec& spec, std::size_t size) {
  tusk::dpdk::TuskHeader header;
  header.stream_id = 1;
  header.seq = 7;
  header.payload_length = static_cast<std::uint16_t>(tusk::dpdk::payload_length_for(spec, size));
  std::string bytes(size + 1, '\0');
  bytes[0] = static_cast<char>(selector);
  tusk::dpdk::write_headers(spec, header, reinterpret_cast<std::uint8_t*>(bytes.data() + 1));
  return bytes;
}

// An ICMP echo request to 192.168.101.11 with 8 bytes of data, checksums right.
std::string ping_frame() {
  using tusk::dpdk::wire::internet_checksum;
  using tusk::dpdk::wire::put16;
  using tusk::dpdk::wire::put32;
  std::vector<std::uint8_t> f(14 + 20 + 16, 0);
  put16(f.data() + 12, 0x0800);
  f[14] = 0x45;
  put16(f.data() + 16, 36);
  f[22] = 64;
  f[23] = 1;
  put32(f.data() + 26, 0xC0A86501);  // 192.168.101.1
  put32(f.data() + 30, 0xC0A8650B);  // 192.168.101.11
  put16(f.data() + 24, internet_checksum(f.data() + 14, 20));
  f[34] = 8;
  put16(f.data() + 36, internet_checksum(f.data() + 34, 16));
  return std::string(1, '\0') + std::string(f.begin(), f.end());
}

void write_dpdk_frames(const fs::path& dir) {
  tusk::dpdk::FrameSpec l2;
  l2.dst = {0x02, 0, 0, 0, 0, 2};
  l2.src = {0x02, 0, 0, 0, 0, 1};
  write(dir, "ethernet", test_frame(0, l2, 128));
  tusk::dpdk::FrameSpec routed = l2;
  routed.encapsulation = tusk::dpdk::Encapsulation::Ipv4Udp;
  routed.ip.src_address = 0xC0A8650B;
  routed.ip.dst_address = 0xC0A8660B;
  write(dir, "ipv4-udp", test_frame(1, routed, 128));
  routed.ip.dst_port = 4791;
  routed.tagged = true;
  routed.vlan = 100;
  write(dir, "ipv4-udp-tagged-4791", test_frame(3, routed, 200));
  tusk::dpdk::Ipv4Interface leaf = tusk::dpdk::parse_ipv4_interface("192.168.101.1/24");
  std::string arp(61, '\0');
  tusk::dpdk::write_arp_request(leaf, 0xC0A8650B, reinterpret_cast<std::uint8_t*>(arp.data() + 1));
  write(dir, "arp-request", arp);
  write(dir, "ping", ping_frame());
}

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
  // agent_plan: bare plans, one per engine, an RDMA one with senders, rails and a collective.
  write(root / "agent_plan", "dpdk", plan("dpdk").plan().SerializeAsString());
  write(root / "agent_plan", "rdma", plan("rdma").plan().SerializeAsString());
  Envelope rails = plan("rdma");
  auto& train = *rails.mutable_plan();
  auto* sender = train.add_senders();
  sender->set_agent_name("lab-c");
  sender->set_address("10.0.0.3");
  sender->add_rail_addresses("10.0.0.3");
  sender->add_rail_addresses("10.1.0.3");
  train.mutable_peers(0)->set_address("10.0.0.2");
  train.mutable_peers(0)->add_rail_addresses("10.0.0.2");
  train.mutable_peers(0)->add_rail_addresses("10.1.0.2");
  train.mutable_rdma()->set_rails(2);
  for (const char* address : {"10.0.0.1", "10.1.0.1"}) {
    auto* rail = train.mutable_rdma()->add_rail_endpoints();
    rail->set_device("rxe0");
    rail->set_address(address);
  }
  train.mutable_rdma()->set_data_check(true);
  train.mutable_rdma()->set_collective("all_reduce");
  train.mutable_rdma()->set_steps(10);
  train.mutable_rdma()->set_step_period_ms(100);
  train.mutable_rdma()->set_compute_ms(40);
  train.mutable_rdma()->set_peer_bytes_per_step(1 << 20);
  write(root / "agent_plan", "rdma-rails-collective", train.SerializeAsString());
  write_dpdk_frames(root / "dpdk_frames");
  return 0;
}
