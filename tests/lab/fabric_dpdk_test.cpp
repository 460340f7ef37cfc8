// A DPDK port on a routed leaf of the fabric lab (tests/lab/fabric-lab.sh), as an agent's port is
// on a real fabric: no kernel stack owns it, so it answers ARP and ping for its own address and
// resolves its gateway's MAC itself. Checked with the leaf's own kernel: its ARP table and ping,
// from the same leaf and across the spines from the other. Needs root; skips otherwise.
#include <gtest/gtest.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "agent/dpdk/eal.hpp"
#include "agent/dpdk/neighbour_resolver.hpp"
#include "agent/dpdk/port.hpp"
#include "agent/engine.hpp"
#include "tests/support/fabric_lab.hpp"

namespace tusk::dpdk {
namespace {

using testing::FabricLab;

class FabricDpdk : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (geteuid() != 0) return;
    const std::string id = "d" + std::to_string(getpid() % 100000);
    lab_ = new FabricLab(id, "--spines 2 --leaves 2 --hosts 1");
    EalOptions options;
    std::string port = lab_->run("port l1h1");
    port.erase(port.find_last_not_of(" \n") + 1);
    options.vdevs = {"net_af_packet0,iface=" + port};
    options.file_prefix = id;
    eal_ = new Eal(options);
    port_ = new Port("net_af_packet0", {});
  }
  static void TearDownTestSuite() {
    delete port_;
    delete eal_;
    delete lab_;
  }
  void SetUp() override {
    if (!lab_) GTEST_SKIP() << "needs root to make the lab's namespaces";
  }

  static Ipv4Interface interface(const std::string& text) {
    Ipv4Interface parsed = parse_ipv4_interface(text);
    parsed.mac = port_->mac();
    return parsed;
  }

  // Answers ARP and ping on the port until the returned guard is destroyed, as the engine's RX
  // loop does during a test.
  class Answering {
   public:
    explicit Answering(const Ipv4Interface& us)
        : thread_([this, us] {
            std::array<rte_mbuf*, 32> burst{};
            while (!done_) {
              const std::uint16_t got = rte_eth_rx_burst(port_->id(), 0, burst.data(), burst.size());
              answer_frames_for_us(*port_, us, burst.data(), got);
              for (std::uint16_t i = 0; i < got; ++i) rte_pktmbuf_free(burst[i]);
              if (got == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
            }
          }) {}
    ~Answering() {
      done_ = true;
      thread_.join();
    }

   private:
    std::atomic<bool> done_{false};
    std::thread thread_;
  };

  static int ping_from(const std::string& switch_name, const char* address) {
    return std::system(
        ("ip netns exec " + lab_->ns(switch_name) + " ping -c 3 -i 0.2 -W 1 -q " + address + " >/dev/null 2>&1")
            .c_str());
  }

  static inline FabricLab* lab_ = nullptr;
  static inline Eal* eal_ = nullptr;
  static inline Port* port_ = nullptr;
};

TEST_F(FabricDpdk, ThePortResolvesItsGatewayAndTheLeafLearnsThePort) {
  const Ipv4Interface us = interface("192.168.101.11/24,gw=192.168.101.1");
  const MacAddress gateway = resolve_mac(*port_, us, us.gateway);
  EXPECT_EQ(gateway, (MacAddress{0x02, 0x74, 0x6b, 0x01, 0x00, 0x01})) << "the leaf's host bridge, as topology says";
  // Answering the port's question taught the leaf where 192.168.101.11 is.
  const int learned = std::system(
      ("ip netns exec " + lab_->ns("l1") + " ip neigh show 192.168.101.11 | grep -q 02:74:6b:01:01:10").c_str());
  EXPECT_EQ(learned, 0) << "the leaf has no neighbour entry for the port";
}

TEST_F(FabricDpdk, TheLeafAndTheFarLeafCanPingThePort) {
  const Ipv4Interface us = interface("192.168.101.11/24,gw=192.168.101.1");
  Answering answering(us);
  EXPECT_EQ(ping_from("l1", "192.168.101.11"), 0) << "from the port's own leaf";
  EXPECT_EQ(ping_from("l2", "192.168.101.11"), 0) << "from the far leaf, across the spines";
  EXPECT_NE(ping_from("l1", "192.168.101.12"), 0) << "the port answers for its own address only";
}

TEST_F(FabricDpdk, AWrongGatewayIsNamedNotSilentLoss) {
  const Ipv4Interface wrong = interface("192.168.101.11/24,gw=192.168.101.99");
  try {
    resolve_mac(*port_, wrong, wrong.gateway, std::chrono::milliseconds(600));
    ADD_FAILURE() << "resolved a gateway nobody has";
  } catch (const EngineError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("net_af_packet0 (192.168.101.11/24 gw 192.168.101.99): no ARP reply from 192.168.101.99"),
              std::string::npos)
        << what;
  }
}

}  // namespace
}  // namespace tusk::dpdk
