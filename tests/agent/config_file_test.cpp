// The agent's configuration file against a CLI::App: keys map to options by group and prefix, the
// command line wins, and every mistake is reported with its position and key.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <filesystem>
#include <fstream>

#include "agent/config_file.hpp"

namespace tusk {
namespace {

struct Options {
  std::string controller = "127.0.0.1:7420";
  std::string ca;
  bool insecure = false;
  std::vector<std::string> vdevs;
  std::string lcores = "0";
  bool hugepages = false;
  unsigned memory_mb = 256;
  std::size_t outbox = 200'000;
};

const ConfigFileLayout kLayout{{"TLS", "DPDK"}, {"--config"}, {"--ca"}};

class ConfigFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.add_option("--config", config_);
    app_.add_option("--controller", options_.controller)->group("Agent");
    app_.add_option("--outbox", options_.outbox)
        ->check(CLI::Range(std::size_t{1000}, std::size_t{1'000'000}))
        ->group("Agent");
    app_.add_option("--ca", options_.ca)->group("TLS");
    app_.add_flag("--insecure", options_.insecure)->group("TLS");
    app_.add_option("--dpdk-vdev", options_.vdevs)->group("DPDK");
    app_.add_option("--dpdk-lcores", options_.lcores)->group("DPDK");
    app_.add_flag("--dpdk-hugepages", options_.hugepages)->group("DPDK");
    app_.add_option("--dpdk-memory-mb", options_.memory_mb)->group("DPDK");
  }

  std::vector<YamlError> load(const std::string& text, std::vector<std::string> argv = {}) {
    path_ = (std::filesystem::temp_directory_path() / ("tusk-config-test-" + std::to_string(::getpid()) + ".yaml"))
                .string();
    std::ofstream(path_) << text;
    argv.insert(argv.begin(), "tusk-agent");
    std::vector<char*> args;
    for (auto& arg : argv) args.push_back(arg.data());
    app_.parse(static_cast<int>(args.size()), args.data());
    auto errors = apply_config_file(app_, path_, kLayout);
    std::filesystem::remove(path_);
    return errors;
  }

  CLI::App app_;
  Options options_;
  std::string config_;
  std::string path_;
};

TEST_F(ConfigFileTest, KeysAreTheFlagsGroupedBySection) {
  const auto errors = load(
      "controller: ctl.example:7420\n"
      "outbox: 5000\n"
      "tls:\n  ca: /etc/tusk/ca.pem\n  insecure: true\n"
      "dpdk:\n  vdev: [\"net_af_packet0,iface=a\", \"net_af_packet1,iface=b\"]\n  lcores: 0-3\n  hugepages: true\n"
      "  memory_mb: 1024\n");
  ASSERT_TRUE(errors.empty()) << join_errors(errors);
  EXPECT_EQ(options_.controller, "ctl.example:7420");
  EXPECT_EQ(options_.outbox, 5000u);
  EXPECT_EQ(options_.ca, "/etc/tusk/ca.pem");
  EXPECT_TRUE(options_.insecure);
  EXPECT_EQ(options_.vdevs, (std::vector<std::string>{"net_af_packet0,iface=a", "net_af_packet1,iface=b"}));
  EXPECT_EQ(options_.lcores, "0-3");
  EXPECT_TRUE(options_.hugepages);
  EXPECT_EQ(options_.memory_mb, 1024u);
}

TEST_F(ConfigFileTest, TheCommandLineWinsOverTheFileOptionByOption) {
  const auto errors = load("controller: file:7420\ndpdk:\n  vdev: net_af_packet0,iface=a\n  lcores: 0-3\n",
                           {"--controller", "flag:7420", "--dpdk-vdev", "x", "--dpdk-vdev", "y"});
  ASSERT_TRUE(errors.empty()) << join_errors(errors);
  EXPECT_EQ(options_.controller, "flag:7420");
  EXPECT_EQ(options_.vdevs, (std::vector<std::string>{"x", "y"}));  // not merged with the file's
  EXPECT_EQ(options_.lcores, "0-3");
}

// Issue 57, before: `tls: {ca: tls/ca.pem}` was read from the working directory, not the file's.
TEST_F(ConfigFileTest, ARelativePathIsReadFromTheFilesOwnFolder) {
  const std::string folder = std::filesystem::temp_directory_path().string();
  ASSERT_TRUE(load("tls:\n  ca: tls/ca.pem\ndpdk:\n  lcores: rel/0-3\n").empty());
  EXPECT_EQ(options_.ca, folder + "/tls/ca.pem") << "beside the file";
  EXPECT_EQ(options_.lcores, "rel/0-3") << "not a file: as written";
  options_.ca.clear();
  ASSERT_TRUE(load("tls:\n  ca: /etc/tusk/tls/ca.pem\n").empty());
  EXPECT_EQ(options_.ca, "/etc/tusk/tls/ca.pem");
}

TEST_F(ConfigFileTest, AFalseFlagStaysOffAndASingleValueFillsAList) {
  const auto errors = load("tls:\n  insecure: false\ndpdk:\n  vdev: net_af_packet0\n");
  ASSERT_TRUE(errors.empty()) << join_errors(errors);
  EXPECT_FALSE(options_.insecure);
  EXPECT_EQ(options_.vdevs, std::vector<std::string>{"net_af_packet0"});
}

TEST_F(ConfigFileTest, EveryMistakeIsReportedWithPositionAndKey) {
  const auto errors = load(
      "controler: x:1\n"             // unknown, near miss
      "tls:\n  insecure: \"yes\"\n"  // a string, not a boolean
      "dpdk:\n  lcores: [1, 2]\n"    // a list for a single value
      "  memory_mb: lots\n"          // the option's own conversion refuses it
      "outbox: 10\n"                 // the option's own check refuses it
      "ca: /x\n");                   // a section's key at the top
  const std::string text = join_errors(errors);
  ASSERT_EQ(errors.size(), 6u) << text;
  EXPECT_EQ(errors[0].to_string(), path_ + ":1:1: controler: unknown key (did you mean 'controller'?)");
  EXPECT_EQ(errors[1].to_string(), path_ + ":3:13: tls.insecure: expected true or false, got the string 'yes'");
  EXPECT_EQ(errors[2].to_string(), path_ + ":5:11: dpdk.lcores: expected a single value, got a list");
  EXPECT_EQ(errors[3].to_string(), path_ + ":6:14: dpdk.memory_mb: expected a whole number, 0 or more, got 'lots'");
  EXPECT_EQ(errors[4].to_string(), path_ + ":7:9: outbox: Value 10 not in range 1000 to 1000000");
  EXPECT_EQ(errors[5].field_path, "ca");
  EXPECT_NE(errors[5].message.find("unknown key"), std::string::npos) << text;
}

TEST_F(ConfigFileTest, ASectionMustBeAMappingAndTheFileItselfToo) {
  const auto errors = load("dpdk: [a]\n");
  EXPECT_EQ(join_errors(errors), path_ + ":1:7: dpdk: expected a mapping, got a list");
}

TEST_F(ConfigFileTest, AnEmptyFileSetsNothingAndAMissingOneIsAnError) {
  EXPECT_TRUE(load("# nothing yet\n").empty());
  EXPECT_EQ(options_.controller, "127.0.0.1:7420");
  const auto errors = apply_config_file(app_, "/nonexistent/agent.yaml", kLayout);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].to_string().find("/nonexistent/agent.yaml"), std::string::npos) << errors[0].to_string();
}

TEST_F(ConfigFileTest, TheKeysListedAreTheOptionsLessTheCommandLineOnes) {
  EXPECT_EQ(config_file_keys(app_, kLayout),
            (std::vector<std::string>{"controller", "outbox", "tls.ca", "tls.insecure", "dpdk.vdev", "dpdk.lcores",
                                      "dpdk.hugepages", "dpdk.memory_mb"}));
}

}  // namespace
}  // namespace tusk
