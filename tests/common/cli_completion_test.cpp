// The generated bash completion, run by a real bash: it completes subcommands, each one's own
// options and the choices of a checked option.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

#include "common/cli_completion.hpp"

namespace tusk {
namespace {

class CompletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    app_.add_option("--log-level", level_)->check(CLI::IsMember({"trace", "info", "error"}));
    auto* run = app_.add_subcommand("run", "run");
    run->add_option("file", file_);
    run->add_option("--out", out_);
    run->add_flag("--no-progress", flag_);
    app_.add_subcommand("validate", "validate")->add_flag("--strict", flag_);
    script_ = (std::filesystem::temp_directory_path() / ("tusk-completion-" + std::to_string(::getpid()))).string();
    std::ofstream(script_) << bash_completion(app_, "tusk-thing");
  }
  void TearDown() override {
    std::filesystem::remove(script_);
    std::filesystem::remove(script_ + ".driver");
  }

  // What bash offers for the words typed so far (the last one being completed).
  std::string complete(const std::string& words) {
    const std::string driver = script_ + ".driver";
    std::ofstream(driver) << "source " << script_ << "\nCOMP_WORDS=(" << words
                          << ")\nCOMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n_tusk_thing\necho \"${COMPREPLY[*]}\"\n";
    const std::string command = "bash " + driver + " 2>&1";
    std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(command.c_str(), "r"), pclose);
    std::string out;
    std::array<char, 256> buffer{};
    while (pipe && fgets(buffer.data(), buffer.size(), pipe.get())) out += buffer.data();
    if (!out.empty() && out.back() == '\n') out.pop_back();
    return out;
  }

  CLI::App app_;
  std::string level_, file_, out_, script_;
  bool flag_ = false;
};

TEST_F(CompletionTest, CompletesSubcommandsTheirOptionsAndChoices) {
  EXPECT_EQ(complete("tusk-thing ''"), "run validate");
  EXPECT_EQ(complete("tusk-thing r"), "run");
  EXPECT_EQ(complete("tusk-thing run --"), "--help --out --no-progress");
  EXPECT_EQ(complete("tusk-thing validate --s"), "--strict");
  EXPECT_EQ(complete("tusk-thing --log-level ''"), "trace info error");
  EXPECT_EQ(complete("tusk-thing --log-level e"), "error");
}

}  // namespace
}  // namespace tusk
