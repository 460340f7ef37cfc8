// Every profile shipped in profiles/ must load: they are the examples people copy.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "controller/profile_loader.hpp"

#ifndef TUSK_SOURCE_DIR
#error "controller_test needs TUSK_SOURCE_DIR, the repository root, to find profiles/"
#endif

namespace tusk {
namespace {

std::vector<std::filesystem::path> shipped_profiles() {
  std::vector<std::filesystem::path> paths;
  const std::filesystem::path directory = std::filesystem::path(TUSK_SOURCE_DIR) / "profiles";
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(ShippedProfiles, ThereAreAtLeastTwo) { EXPECT_GE(shipped_profiles().size(), 2u); }

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

}  // namespace
}  // namespace tusk
