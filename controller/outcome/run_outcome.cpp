#include "controller/outcome/run_outcome.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "common/counter_names.hpp"
#include "controller/verdict/stream_values.hpp"
#include "controller/verdict/verdict.hpp"

namespace tusk {

std::vector<std::string> reader_warnings(const TestOutcome& test) {
  std::vector<std::string> lines = test.warnings;
  // Frames whose damaged header told no stream: a port's count, on each of its receiving streams.
  std::map<std::string, std::uint64_t> unattributed;
  for (const auto& verdict : test.streams) {
    for (const auto& warning : verdict.warnings())
      lines.push_back(fmt::format("{}: {}", stream_title(verdict), warning));
    if (const auto damaged = counter_of(verdict.stream, counters::kUnattributedBadHeaders); damaged && *damaged > 0)
      unattributed[verdict.agent] = std::max(unattributed[verdict.agent], *damaged);
  }
  for (const auto& [agent, frames] : unattributed) {
    lines.push_back(fmt::format(
        "{}: {} test frames arrived with their Tusk header damaged beyond telling their stream: damaged frames of "
        "no stream, and lost frames of the streams they belonged to",
        agent, frames));
  }
  return lines;
}

std::string_view to_string(TestVerdict verdict) {
  switch (verdict) {
    case TestVerdict::Pass:
      return "pass";
    case TestVerdict::Fail:
      return "fail";
    case TestVerdict::Incomplete:
      return "incomplete";
  }
  return "?";
}

}  // namespace tusk
