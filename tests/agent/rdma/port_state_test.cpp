#include "agent/rdma/port_state.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tusk::rdma {
namespace {

namespace fs = std::filesystem;

class PortStateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("tusk-port-state-" + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }
  void write_state(const std::string& text) {
    const fs::path path = root_ / "class/infiniband/rxe0/ports/1/state";
    fs::create_directories(path.parent_path());
    std::ofstream(path) << text;
  }
  fs::path root_;
};

TEST_F(PortStateTest, ActiveAndActiveDeferAreUpTheRestDown) {
  write_state("4: ACTIVE\n");
  EXPECT_EQ(read_port_active("rxe0", 1, root_), true);
  write_state("5: ACTIVE_DEFER\n");
  EXPECT_EQ(read_port_active("rxe0", 1, root_), true);
  for (const char* down : {"1: DOWN\n", "2: INIT\n", "3: ARMED\n"}) {
    write_state(down);
    EXPECT_EQ(read_port_active("rxe0", 1, root_), false) << down;
  }
}

TEST_F(PortStateTest, AMissingOrUnreadableStateIsUnknownNotDown) {
  EXPECT_EQ(read_port_active("rxe0", 1, root_), std::nullopt);
  write_state("garbage\n");
  EXPECT_EQ(read_port_active("rxe0", 1, root_), std::nullopt);
  write_state("9: NEW_STATE\n");
  EXPECT_EQ(read_port_active("rxe0", 1, root_), std::nullopt);
  write_state("4: ACTIVE\n");
  EXPECT_EQ(read_port_active("rxe0", 2, root_), std::nullopt);
}

}  // namespace
}  // namespace tusk::rdma
