// Real DPDK ports in the lab: one process opens both host ports of tests/lab/netns-lab.sh (two
// veth links through a bridge namespace) with net_af_packet, sends Tusk frames with PRBS-31
// payloads on one and checks every frame and bit on the other, with the link clean and then
// impaired in the kernel (loss, one-bit corruption, duplication) and reordered by the lab's relay;
// and VLAN-tagged and IMIX-sized frames through the lab's bridge. Needs root; skips otherwise.
#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/dpdk/eal.hpp"
#include "agent/dpdk/frame_format.hpp"
#include "agent/dpdk/frame_size_cycle.hpp"
#include "agent/dpdk/idle_port_listener.hpp"
#include "agent/dpdk/port.hpp"
#include "agent/dpdk/stream_tracker.hpp"
#include "agent/lldp/lldp_frame.hpp"
#include "agent/payload/prbs.hpp"
#include "tests/support/build_paths.hpp"

namespace tusk::dpdk {
namespace {

using Clock = std::chrono::steady_clock;
using payload::count_bit_errors;
using payload::default_state;
using payload::Pattern;
using payload::PrbsGenerator;

class Lab {
 public:
  explicit Lab(std::string id) : id_(std::move(id)) { run("up --switch >/dev/null"); }
  ~Lab() { std::system(command("down").c_str()); }
  void run(const std::string& arguments) const {
    if (std::system(command(arguments).c_str()) != 0) throw std::runtime_error("lab failed: " + arguments);
  }
  std::string port(const char* host) const { return id_ + "-" + host; }

 private:
  std::string command(const std::string& arguments) const {
    return "TUSK_LAB_ID=" + id_ + " TUSK_LAB_RELAY=" + tusk::build_paths::lab_relay_bin() + " bash " +
           tusk::build_paths::source_dir() + "/tests/lab/netns-lab.sh " + arguments;
  }
  std::string id_;
};

struct LinkResult {
  std::uint64_t sent = 0;
  StreamTracker::Counts counts;
  std::uint64_t errored_payloads = 0;  // frames whose payload had bit errors
  std::uint64_t unparsed = 0;          // our EtherType, but headers hit (bad CRC, magic or length)
  std::uint64_t foreign = 0;           // another EtherType: not test traffic
  std::uint64_t rx_bytes = 0;          // of this stream's frames, as on the wire (a stripped tag counted)
  std::uint64_t tag_in_frame = 0;      // this stream's frames whose 802.1Q tag is in the frame bytes
  std::uint64_t tag_in_mbuf = 0;       // ... whose tag the driver stripped into mbuf->vlan_tci
  std::uint64_t vlan_flagged = 0;      // ... that carry RTE_MBUF_F_RX_VLAN (tag seen by the driver)
  std::uint64_t expected_tag = 0;      // ... tagged with exactly the VLAN id and PCP sent
};

// What the sender puts on the wire besides the payload pattern.
struct Shape {
  bool tagged = false;
  std::uint16_t vlan = 0;
  std::uint8_t pcp = 0;
  std::vector<std::uint32_t> sizes{1000};  // cycled frame by frame
};

class DpdkLab : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    const std::string id = "tp" + std::to_string(getpid() % 100000);
    lab_ = new Lab(id);
    EalOptions options;
    options.vdevs = {"net_af_packet0,iface=" + lab_->port("a"), "net_af_packet1,iface=" + lab_->port("b")};
    options.file_prefix = id;
    eal_ = new Eal(options);
    sender_ = new Port("net_af_packet0", {});
    receiver_ = new Port("net_af_packet1", {});
  }
  static void TearDownTestSuite() {
    delete receiver_;
    delete sender_;
    delete eal_;
    delete lab_;
  }
  void SetUp() override {
    if (!lab_) GTEST_SKIP() << "needs root to make the lab's links";
  }
  void TearDown() override {
    if (lab_) lab_->run("clear b");
  }

  // Sends `frames` frames of stream `stream_id` at a pace the receiver keeps up with (at most
  // `frames_per_second` when that is not 0), and checks whatever arrives until the link has been
  // quiet for 300 ms.
  static LinkResult send_and_check(std::uint16_t stream_id, std::uint64_t frames, double frames_per_second = 0,
                                   const Shape& shape = {}) {
    FrameSpec spec;
    spec.src = sender_->mac();
    spec.dst = receiver_->mac();
    spec.tagged = shape.tagged;
    spec.vlan = shape.vlan;
    spec.pcp = shape.pcp;
    FrameSizeCycle sizes(spec, 0, shape.sizes);
    PrbsGenerator prbs(Pattern::Prbs31, false, default_state(Pattern::Prbs31));
    StreamTracker tracker;
    LinkResult result;
    const auto begin = Clock::now();
    auto last_arrival = begin;
    while (result.sent < frames || Clock::now() - last_arrival < std::chrono::milliseconds(300)) {
      const bool due = frames_per_second == 0 ||
                       result.sent < std::chrono::duration<double>(Clock::now() - begin).count() * frames_per_second;
      if (result.sent < frames && due) {
        rte_mbuf* burst[16];
        const unsigned count = static_cast<unsigned>(std::min<std::uint64_t>(16, frames - result.sent));
        if (rte_pktmbuf_alloc_bulk(sender_->mempool(), burst, count) != 0) throw std::runtime_error("mbufs exhausted");
        for (unsigned i = 0; i < count; ++i) {
          const FrameSize& size = sizes.next();
          auto* frame = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(burst[i], size.frame));
          TuskHeader header;
          header.stream_id = stream_id;
          header.seq = result.sent + i;
          header.prbs_state = prbs.state();
          header.payload_length = size.payload;
          write_headers(spec, header, frame);
          prbs.fill(frame + header_length(spec), size.payload);
        }
        std::uint16_t done = 0;
        while (done < count)
          done += rte_eth_tx_burst(sender_->id(), 0, burst + done, static_cast<std::uint16_t>(count - done));
        result.sent += count;
        if (result.sent == frames) last_arrival = Clock::now();
      }
      rte_mbuf* arrivals[32];
      const std::uint16_t got = rte_eth_rx_burst(receiver_->id(), 0, arrivals, 32);
      if (got > 0) last_arrival = Clock::now();
      for (std::uint16_t i = 0; i < got; ++i) {
        ParsedFrame parsed;
        const rte_mbuf* mbuf = arrivals[i];
        const auto* data = rte_pktmbuf_mtod(mbuf, const std::uint8_t*);
        const std::size_t length = rte_pktmbuf_pkt_len(mbuf);
        // Our EtherType (after a tag), whatever the rest says: a hit on the magic is not someone else's frame.
        const std::size_t type_at = length >= 16 && (data[12] << 8 | data[13]) == kVlanTpid ? 16 : 12;
        const bool ours = length >= type_at + 2 && (data[type_at] << 8 | data[type_at + 1]) == kDefaultEtherType;
        const ParseStatus status = parse_headers(data, length, parsed);
        if (!ours) {
          ++result.foreign;
        } else if (status != ParseStatus::Ok) {
          ++result.unparsed;
        } else if (parsed.header.stream_id == stream_id) {
          const auto errors =
              count_bit_errors(Pattern::Prbs31, false, parsed.header.prbs_state, parsed.payload, parsed.payload_length);
          result.errored_payloads += errors > 0;
          tracker.on_frame(parsed.header.seq, errors > 0, errors);
          // The tag as the engine reads it: in the frame, or stripped into the mbuf by the driver.
          const bool stripped = mbuf->ol_flags & RTE_MBUF_F_RX_VLAN_STRIPPED;
          const ArrivedTag tag = arrived_tag(parsed, stripped, mbuf->vlan_tci);
          result.tag_in_frame += parsed.tagged;
          result.tag_in_mbuf += stripped;
          result.vlan_flagged += (mbuf->ol_flags & RTE_MBUF_F_RX_VLAN) != 0;
          result.expected_tag += tag.tagged && check_tag(spec, tag) == TagCheck::AsSent;
          result.rx_bytes += rte_pktmbuf_pkt_len(mbuf) + (stripped ? kVlanTagLength : 0);
        }
        rte_pktmbuf_free(arrivals[i]);
      }
      if (got == 0) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    result.counts = tracker.counts();
    return result;
  }

  static Lab* lab_;
  static Eal* eal_;
  static Port* sender_;
  static Port* receiver_;
};

Lab* DpdkLab::lab_ = nullptr;
Eal* DpdkLab::eal_ = nullptr;
Port* DpdkLab::sender_ = nullptr;
Port* DpdkLab::receiver_ = nullptr;

TEST_F(DpdkLab, CleanLinkCarriesOneHundredThousandFramesWithoutABitError) {
  EXPECT_TRUE(sender_->link().up);
  const auto result = send_and_check(1, 100'000);
  EXPECT_EQ(result.counts.received, 100'000u);
  EXPECT_EQ(result.counts.lost, 0u);
  EXPECT_EQ(result.counts.bit_errors, 0u);
  EXPECT_EQ(result.counts.duplicates, 0u);
  EXPECT_EQ(result.unparsed, 0u);
  EXPECT_FALSE(receiver_->xstats().empty());
}

TEST_F(DpdkLab, OnePercentOneBitCorruptionIsCountedAsOneBitErrorPerErroredFrame) {
  lab_->run("impair b corrupt=1");
  const auto result = send_and_check(2, 20'000);
  // 1 % of 20,000 = 200 frames hit, within ±25 %: 150..250. A hit on the headers shows as unparsed.
  const std::uint64_t hit = result.errored_payloads + result.unparsed;
  EXPECT_GE(hit, 150u);
  EXPECT_LE(hit, 250u);
  EXPECT_EQ(result.counts.bit_errors, result.errored_payloads) << "one flipped bit per corrupted frame";
  EXPECT_EQ(result.counts.received + result.unparsed, 20'000u) << "corruption loses no frame";
}

TEST_F(DpdkLab, TwoPercentLossIsCountedAsLostFramesNotBitErrors) {
  lab_->run("impair b loss=2");
  const auto result = send_and_check(3, 20'000);
  // 2 % of 20,000 = 400 lost, within ±25 %: 300..500.
  const std::uint64_t lost = result.sent - result.counts.received;
  EXPECT_GE(lost, 300u);
  EXPECT_LE(lost, 500u);
  EXPECT_EQ(result.counts.bit_errors, 0u);
  EXPECT_EQ(result.counts.errored_frames, 0u);
  EXPECT_LE(result.counts.lost, lost) << "gap-counted loss never exceeds what was not received";
}

TEST_F(DpdkLab, DuplicatesAreCountedAsDuplicatesNotLostOrErrored) {
  lab_->run("impair b duplicate=2");
  const auto result = send_and_check(4, 20'000);
  EXPECT_EQ(result.counts.received, 20'000u);
  EXPECT_GE(result.counts.duplicates, 300u);
  EXPECT_LE(result.counts.duplicates, 500u);
  EXPECT_EQ(result.counts.lost, 0u);
  EXPECT_EQ(result.counts.errored_frames, 0u);
}

TEST_F(DpdkLab, ReorderedAndDuplicatedFramesAreCountedAsSuchNotLostOrErrored) {
  // 2 % held back behind 3 later frames by the lab's relay, and 1 % duplicated on the way out of
  // the switch. Paced, because the relay forwards in user space.
  lab_->run("reorder b 2 3");
  lab_->run("impair b duplicate=1");
  const auto result = send_and_check(5, 20'000, 5'000);
  EXPECT_EQ(result.counts.received, 20'000u);
  EXPECT_EQ(result.counts.lost, 0u);
  EXPECT_EQ(result.counts.too_late, 0u);
  EXPECT_EQ(result.counts.errored_frames, 0u);
  EXPECT_EQ(result.unparsed, 0u);
  // 2 % of 20,000 = 400 reordered, 1 % = 200 duplicated, each within ±25 %.
  EXPECT_GE(result.counts.reordered, 300u);
  EXPECT_LE(result.counts.reordered, 500u);
  EXPECT_GE(result.counts.duplicates, 150u);
  EXPECT_LE(result.counts.duplicates, 250u);
}

TEST_F(DpdkLab, VlanTaggedFramesCrossTheBridgeWithTheirTagAndNoError) {
  // A Linux bridge without vlan_filtering forwards tagged frames as they are. The receiving kernel
  // moves the tag out of the frame into packet metadata; DPDK's af_packet driver reads it from the
  // ring (TP_STATUS_VLAN_VALID) and, with VLAN stripping not asked for, puts it back in the frame.
  const auto result = send_and_check(6, 20'000, 0, {.tagged = true, .vlan = 100, .pcp = 5});
  EXPECT_EQ(result.counts.received, 20'000u);
  EXPECT_EQ(result.counts.lost, 0u);
  EXPECT_EQ(result.counts.bit_errors, 0u);
  EXPECT_EQ(result.unparsed, 0u);
  EXPECT_EQ(result.expected_tag, 20'000u) << "VLAN 100, PCP 5 on every frame";
  EXPECT_EQ(result.tag_in_frame + result.tag_in_mbuf, 20'000u);
  EXPECT_EQ(result.rx_bytes, 20'000u * 1000);
  std::cout << "tag in frame " << result.tag_in_frame << ", stripped into mbuf " << result.tag_in_mbuf
            << ", RTE_MBUF_F_RX_VLAN " << result.vlan_flagged << "\n";
}

TEST_F(DpdkLab, PriorityTaggedFramesKeepTheirPcp) {
  const auto result = send_and_check(7, 5'000, 0, {.tagged = true, .vlan = 0, .pcp = 3});
  EXPECT_EQ(result.counts.received, 5'000u);
  EXPECT_EQ(result.counts.bit_errors, 0u);
  EXPECT_EQ(result.expected_tag, 5'000u) << "VLAN 0, PCP 3 on every frame";
}

TEST_F(DpdkLab, ImixFramesArriveWholeInTheirMix) {
  const std::vector<std::uint32_t> imix{64, 64, 64, 64, 64, 64, 64, 576, 576, 576, 576, 1500};
  const auto result = send_and_check(8, 12'000, 0, {.sizes = imix});
  EXPECT_EQ(result.counts.received, 12'000u);
  EXPECT_EQ(result.counts.lost, 0u);
  EXPECT_EQ(result.counts.bit_errors, 0u);
  EXPECT_EQ(result.unparsed, 0u);
  EXPECT_EQ(result.rx_bytes, 1'000u * (7 * 64 + 4 * 576 + 1500)) << "1000 cycles of the 12-frame mix";
}

// One LLDPDU from the sender's port, addressed to the receiver (the lab's bridge keeps 802.1AB's
// link-local group addresses to itself, as a bridge must).
void send_lldp(Port& from, const Port& to, const std::string& system_name, std::uint16_t ttl_s) {
  LldpNeighbour self;
  self.chassis_id = "02:74:6b:00:00:01";
  self.chassis_id_subtype = 4;
  self.port_id = "swp7";
  self.port_id_subtype = 5;
  self.system_name = system_name;
  self.ttl_s = ttl_s;
  const std::vector<std::uint8_t> bytes = lldp::build_lldp_frame(self, from.mac(), to.mac());
  rte_mbuf* mbuf = rte_pktmbuf_alloc(from.mempool());
  ASSERT_NE(mbuf, nullptr);
  auto* frame = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(mbuf, static_cast<std::uint16_t>(bytes.size())));
  std::copy(bytes.begin(), bytes.end(), frame);
  ASSERT_EQ(rte_eth_tx_burst(from.id(), 0, &mbuf, 1), 1);
}

std::string heard_name(IdlePortListener& listener, const Port& port, std::chrono::milliseconds within) {
  const auto deadline = Clock::now() + within;
  while (Clock::now() < deadline) {
    if (const auto neighbour = listener.heard().neighbour(port.name())) return neighbour->system_name;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

TEST_F(DpdkLab, AnIdlePortHearsItsLldpNeighbourButNotWhileATestHoldsIt) {
  IdlePortListener listener({receiver_}, {});
  send_lldp(*sender_, *receiver_, "leaf7", 120);
  EXPECT_EQ(heard_name(listener, *receiver_, std::chrono::seconds(3)), "leaf7");
  {
    // A test's engine holds the port: the listener reads nothing until it lets go.
    IdlePortListener::Pause pause(listener);
    send_lldp(*sender_, *receiver_, "leaf8", 120);
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // five of the listener's polls
    EXPECT_EQ(listener.heard().neighbour(receiver_->name()).value_or(LldpNeighbour{}).system_name, "leaf7");
  }
  const auto deadline = Clock::now() + std::chrono::seconds(3);
  while (Clock::now() < deadline &&
         listener.heard().neighbour(receiver_->name()).value_or(LldpNeighbour{}).system_name != "leaf8") {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(listener.heard().neighbour(receiver_->name()).value_or(LldpNeighbour{}).system_name, "leaf8")
      << "read once let go";
  send_lldp(*sender_, *receiver_, "leaf8", 0);  // its shutdown LLDPDU
  const auto gone = Clock::now() + std::chrono::seconds(3);
  while (Clock::now() < gone && listener.heard().neighbour(receiver_->name())) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(listener.heard().neighbour(receiver_->name()).has_value());
}

}  // namespace
}  // namespace tusk::dpdk
