#include "agent/rdma/counters/port_counters.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "agent/engine.hpp"

namespace tusk::rdma {
namespace {

namespace fs = std::filesystem;

// A throw-away sysfs root: <root>/class/infiniband/<dev>/... as the kernel lays it out.
class PortCounterReaderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    root_ = fs::temp_directory_path() /
            ("tusk-port-counters-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    fs::remove_all(root_);
    fs::create_directories(root_ / "class" / "infiniband");
  }
  void TearDown() override { fs::remove_all(root_); }

  fs::path device_dir(const std::string& device) const { return root_ / "class" / "infiniband" / device; }
  fs::path port_dir(const std::string& device, int port) const {
    return device_dir(device) / "ports" / std::to_string(port);
  }

  static void write(const fs::path& path, const std::string& content) {
    fs::create_directories(path.parent_path());
    std::ofstream(path) << content;
  }
  static void write_counters(const fs::path& directory, const std::map<std::string, std::uint64_t>& values) {
    for (const auto& [name, value] : values) write(directory / name, std::to_string(value) + "\n");
  }

  // rxe: no PMA, so no counters/; per-port hw_counters with the 15 names of kernel 6.1 and lifespan.
  void make_rxe(const std::string& device = "rxe0") {
    write_counters(port_dir(device, 1) / "hw_counters", {{"sent_pkts", 1000},
                                                         {"rcvd_pkts", 900},
                                                         {"duplicate_request", 3},
                                                         {"out_of_seq_request", 4},
                                                         {"rcvd_rnr_err", 5},
                                                         {"send_rnr_err", 6},
                                                         {"rcvd_seq_err", 7},
                                                         {"ack_deferred", 8},
                                                         {"retry_exceeded_err", 9},
                                                         {"retry_rnr_exceeded_err", 10},
                                                         {"completer_retry_err", 11},
                                                         {"send_err", 12},
                                                         {"link_downed", 255},
                                                         {"rdma_sends", 14},
                                                         {"rdma_recvs", 15}});
    write(port_dir(device, 1) / "hw_counters" / "lifespan", "10\n");
  }

  // mlx5 on RoCE: IB port counters (extended), per-port and device-wide hw_counters.
  void make_mlx5(const std::string& device = "mlx5_0") {
    write_counters(port_dir(device, 1) / "counters", {{"port_xmit_data", 1000},
                                                      {"port_rcv_data", 2000},
                                                      {"port_xmit_packets", 30},
                                                      {"port_rcv_packets", 40},
                                                      {"symbol_error", 0},
                                                      {"link_downed", 1},
                                                      {"link_error_recovery", 0},
                                                      {"port_rcv_errors", 2},
                                                      {"port_xmit_discards", 0},
                                                      {"port_xmit_wait", 77},
                                                      {"unicast_xmit_packets", 30},
                                                      {"VL15_dropped", 0}});
    write_counters(port_dir(device, 1) / "hw_counters", {{"out_of_sequence", 1},
                                                         {"packet_seq_err", 2},
                                                         {"implied_nak_seq_err", 3},
                                                         {"local_ack_timeout_err", 4},
                                                         {"duplicate_request", 5},
                                                         {"rnr_nak_retry_err", 6},
                                                         {"np_cnp_sent", 7},
                                                         {"rp_cnp_handled", 8},
                                                         {"np_ecn_marked_roce_packets", 9},
                                                         {"rx_write_requests", 10},
                                                         {"roce_slow_restart", 11}});
    write(port_dir(device, 1) / "hw_counters" / "lifespan", "10\n");
    // The device-wide group repeats the port's names (other values) and may add its own.
    write_counters(device_dir(device) / "hw_counters",
                   {{"out_of_sequence", 100}, {"np_cnp_sent", 700}, {"rx_icrc_encapsulated", 12}});
    write(device_dir(device) / "hw_counters" / "lifespan", "10\n");
  }

  fs::path root_;
};

// ---- reading -----------------------------------------------------------------------------------

TEST_F(PortCounterReaderTest, RxeCountersComeUnderCanonicalNames) {
  make_rxe();
  PortCounterReader reader("rxe0", 1, root_);
  EXPECT_EQ(reader.file_count(), 15u);  // lifespan is not a counter
  const auto snapshot = reader.read();
  const CounterValues expected = {
      {"port_xmit_packets", 1000},
      {"port_rcv_packets", 900},
      {"duplicate_request", 3},
      {"out_of_sequence", 4},
      {"rnr_nak_retry_err", 5},
      {"send_rnr_err", 6},
      {"packet_seq_err", 7},
      {"ack_deferred", 8},
      {"req_transport_retries_exceeded", 9},
      {"req_rnr_retries_exceeded", 10},
      {"local_ack_timeout_err", 11},
      {"send_err", 12},
      {"link_downed", 255},
      {"rdma_sends", 14},
      {"rdma_recvs", 15},
  };
  EXPECT_EQ(snapshot.values, expected);
  // 255 is the 8-bit PMA maximum, but rxe's hw_counters/link_downed is a 64-bit counter.
  EXPECT_TRUE(snapshot.saturated.empty());
  EXPECT_TRUE(reader.notes().empty());
}

TEST_F(PortCounterReaderTest, Mlx5CountersAreScaledMappedAndKeepRawNames) {
  make_mlx5();
  PortCounterReader reader("mlx5_0", 1, root_);
  const auto snapshot = reader.read();
  const auto& v = snapshot.values;
  EXPECT_EQ(v.at("port_xmit_bytes"), 4000u);  // 1000 words of 4 bytes
  EXPECT_EQ(v.at("port_rcv_bytes"), 8000u);
  EXPECT_FALSE(v.contains("port_xmit_data"));
  EXPECT_FALSE(v.contains("port_rcv_data"));
  EXPECT_EQ(v.at("port_xmit_packets"), 30u);
  EXPECT_EQ(v.at("port_rcv_errors"), 2u);
  EXPECT_EQ(v.at("port_xmit_wait"), 77u);
  EXPECT_EQ(v.at("packet_seq_err"), 2u);
  EXPECT_EQ(v.at("np_ecn_marked_roce_packets"), 9u);
  // Unmapped names pass through raw.
  EXPECT_EQ(v.at("unicast_xmit_packets"), 30u);
  EXPECT_EQ(v.at("VL15_dropped"), 0u);
  EXPECT_EQ(v.at("rx_write_requests"), 10u);
  EXPECT_EQ(v.at("roce_slow_restart"), 11u);
  EXPECT_FALSE(v.contains("lifespan"));
  // The port's own value wins over the device-wide group's; device-only counters are added.
  EXPECT_EQ(v.at("out_of_sequence"), 1u);
  EXPECT_EQ(v.at("np_cnp_sent"), 7u);
  EXPECT_EQ(v.at("rx_icrc_encapsulated"), 12u);
  EXPECT_EQ(v.size(), 12u + 11u + 1u);
  EXPECT_TRUE(reader.notes().empty()) << reader.notes().front();
}

TEST_F(PortCounterReaderTest, IbPortCountersAtTheirMaximumAreReportedSaturated) {
  write_counters(port_dir("mlx5_0", 1) / "counters", {{"symbol_error", 65535},
                                                      {"link_downed", 255},
                                                      {"link_error_recovery", 254},
                                                      {"port_xmit_wait", 4294967295u},
                                                      {"port_rcv_errors", 65534},
                                                      {"port_xmit_data", 4294967295u}});
  PortCounterReader reader("mlx5_0", 1, root_);
  const auto snapshot = reader.read();
  EXPECT_EQ(snapshot.saturated, (std::vector<std::string>{"link_downed", "port_xmit_wait", "symbol_error"}));
  EXPECT_EQ(snapshot.values.at("port_xmit_bytes"), std::uint64_t{4294967295u} * 4);
}

TEST_F(PortCounterReaderTest, SecondReadSeesNewValues) {
  make_rxe();
  PortCounterReader reader("rxe0", 1, root_);
  const auto first = reader.read();
  write(port_dir("rxe0", 1) / "hw_counters" / "rcvd_seq_err", "17\n");
  write(port_dir("rxe0", 1) / "hw_counters" / "sent_pkts", "1500\n");
  const auto second = reader.read();
  const auto delta = counter_delta(first, second);
  EXPECT_EQ(delta.values.at("packet_seq_err"), 10u);
  EXPECT_EQ(delta.values.at("port_xmit_packets"), 500u);
  EXPECT_EQ(delta.values.at("out_of_sequence"), 0u);
  EXPECT_TRUE(delta.wrapped.empty());
  EXPECT_TRUE(delta.reset.empty());
  EXPECT_TRUE(delta.unpaired.empty());
}

TEST_F(PortCounterReaderTest, ScaledCountersGiveDeltasInBytes) {
  make_mlx5();
  PortCounterReader reader("mlx5_0", 1, root_);
  const auto first = reader.read();
  write(port_dir("mlx5_0", 1) / "counters" / "port_xmit_data", "1250\n");
  const auto delta = counter_delta(first, reader.read());
  EXPECT_EQ(delta.values.at("port_xmit_bytes"), 1000u);
}

// ---- files that cannot be read -------------------------------------------------------------------

TEST_F(PortCounterReaderTest, UnreadableFilesAreLeftOutAndNotedOnce) {
  make_mlx5();
  // Old kernels answer a failed PMA query with text instead of an error.
  write(port_dir("mlx5_0", 1) / "counters" / "port_xmit_wait", "N/A (no PMA)\n");
  write(port_dir("mlx5_0", 1) / "counters" / "symbol_error", "");
  PortCounterReader reader("mlx5_0", 1, root_);
  // A file that goes away after the listing (the read fails with ENOENT, as EINVAL/EOPNOTSUPP would).
  fs::remove(port_dir("mlx5_0", 1) / "hw_counters" / "packet_seq_err");

  PortCounterSnapshot snapshot;
  ASSERT_NO_THROW(snapshot = reader.read());
  EXPECT_FALSE(snapshot.values.contains("port_xmit_wait"));
  EXPECT_FALSE(snapshot.values.contains("symbol_error"));
  EXPECT_FALSE(snapshot.values.contains("packet_seq_err"));
  EXPECT_EQ(snapshot.values.at("out_of_sequence"), 1u);  // the others are still read

  ASSERT_EQ(reader.notes().size(), 3u);
  const auto note_about = [&](const std::string& what) {
    for (const auto& note : reader.notes()) {
      if (note.find(what) != std::string::npos) return note;
    }
    return std::string();
  };
  const std::string wait_note = note_about("counters/port_xmit_wait");
  EXPECT_NE(wait_note.find("mlx5_0 port 1"), std::string::npos) << wait_note;
  EXPECT_NE(wait_note.find("N/A (no PMA)"), std::string::npos) << wait_note;
  EXPECT_NE(note_about("counters/symbol_error"), "");
  const std::string gone_note = note_about("hw_counters/packet_seq_err");
  EXPECT_NE(gone_note.find("No such file"), std::string::npos) << gone_note;

  // Noted once, however often it fails.
  reader.read();
  reader.read();
  EXPECT_EQ(reader.notes().size(), 3u);

  // Tried again each time: once readable, it is back.
  write(port_dir("mlx5_0", 1) / "hw_counters" / "packet_seq_err", "42\n");
  EXPECT_EQ(reader.read().values.at("packet_seq_err"), 42u);
}

TEST_F(PortCounterReaderTest, ADeviceThatVanishesMidRunGivesEmptySnapshotsNotExceptions) {
  make_rxe();
  PortCounterReader reader("rxe0", 1, root_);
  fs::remove_all(device_dir("rxe0"));
  PortCounterSnapshot snapshot;
  ASSERT_NO_THROW(snapshot = reader.read());
  EXPECT_TRUE(snapshot.values.empty());
  EXPECT_EQ(reader.notes().size(), 15u);
}

TEST_F(PortCounterReaderTest, APortWithoutCounterDirectoriesIsNotedNotFatal) {
  fs::create_directories(port_dir("siw0", 1));
  PortCounterReader reader("siw0", 1, root_);
  EXPECT_EQ(reader.file_count(), 0u);
  EXPECT_TRUE(reader.read().values.empty());
  ASSERT_EQ(reader.notes().size(), 1u);
  EXPECT_NE(reader.notes()[0].find("no counters"), std::string::npos) << reader.notes()[0];
}

// ---- construction errors ----------------------------------------------------------------------------

TEST_F(PortCounterReaderTest, MissingDeviceThrowsWithDevicePortAndPath) {
  make_rxe();
  make_mlx5();
  try {
    PortCounterReader reader("mlx5_7", 1, root_);
    FAIL() << "expected EngineError";
  } catch (const EngineError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'mlx5_7'"), std::string::npos) << message;
    EXPECT_NE(message.find("port 1"), std::string::npos) << message;
    EXPECT_NE(message.find((root_ / "class" / "infiniband" / "mlx5_7").string()), std::string::npos) << message;
    EXPECT_NE(message.find("mlx5_0, rxe0"), std::string::npos) << message;  // what there is instead
  }
}

TEST_F(PortCounterReaderTest, MissingPortThrowsWithDevicePortAndPath) {
  make_rxe();
  try {
    PortCounterReader reader("rxe0", 2, root_);
    FAIL() << "expected EngineError";
  } catch (const EngineError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("'rxe0'"), std::string::npos) << message;
    EXPECT_NE(message.find("port 2"), std::string::npos) << message;
    EXPECT_NE(message.find(port_dir("rxe0", 2).string()), std::string::npos) << message;
    EXPECT_NE(message.find("its ports: 1"), std::string::npos) << message;
  }
}

TEST_F(PortCounterReaderTest, DeviceNamesCannotLeaveTheClassDirectory) {
  make_rxe();
  EXPECT_THROW(PortCounterReader("../infiniband/rxe0", 1, root_), EngineError);
  EXPECT_THROW(PortCounterReader("..", 1, root_), EngineError);
  EXPECT_THROW(PortCounterReader("", 1, root_), EngineError);
}

// ---- deltas ---------------------------------------------------------------------------------------

PortCounterSnapshot snapshot_of(CounterValues values, std::vector<std::string> saturated = {}) {
  return PortCounterSnapshot{std::move(values), std::move(saturated)};
}

TEST(PortCounterDelta, CountsUpAndZero) {
  const auto delta = counter_delta(snapshot_of({{"a", 10}, {"b", 5}}), snapshot_of({{"a", 25}, {"b", 5}}));
  EXPECT_EQ(delta.values, (CounterValues{{"a", 15}, {"b", 0}}));
  EXPECT_TRUE(delta.wrapped.empty());
  EXPECT_TRUE(delta.reset.empty());
  EXPECT_TRUE(delta.saturated.empty());
  EXPECT_TRUE(delta.unpaired.empty());
}

TEST(PortCounterDelta, ACounterThatGoesBackIsAResetAndCountsFromZero) {
  const auto delta = counter_delta(snapshot_of({{"packet_seq_err", 100}}), snapshot_of({{"packet_seq_err", 5}}));
  EXPECT_EQ(delta.values.at("packet_seq_err"), 5u);
  EXPECT_EQ(delta.reset, std::vector<std::string>{"packet_seq_err"});
  EXPECT_TRUE(delta.wrapped.empty());
}

TEST(PortCounterDelta, A32BitCounterNearItsTopWraps) {
  // mlx5's q counters are 32 bits in hardware.
  const auto delta =
      counter_delta(snapshot_of({{"rx_write_requests", 0xFFFF'FFF0u}}), snapshot_of({{"rx_write_requests", 0x10}}));
  EXPECT_EQ(delta.values.at("rx_write_requests"), 0x20u);
  EXPECT_EQ(delta.wrapped, std::vector<std::string>{"rx_write_requests"});
  EXPECT_TRUE(delta.reset.empty());
}

TEST(PortCounterDelta, AFallTooLargeForOneWrapIsAReset) {
  // Across 2^32 this would be 2^32 - 3e9 + 1e9 ≈ 2.29e9 > 2^31: not a plausible one-period step.
  const auto delta = counter_delta(snapshot_of({{"c", 3'000'000'000u}}), snapshot_of({{"c", 1'000'000'000u}}));
  EXPECT_EQ(delta.values.at("c"), 1'000'000'000u);
  EXPECT_EQ(delta.reset, std::vector<std::string>{"c"});
}

TEST(PortCounterDelta, A64BitCounterGoingBackIsAReset) {
  const auto delta =
      counter_delta(snapshot_of({{"port_xmit_bytes", 50'000'000'000u}}), snapshot_of({{"port_xmit_bytes", 7}}));
  EXPECT_EQ(delta.values.at("port_xmit_bytes"), 7u);
  EXPECT_EQ(delta.reset, std::vector<std::string>{"port_xmit_bytes"});
  EXPECT_TRUE(delta.wrapped.empty());
}

TEST(PortCounterDelta, NamesInOnlyOneSnapshotHaveNoDelta) {
  const auto delta = counter_delta(snapshot_of({{"a", 1}, {"gone", 2}}), snapshot_of({{"a", 3}, {"new", 9}}));
  EXPECT_EQ(delta.values, (CounterValues{{"a", 2}}));
  EXPECT_EQ(delta.unpaired, (std::vector<std::string>{"gone", "new"}));
}

TEST(PortCounterDelta, SaturatedCountersAreFlagged) {
  const auto delta = counter_delta(snapshot_of({{"symbol_error", 65535}}, {"symbol_error"}),
                                   snapshot_of({{"symbol_error", 65535}}, {"symbol_error"}));
  EXPECT_EQ(delta.values.at("symbol_error"), 0u);
  EXPECT_EQ(delta.saturated, std::vector<std::string>{"symbol_error"});
}

}  // namespace
}  // namespace tusk::rdma
