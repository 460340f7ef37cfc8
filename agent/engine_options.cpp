#include "agent/engine_options.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

namespace tusk {

EngineSetup engine_setup(std::vector<std::unique_ptr<EngineOptions>> list) {
  struct Shared {
    std::vector<std::unique_ptr<EngineOptions>> engines;
    unsigned idle_sleep_us = 0;
  };
  auto shared = std::make_shared<Shared>();
  shared->engines = std::move(list);
  EngineSetup setup;
  setup.add_options = [shared](CLI::App& app) {
    for (const auto& engine : shared->engines) engine->add_to(app);
    app.add_option("--idle-sleep-us", shared->idle_sleep_us,
                   "sleep when a poll finds nothing (labs on few cores); 0 busy-polls")
        ->capture_default_str()
        ->group("Agent");
  };
  setup.check_host = [shared] {
    std::vector<std::string> problems;
    for (const auto& engine : shared->engines) {
      const auto own = engine->host_problems();
      problems.insert(problems.end(), own.begin(), own.end());
    }
    return problems;
  };
  setup.no_engine = [shared]() -> std::optional<std::string> {
    std::vector<std::string> why;
    for (const auto& engine : shared->engines) {
      const auto unused = engine->unused();
      if (!unused) return std::nullopt;
      why.push_back(*unused);
    }
    return fmt::format("this agent can run no test here: {}", fmt::join(why, " and "));
  };
  setup.make_engines = [shared](const std::string& agent_name) {
    EngineCatalog catalog;
    const EngineContext context{agent_name, shared->idle_sleep_us};
    for (const auto& engine : shared->engines) engine->add_engine(catalog, context);
    return catalog;
  };
  return setup;
}

}  // namespace tusk
