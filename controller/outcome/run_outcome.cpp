#include "controller/outcome/run_outcome.hpp"

#include <fmt/format.h>

#include "controller/verdict/verdict.hpp"

namespace tusk {

std::vector<std::string> reader_warnings(const TestOutcome& test) {
  std::vector<std::string> lines = test.warnings;
  for (const auto& verdict : test.streams) {
    for (const auto& warning : verdict.warnings())
      lines.push_back(fmt::format("{}: {}", stream_title(verdict), warning));
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
