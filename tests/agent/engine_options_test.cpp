// An engine added from outside the agent's shared files: its options reach the command line, the
// host check, --check-config's "no engine" answer and the engine catalog through engine_setup
// alone, as agent/main.cpp lists the shipped two.
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>

#include "agent/engine_options.hpp"

namespace tusk {
namespace {

class PulseEngine final : public Engine {
 public:
  void prepare(const proto::Plan&, EngineEventSink) override {}
  void start(std::int64_t) override {}
  std::vector<proto::StreamCounters> sample() override { return {}; }
  void stop() noexcept override {}
};

class PulseOptions final : public EngineOptions {
 public:
  explicit PulseOptions(std::string name = "pulse") : name_(std::move(name)) {}
  void add_to(CLI::App& app) override { app.add_option("--" + name_ + "-port", ports_, "a port")->group(name_); }
  std::vector<std::string> host_problems() const override {
    std::vector<std::string> problems;
    for (const auto& port : ports_) {
      if (port == "absent") problems.push_back("--pulse-port absent: no such port");
    }
    return problems;
  }
  std::optional<std::string> unused() const override {
    if (!ports_.empty()) return std::nullopt;
    return "it names no " + name_ + " port";
  }
  void add_engine(EngineCatalog& catalog, const EngineContext& context) override {
    seen_ = context;
    catalog.engines[name_] = EngineEntry{[] { return std::make_unique<PulseEngine>(); }, nullptr, {}};
  }
  EngineContext seen_;

 private:
  std::string name_;
  std::vector<std::string> ports_;
};

struct Parsed {
  EngineSetup setup;
  PulseOptions* pulse = nullptr;
  CLI::App app{"test"};
};

void parse(Parsed& parsed, std::vector<std::string> args, bool with_second) {
  std::vector<std::unique_ptr<EngineOptions>> engines;
  auto pulse = std::make_unique<PulseOptions>();
  parsed.pulse = pulse.get();
  engines.push_back(std::move(pulse));
  if (with_second) engines.push_back(std::make_unique<PulseOptions>("beat"));
  parsed.setup = engine_setup(std::move(engines));
  parsed.setup.add_options(parsed.app);
  std::reverse(args.begin(), args.end());
  parsed.app.parse(args);
}

TEST(EngineOptions, ATestEnginesFlagsChecksAndRegistrationNeedOnlyItsOwnOptions) {
  Parsed parsed;
  parse(parsed, {"--pulse-port", "p0", "--pulse-port", "absent", "--idle-sleep-us", "250"}, false);
  EXPECT_EQ(parsed.setup.check_host(), (std::vector<std::string>{"--pulse-port absent: no such port"}));
  EXPECT_EQ(parsed.setup.no_engine(), std::nullopt);
  const EngineCatalog catalog = parsed.setup.make_engines("host-a");
  ASSERT_TRUE(catalog.engines.contains("pulse"));
  EXPECT_NE(catalog.engines.at("pulse").make(), nullptr);
  EXPECT_EQ(parsed.pulse->seen_.agent_name, "host-a");
  EXPECT_EQ(parsed.pulse->seen_.idle_sleep_us, 250u);
}

TEST(EngineOptions, NoEngineIsSaidOnlyWhenEveryEngineHasNothingAndNamesWhatEachLacks) {
  Parsed none;
  parse(none, {}, true);
  EXPECT_EQ(
      none.setup.no_engine(),
      std::optional<std::string>("this agent can run no test here: it names no pulse port and it names no beat port"));
  EXPECT_TRUE(none.setup.check_host().empty());
}

}  // namespace
}  // namespace tusk
