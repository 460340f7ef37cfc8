#include "agent/rdma/port_watch.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

// The port watch's thread and its state, on a sysfs of the test's own (this machine has no RDMA
// device, so the devices' events are not opened and their ports are polled). The events
// themselves are the Soft-RoCE VM lab's to show (RdmaVmLab: the link-down tests).
namespace tusk::rdma {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class PortWatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tusk-port-watch-" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write_state(const std::string& device, int port, const std::string& text) {
    const fs::path path = root_ / "class/infiniband" / device / "ports" / std::to_string(port) / "state";
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  std::unique_ptr<PortWatch> make_watch() {
    return std::make_unique<PortWatch>(
        [this](const std::string& key, const LinkChange& change) {
          std::lock_guard lock(mutex_);
          changes_.emplace_back(key, change);
          changed_.notify_all();
        },
        root_, false);
  }
  // Waits (generously: this is no timing test) until `count` changes were reported.
  bool wait_for_changes(std::size_t count) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 10s, [&] { return changes_.size() >= count; });
  }
  std::vector<std::pair<std::string, LinkChange>> changes() {
    std::lock_guard lock(mutex_);
    return changes_;
  }

  fs::path root_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::pair<std::string, LinkChange>> changes_;
};

TEST_F(PortWatchTest, ADownAndAnUpOfOnePortAreReportedWithTheTimeDownAndLeaveTheOtherPortAlone) {
  write_state("rxe0", 1, "4: ACTIVE\n");
  write_state("rxe1", 1, "4: ACTIVE\n");
  LinkWatch link0, link1;
  auto watch = make_watch();
  watch->watch("rxe0", 1, link0);
  watch->watch("rxe1", 1, link1);
  watch->watch("rxe0", 1, link1);  // watched already: nothing changes
  EXPECT_TRUE(watch->up("rxe0", 1));
  EXPECT_EQ(watch->last_up_ns("rxe0", 1), 0);

  write_state("rxe0", 1, "1: DOWN\n");
  ASSERT_TRUE(wait_for_changes(1));
  EXPECT_FALSE(watch->up("rxe0", 1));
  EXPECT_TRUE(watch->up("rxe1", 1));
  std::this_thread::sleep_for(50ms);
  write_state("rxe0", 1, "4: ACTIVE\n");
  ASSERT_TRUE(wait_for_changes(2));
  watch->stop();

  const auto seen = changes();
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].first, "rxe0/1");
  EXPECT_FALSE(seen[0].second.up);
  EXPECT_EQ(seen[1].first, "rxe0/1");
  EXPECT_TRUE(seen[1].second.up);
  EXPECT_GE(seen[1].second.down_for_ns, 50'000'000);
  EXPECT_EQ(seen[1].second.down_for_ns, seen[1].second.at_ns - seen[0].second.at_ns);
  EXPECT_TRUE(watch->up("rxe0", 1));
  EXPECT_EQ(watch->last_up_ns("rxe0", 1), seen[1].second.at_ns);
  EXPECT_EQ(link0.downs(), 1u);
  EXPECT_EQ(link1.downs(), 0u);
}

TEST_F(PortWatchTest, APortDownWhenItIsFirstWatchedIsAChangeAndOneWhoseStateCannotBeReadIsNeverTakenAsDown) {
  write_state("rxe0", 1, "1: DOWN\n");
  LinkWatch down, unreadable;
  auto watch = make_watch();
  watch->watch("rxe0", 1, down);
  watch->watch("rxe9", 1, unreadable);  // no such file
  ASSERT_TRUE(wait_for_changes(1));
  std::this_thread::sleep_for(100ms);  // polled several times meanwhile
  watch->stop();
  const auto seen = changes();
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].first, "rxe0/1");
  EXPECT_FALSE(watch->up("rxe0", 1));
  EXPECT_TRUE(watch->up("rxe9", 1));
  EXPECT_EQ(unreadable.downs(), 0u);
}

TEST_F(PortWatchTest, NothingIsReportedAfterStop) {
  write_state("rxe0", 1, "4: ACTIVE\n");
  LinkWatch link;
  auto watch = make_watch();
  watch->watch("rxe0", 1, link);
  std::this_thread::sleep_for(50ms);
  watch->stop();
  write_state("rxe0", 1, "1: DOWN\n");
  std::this_thread::sleep_for(100ms);
  EXPECT_TRUE(changes().empty());
  EXPECT_EQ(link.downs(), 0u);
}

}  // namespace
}  // namespace tusk::rdma
