// The ethtool ioctl reader against the running kernel: a veth pair in a network namespace of the
// test's own (root only; skipped otherwise), the loopback, and interfaces that do not exist.
#include "agent/rdma/counters/ethtool_stats.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <net/if.h>
#include <sched.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>
#include <string>

namespace tusk::rdma {
namespace {

std::string error_of(const std::string& interface) {
  try {
    EthtoolStatsReader reader(interface);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

bool run(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

// A network namespace made for one test and deleted after it.
class OwnNetns {
 public:
  OwnNetns() : name_("tusk-ethtool-" + std::to_string(::getpid())) {
    run("ip netns del " + name_);  // left over by a killed run
    created_ = run("ip netns add " + name_);
  }
  ~OwnNetns() {
    if (created_) run("ip netns del " + name_);
  }
  OwnNetns(const OwnNetns&) = delete;
  OwnNetns& operator=(const OwnNetns&) = delete;

  bool created() const { return created_; }
  const std::string& name() const { return name_; }

 private:
  std::string name_;
  bool created_ = false;
};

// This thread inside a namespace until destroyed, then back where it was.
class InsideNetns {
 public:
  explicit InsideNetns(const std::string& name)
      : home_(::open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC)),
        target_(::open(("/run/netns/" + name).c_str(), O_RDONLY | O_CLOEXEC)) {
    entered_ = home_ >= 0 && target_ >= 0 && ::setns(target_, CLONE_NEWNET) == 0;
  }
  ~InsideNetns() {
    if (entered_ && ::setns(home_, CLONE_NEWNET) != 0) std::abort();  // the rest of the suite would run elsewhere
    if (target_ >= 0) ::close(target_);
    if (home_ >= 0) ::close(home_);
  }
  InsideNetns(const InsideNetns&) = delete;
  InsideNetns& operator=(const InsideNetns&) = delete;

  bool entered() const { return entered_; }

 private:
  int home_;
  int target_;
  bool entered_ = false;
};

TEST(EthtoolStats, UnknownInterfaceNamesTheInterfaceTheIoctlAndErrno) {
  const std::string error = error_of("tusk-nosuch0");
  EXPECT_NE(error.find("'tusk-nosuch0'"), std::string::npos) << error;
  EXPECT_NE(error.find("ETHTOOL_GSSET_INFO"), std::string::npos) << error;
  EXPECT_NE(error.find("No such device"), std::string::npos) << error;
}

TEST(EthtoolStats, NamesThatCannotBeInterfacesAreRefusedBeforeAnyIoctl) {
  EXPECT_NE(error_of("").find("not a network interface name"), std::string::npos);
  EXPECT_NE(error_of("a-name-of-16-chr").find("not a network interface name"), std::string::npos);
  EXPECT_NE(error_of("../eth0").find("not a network interface name"), std::string::npos);
}

TEST(EthtoolStats, TheLoopbackHasNoStatisticsAndThatIsNoError) {
  EthtoolStatsReader reader("lo");
  EXPECT_TRUE(reader.names().empty());
  EXPECT_TRUE(reader.read().empty());
}

TEST(EthtoolStats, VethPairInItsOwnNamespace) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root: makes a network namespace and a veth pair";
  OwnNetns netns;
  if (!netns.created()) GTEST_SKIP() << "ip netns add failed: no iproute2 or no CAP_SYS_ADMIN here";
  ASSERT_TRUE(run("ip -n " + netns.name() + " link add tusk-veth0 type veth peer name tusk-veth1"))
      << "no veth support in this kernel";

  std::unique_ptr<EthtoolStatsReader> reader;
  unsigned peer_index = 0;
  {
    InsideNetns inside(netns.name());
    ASSERT_TRUE(inside.entered());
    // The socket stays in the namespace it was made in, whichever namespace its thread moves to.
    reader = std::make_unique<EthtoolStatsReader>("tusk-veth0");
    peer_index = ::if_nametoindex("tusk-veth1");
  }
  ASSERT_NE(peer_index, 0u);
  // veth: peer_ifindex, then per-queue XDP counters.
  ASSERT_FALSE(reader->names().empty());
  EXPECT_EQ(reader->names().front(), "peer_ifindex");
  const auto values = reader->read();
  EXPECT_EQ(values.size(), reader->names().size());
  EXPECT_EQ(values.at("peer_ifindex"), peer_index);
  EXPECT_TRUE(values.contains("rx_queue_0_xdp_packets"));
  EXPECT_EQ(values.at("rx_queue_0_xdp_packets"), 0u);

  // An interface of that namespace is unknown outside it.
  const std::string error = error_of("tusk-veth0");
  EXPECT_NE(error.find("'tusk-veth0'"), std::string::npos) << error;

  // Once the netdev is gone, a read says so, naming it.
  ASSERT_TRUE(run("ip -n " + netns.name() + " link del tusk-veth0"));
  try {
    reader->read();
    ADD_FAILURE() << "read of a deleted netdev succeeded";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("'tusk-veth0'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tusk::rdma
