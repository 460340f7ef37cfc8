// Every profile shipped in profiles/ and every topology template in deploy/topology/ must load:
// they are the examples people copy.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "controller/engines/rdma/rdma_slice.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/plan_printer.hpp"
#include "controller/topology/fabric_topology.hpp"
#include "tests/support/build_paths.hpp"

namespace tusk {
namespace {

std::vector<std::filesystem::path> shipped_profiles() {
  std::vector<std::filesystem::path> paths;
  const std::filesystem::path directory = std::filesystem::path(tusk::build_paths::source_dir()) / "profiles";
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(ShippedProfiles, ThereAreAtLeastTwo) {
  EXPECT_GE(shipped_profiles().size(), 2u);
}

TEST(ShippedProfiles, EveryOneValidates) {
  for (const auto& path : shipped_profiles()) {
    SCOPED_TRACE(path.string());
    try {
      const Profile profile = load_profile_file(path.string());
      EXPECT_FALSE(profile.name.empty());
      EXPECT_FALSE(profile.tests.empty());
    } catch (const ProfileInvalid& error) {
      ADD_FAILURE() << error.what();
    }
  }
}

// `plan` on every shipped profile, with as many agents as it selects (named as its hosts, or made
// up for its patterns): a line per agent and its peers, and for a training replay the bytes per
// step and the step rhythm.
TEST(ShippedProfiles, EveryOnePlansAndATrainingReplayShowsItsStepRhythm) {
  for (const auto& path : shipped_profiles()) {
    SCOPED_TRACE(path.string());
    const Profile profile = load_profile_file(path.string());
    std::vector<std::string> agents = profile.agents.hosts;
    const std::size_t count = profile.agents.count ? *profile.agents.count : std::max<std::size_t>(agents.size(), 2);
    for (std::size_t i = agents.size(); i < count; ++i) agents.push_back("host-" + std::to_string(100 + i));
    const std::string text = plan_text(profile, expand_plan(profile, agents, "run"));
    for (const auto& agent : agents)
      EXPECT_NE(text.find("  " + agent + " -> "), std::string::npos) << agent << "\n" << text;
    for (const auto& test : profile.tests) {
      if (test.engine != "rdma" || rdma::params(test).collective().empty()) continue;
      EXPECT_NE(text.find(rdma::params(test).collective() + " of "), std::string::npos) << text;
      EXPECT_NE(text.find("to each peer per step"), std::string::npos) << text;
      EXPECT_NE(text.find(" compute, then send"), std::string::npos) << text;
    }
  }
}

TEST(ShippedTopologies, EveryTemplateLoads) {
  const std::filesystem::path directory = std::filesystem::path(tusk::build_paths::source_dir()) / "deploy/topology";
  std::size_t templates = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.path().extension() != ".yaml") continue;
    ++templates;
    SCOPED_TRACE(entry.path().string());
    try {
      load_topology_file(entry.path().string());
    } catch (const std::exception& error) {
      ADD_FAILURE() << error.what();
    }
  }
  EXPECT_EQ(templates, 2u);
}

}  // namespace
}  // namespace tusk
