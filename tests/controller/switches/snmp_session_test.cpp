// SNMP against a real agent: Debian's snmpd on loopback, serving this host's own IF-MIB and, by a
// pass_persist script, a table that never ends; and a socket that never answers. A switch can
// cost a run its timeouts and its row limits, never more.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <fmt/format.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>

#include "controller/switches/snmp_session.hpp"
#include "controller/switches/switch_poller.hpp"
#include "controller/switches/switch_reader.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

const char* const kSnmpd = "/usr/sbin/snmpd";
const char* const kEndless = ".1.3.6.1.4.1.99999.1";

// A UDP socket bound to a free port on loopback, handed to snmpd by systemd's socket activation
// (Debian builds net-snmp --with-systemd). Picking a free port, closing it and letting snmpd bind it
// raced with every other process's ephemeral ports: a parallel test's client socket took one once,
// snmpd exited and this suite waited 35 s for it. A socket held from bind to exec cannot be taken.
struct HeldUdpSocket {
  int fd = -1;
  std::uint16_t port = 0;
};

HeldUdpSocket bind_udp_on_loopback() {
  HeldUdpSocket held;
  held.fd = socket(AF_INET, SOCK_DGRAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (held.fd < 0 || bind(held.fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return held;
  socklen_t length = sizeof address;
  getsockname(held.fd, reinterpret_cast<sockaddr*>(&address), &length);
  held.port = ntohs(address.sin_port);
  return held;
}

// A UDP socket on loopback that takes every request and answers none.
class SilentAgent {
 public:
  SilentAgent() : fd_(socket(AF_INET, SOCK_DGRAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address);
    socklen_t length = sizeof address;
    getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~SilentAgent() { close(fd_); }
  std::uint16_t port() const { return port_; }

 private:
  int fd_;
  std::uint16_t port_ = 0;
};

class RealSnmpd : public ::testing::Test {
 protected:
  void SetUp() override {
    if (access(kSnmpd, X_OK) != 0) GTEST_SKIP() << kSnmpd << " is not installed (scripts/install-deps.sh)";
    dir_ = std::filesystem::temp_directory_path() / fmt::format("tusk-snmpd-{}", getpid());
    std::filesystem::create_directories(dir_);
    const auto script = dir_ / "endless.sh";
    std::ofstream(script) << "#!/bin/sh\nbase=" << kEndless << "\n"
                          << R"(while read -r cmd; do
  case "$cmd" in
    PING) echo PONG ;;
    get) read -r oid; echo NONE ;;
    getnext) read -r oid
      case "$oid" in "$base".*) n=$(( ${oid#"$base".} + 1 )) ;; *) n=1 ;; esac
      printf '%s.%s\ninteger\n%s\n' "$base" "$n" "$n" ;;
    set) read -r oid; read -r value; echo not-writable ;;
    *) exit 0 ;;
  esac
done
)";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    std::ofstream(dir_ / "snmpd.conf") << "rocommunity tusk-test 127.0.0.1\n"
                                       << "createUser tusk SHA tusk-test-auth AES tusk-test-priv\n"
                                       << "rouser tusk priv\n"
                                       << "pass_persist " << kEndless << " " << script.string() << "\n";
    const HeldUdpSocket listening = bind_udp_on_loopback();
    ASSERT_NE(listening.port, 0) << "no UDP socket on loopback: " << std::strerror(errno);
    port_ = listening.port;
    pid_ = fork();
    if (pid_ == 0) {
      constexpr int kFirstListenFd = 3;  // SD_LISTEN_FDS_START
      if (dup2(listening.fd, kFirstListenFd) < 0) _exit(126);
      setenv("LISTEN_FDS", "1", 1);
      setenv("LISTEN_PID", std::to_string(getpid()).c_str(), 1);
      setenv("SNMP_PERSISTENT_DIR", dir_.c_str(), 1);
      const std::string config = (dir_ / "snmpd.conf").string();
      const std::string listen = fmt::format("udp:127.0.0.1:{}", port_);
      execl(kSnmpd, kSnmpd, "-f", "-Ln", "-C", "-c", config.c_str(), "-I", "-smux,mteTrigger,mteTriggerConf",
            listen.c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    close(listening.fd);
    // Ready when it answers.
    for (int i = 0; i < 100; ++i) {
      int status = 0;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        FAIL() << "snmpd on port " << port_ << " exited before it answered (status " << status << ")";
      }
      try {
        SnmpSession session(target(std::chrono::milliseconds(100)));
        if (!session.get({parse_oid("1.3.6.1.2.1.1.3.0")}).empty()) return;
      } catch (const SnmpError&) {
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    FAIL() << "snmpd did not answer on port " << port_;
  }

  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  SnmpTarget target(std::chrono::milliseconds timeout = std::chrono::milliseconds(1000)) const {
    SnmpTarget t;
    t.device = "lo-switch";
    t.address = "127.0.0.1";
    t.port = port_;
    t.credential.version = SnmpVersion::V2c;
    t.credential.community = "tusk-test";
    t.timeout = timeout;
    return t;
  }

  std::filesystem::path dir_;
  std::uint16_t port_ = 0;
  pid_t pid_ = -1;
};

TEST_F(RealSnmpd, ReadsThisHostsLoopbackPortCountersAndSaysWhichPortsItLacks) {
  SwitchQuery query;
  query.target = target();
  query.ports = {"lo", "swp99"};
  query.lldp = true;  // no LLDP agent: an empty table, not an error
  const SwitchReading reading = read_switch(query);
  ASSERT_TRUE(reading.ok()) << reading.error;
  ASSERT_EQ(reading.ports.count("lo"), 1u);
  EXPECT_TRUE(reading.ports.at("lo").wide);
  EXPECT_EQ(reading.ports.at("lo").oper_up, std::optional<bool>(true));
  EXPECT_GT(reading.ports.at("lo").in_octets, 0u);  // this very conversation crossed it
  EXPECT_EQ(reading.missing_ports, (std::vector<std::string>{"swp99"}));
  EXPECT_TRUE(reading.lldp_read);
  EXPECT_TRUE(reading.lldp.empty());
}

TEST_F(RealSnmpd, EachPortsAddressesAreThisHostsOwnWithoutLoopback) {
  std::map<std::string, std::set<std::string>> expected;  // what the kernel says, by interface
  ifaddrs* list = nullptr;
  ASSERT_EQ(getifaddrs(&list), 0);
  for (const ifaddrs* at = list; at; at = at->ifa_next) {
    if (!at->ifa_addr || at->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN] = {};
    inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(at->ifa_addr)->sin_addr, text, sizeof text);
    if (std::string_view(text).starts_with("127.")) continue;
    expected[at->ifa_name].insert(text);
  }
  freeifaddrs(list);
  SwitchQuery query;
  query.target = target();
  query.addresses = true;
  const SwitchReading reading = read_switch(query);
  ASSERT_TRUE(reading.ok()) << reading.error;
  std::map<std::string, std::set<std::string>> found;
  for (const auto& [port, addresses] : reading.port_addresses) found[port].insert(addresses.begin(), addresses.end());
  EXPECT_EQ(found, expected);
  EXPECT_FALSE(reading.port_addresses.contains("lo"));
}

TEST_F(RealSnmpd, VersionThreeWithAuthAndPrivacyReadsAndAWrongPassphraseIsAnError) {
  SwitchQuery query;
  query.target = target();
  query.target.credential.version = SnmpVersion::V3;
  query.target.credential.user = "tusk";
  query.target.credential.auth_protocol = "sha";
  query.target.credential.auth_passphrase = "tusk-test-auth";
  query.target.credential.privacy_protocol = "aes";
  query.target.credential.privacy_passphrase = "tusk-test-priv";
  query.ports = {"lo"};
  const SwitchReading reading = read_switch(query);
  ASSERT_TRUE(reading.ok()) << reading.error;
  EXPECT_EQ(reading.ports.count("lo"), 1u);

  query.target.credential.auth_passphrase = "not-the-passphrase";
  query.target.timeout = std::chrono::milliseconds(300);
  const SwitchReading refused = read_switch(query);
  EXPECT_FALSE(refused.ok());
  EXPECT_THAT(refused.error, HasSubstr("switch lo-switch (127.0.0.1)"));
}

// Two SNMPv3 sessions as the same user to one engine (switches read in parallel; a lab's switches
// share an engine's keys the same way): closing one must leave the other its keys. Before, the
// close took the user's keys from the library's process-wide list and the other session's next
// read failed "USM unknown security name" (a FabricSwitches lab run needed a retry for it).
TEST_F(RealSnmpd, ClosingOneVersionThreeSessionLeavesAnotherOfTheSameUserItsKeys) {
  SnmpTarget v3 = target();
  v3.credential.version = SnmpVersion::V3;
  v3.credential.user = "tusk";
  v3.credential.auth_protocol = "sha";
  v3.credential.auth_passphrase = "tusk-test-auth";
  v3.credential.privacy_protocol = "aes";
  v3.credential.privacy_passphrase = "tusk-test-priv";
  SnmpSession staying(v3);
  ASSERT_FALSE(staying.get({parse_oid("1.3.6.1.2.1.1.3.0")}).empty());
  {
    SnmpSession closing(v3);
    ASSERT_FALSE(closing.get({parse_oid("1.3.6.1.2.1.1.3.0")}).empty());
  }
  EXPECT_FALSE(staying.get({parse_oid("1.3.6.1.2.1.1.3.0")}).empty());
}

TEST_F(RealSnmpd, AnEndlessTableStopsAtTheRowLimitAndAtTheDeadline) {
  SnmpSession session(target());
  const auto far = Clock::now() + std::chrono::seconds(30);
  const SnmpWalk limited = session.walk(parse_oid(kEndless), 100, far);
  EXPECT_EQ(limited.values.size(), 100u);
  EXPECT_TRUE(limited.truncated);
  EXPECT_THAT(limited.why_truncated, HasSubstr("more than 100 values"));

  const auto began = Clock::now();
  const SnmpWalk timed = session.walk(parse_oid(kEndless), 100'000'000, began + std::chrono::milliseconds(300));
  const auto took = Clock::now() - began;
  EXPECT_TRUE(timed.truncated);
  EXPECT_THAT(timed.why_truncated, HasSubstr("out of time"));
  EXPECT_LT(took, std::chrono::milliseconds(300) + std::chrono::seconds(2));  // one request past it at most
}

TEST(SnmpSession, ASwitchThatNeverAnswersCostsItsTimeoutsOnlyAndAllAreReadInParallel) {
  SilentAgent silent;
  SwitchQuery query;
  query.target.device = "dead";
  query.target.address = "127.0.0.1";
  query.target.port = silent.port();
  query.target.credential.community = "x";
  query.target.timeout = std::chrono::milliseconds(200);
  query.target.retries = 1;
  query.ports = {"swp1"};
  const std::vector<SwitchQuery> queries(8, query);
  const auto began = Clock::now();
  const auto readings = read_switches(queries);
  const auto took = Clock::now() - began;
  ASSERT_EQ(readings.size(), 8u);
  for (const auto& reading : readings) {
    EXPECT_FALSE(reading.ok());
    EXPECT_THAT(reading.error, HasSubstr("switch dead (127.0.0.1): no answer"));
  }
  // 8 switches of 2 × 200 ms each, read at once: well under their 3.2 s one after another.
  EXPECT_LT(took, std::chrono::milliseconds(1600));
}

TEST(SnmpOid, ParsesAndPrintsAndKnowsItsSubtree) {
  const SnmpOid oid = parse_oid("1.3.6.1.2.1.31.1.1.1.1");
  EXPECT_EQ(oid_text(oid), "1.3.6.1.2.1.31.1.1.1.1");
  EXPECT_EQ(parse_oid(".1.3.6"), (SnmpOid{1, 3, 6}));
  EXPECT_TRUE(oid_under(parse_oid("1.3.6.1.5"), parse_oid("1.3.6.1")));
  EXPECT_FALSE(oid_under(parse_oid("1.3.6.1"), parse_oid("1.3.6.1")));
  EXPECT_FALSE(oid_under(parse_oid("1.3.6.2.5"), parse_oid("1.3.6.1")));
  EXPECT_THROW(parse_oid("1.3.x"), std::invalid_argument);
}

}  // namespace
}  // namespace tusk
