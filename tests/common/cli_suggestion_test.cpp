// The did-you-mean for a mistyped command or option, on a CLI11 definition shaped like the
// controller's (a required subcommand, each with its own options, a global option before it).
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "common/cli_suggestion.hpp"

namespace tusk {
namespace {

class CliSuggestion : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.require_subcommand(1);
    app_.add_option("--log-level", text_);
    auto* run = app_.add_subcommand("run", "run");
    run->add_option("file", text_);
    run->add_option("--wait", text_);
    run->add_option("--out", text_);
    run->add_flag("--no-progress", flag_);
    app_.add_subcommand("validate", "validate")->add_option("files", files_);
    app_.add_subcommand("inventory", "inventory")->add_option("--expect", text_);
  }
  std::optional<std::string> suggest(std::vector<std::string> args) { return cli_suggestion(app_, args); }

  CLI::App app_{"thing", "tusk-thing"};
  std::string text_;
  std::vector<std::string> files_;
  bool flag_ = false;
};

// Before: "tusk-controller validat base.yaml" said "A subcommand is required".
TEST_F(CliSuggestion, AMistypedCommandGetsTheCommandItWasProbablyMeantToBe) {
  EXPECT_EQ(suggest({"validat", "base.yaml"}), "unknown command 'validat'; did you mean 'validate'?");
  EXPECT_EQ(suggest({"--log-level", "debug", "rnu", "x.yaml"}), "unknown command 'rnu'; did you mean 'run'?");
  EXPECT_EQ(suggest({"frobnicate"}), "unknown command 'frobnicate'");
}

TEST_F(CliSuggestion, AMistypedOptionGetsTheOptionOfItsOwnCommand) {
  EXPECT_EQ(suggest({"run", "x.yaml", "--wiat", "5s"}), "unknown option '--wiat' of 'run'; did you mean '--wait'?");
  EXPECT_EQ(suggest({"run", "x.yaml", "--no-progess"}),
            "unknown option '--no-progess' of 'run'; did you mean '--no-progress'?");
  EXPECT_EQ(suggest({"inventory", "--expcet=4"}), "unknown option '--expcet' of 'inventory'; did you mean '--expect'?");
  EXPECT_EQ(suggest({"--log-levl", "info", "run"}), "unknown option '--log-levl'; did you mean '--log-level'?");
}

TEST_F(CliSuggestion, ACommandLineWhoseWordsAreAllKnownHasNoSuggestion) {
  // Values are skipped, whatever they look like; the error is another one (a missing file, say).
  EXPECT_EQ(suggest({"run", "--out", "validat", "--wait=5s", "x.yaml"}), std::nullopt);
  EXPECT_EQ(suggest({"--log-level", "info"}), std::nullopt);
  EXPECT_EQ(suggest({"validate", "a.yaml", "--", "--wiat"}), std::nullopt);
}

}  // namespace
}  // namespace tusk
