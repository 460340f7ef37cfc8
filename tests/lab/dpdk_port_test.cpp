// Real DPDK ports in the lab: one process opens both host ports of tests/lab/netns-lab.sh (two
// veth links through a bridge namespace) with net_af_packet, sends Tusk frames with PRBS-31
// payloads on one and checks every frame and bit on the other, with the link clean and then
// impaired in the kernel (loss, one-bit corruption, duplication) and reordered by the lab's relay.
// Needs root; skips otherwise.
#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "agent/dpdk/eal.hpp"
#include "agent/dpdk/frame_format.hpp"
#include "agent/dpdk/port.hpp"
#include "agent/dpdk/prbs.hpp"
#include "agent/dpdk/stream_tracker.hpp"

namespace tusk::dpdk {
namespace {

using Clock = std::chrono::steady_clock;

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
    return "TUSK_LAB_ID=" + id_ + " TUSK_LAB_RELAY=" TUSK_LAB_RELAY_BIN " bash " TUSK_SOURCE_DIR
           "/tests/lab/netns-lab.sh " + arguments;
  }
  std::string id_;
};

struct LinkResult {
  std::uint64_t sent = 0;
  StreamTracker::Counts counts;
  std::uint64_t errored_payloads = 0;  // frames whose payload had bit errors
  std::uint64_t unparsed = 0;          // our EtherType, but headers hit (bad CRC, magic or length)
  std::uint64_t foreign = 0;           // another EtherType: not test traffic
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
  static LinkResult send_and_check(std::uint16_t stream_id, std::uint64_t frames, double frames_per_second = 0) {
    FrameSpec spec;
    spec.src = sender_->mac();
    spec.dst = receiver_->mac();
    constexpr std::size_t kFrameSize = 1000;
    const std::size_t payload = payload_length_for(spec, kFrameSize);
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
          auto* frame = reinterpret_cast<std::uint8_t*>(rte_pktmbuf_append(burst[i], kFrameSize));
          TuskHeader header;
          header.stream_id = stream_id;
          header.seq = result.sent + i;
          header.prbs_state = prbs.state();
          header.payload_length = static_cast<std::uint16_t>(payload);
          write_headers(spec, header, frame);
          prbs.fill(frame + header_length(spec), payload);
        }
        std::uint16_t done = 0;
        while (done < count) done += rte_eth_tx_burst(sender_->id(), 0, burst + done, static_cast<std::uint16_t>(count - done));
        result.sent += count;
        if (result.sent == frames) last_arrival = Clock::now();
      }
      rte_mbuf* arrivals[32];
      const std::uint16_t got = rte_eth_rx_burst(receiver_->id(), 0, arrivals, 32);
      if (got > 0) last_arrival = Clock::now();
      for (std::uint16_t i = 0; i < got; ++i) {
        ParsedFrame parsed;
        const auto* data = rte_pktmbuf_mtod(arrivals[i], const std::uint8_t*);
        const bool ours = rte_pktmbuf_pkt_len(arrivals[i]) >= kEthernetHeaderLength &&
                          (data[12] << 8 | data[13]) == kDefaultEtherType;
        if (!ours) {
          ++result.foreign;
        } else if (parse_headers(data, rte_pktmbuf_pkt_len(arrivals[i]), parsed) != ParseStatus::Ok) {
          ++result.unparsed;
        } else if (parsed.header.stream_id == stream_id) {
          const auto errors =
              count_bit_errors(Pattern::Prbs31, false, parsed.header.prbs_state, parsed.payload, parsed.payload_length);
          result.errored_payloads += errors > 0;
          tracker.on_frame(parsed.header.seq, errors > 0, errors);
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

}  // namespace
}  // namespace tusk::dpdk
