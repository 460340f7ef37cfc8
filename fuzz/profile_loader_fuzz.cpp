// A profile is the file a user hands the controller: any text must load or be refused with
// errors, never crash or hang, and a profile that loads must plan for its hosts.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "controller/plan/planner.hpp"
#include "controller/profile/profile_loader.hpp"
#include "controller/report/plan_printer.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    const tusk::Profile profile = tusk::load_profile_text(text, "fuzz.yaml");
    // Planning is quadratic in agents for some topologies: a fuzzed profile of thousands of hosts
    // says nothing more than one of sixteen.
    if (!profile.agents.hosts.empty() && profile.agents.hosts.size() <= 16) {
      (void)tusk::expand_plan(profile, profile.agents.hosts, "run-fuzz");
    }
  } catch (const tusk::ProfileInvalid&) {
  } catch (const tusk::PlanError&) {
  }
  return 0;
}
