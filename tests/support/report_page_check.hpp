// The checks every lab test makes of a run's report.html, in headless Chromium: it draws with no
// console error and no blocked request, its first test's matrix has a cell per host pair, every
// pair that failed in report.json is drawn in the failing colour and no passing pair is; every
// chart's y axis starts at zero; and a screenshot is kept under test-artifacts/ for a person (and
// the README) to look at.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <string>

#include "tests/support/headless_chromium.hpp"

namespace tusk::testing {

inline void expect_report_page_draws(const std::string& report_directory, const std::string& scratch,
                                     const std::string& screenshot_name) {
  if (!HeadlessChromium::available()) {
    ADD_FAILURE() << "chromium is not installed (scripts/install-deps.sh installs it): report.html cannot be checked";
    return;
  }
  const std::string page = report_directory + "/report.html";
  ASSERT_TRUE(std::filesystem::exists(page)) << page;
  std::ifstream file(report_directory + "/report.json");
  const nlohmann::json report = nlohmann::json::parse(file);

  const RenderedPage rendered = HeadlessChromium::render(page, scratch);
  ASSERT_EQ(rendered.status, 0) << rendered.log;
  EXPECT_EQ(rendered.attribute("rendered"), "yes") << rendered.log;
  EXPECT_EQ(rendered.attribute("errors"), std::nullopt) << rendered.attribute("errors").value_or("");
  EXPECT_TRUE(rendered.console_errors().empty()) << rendered.log;

  // The first test's host pairs, and the ones with a failing stream, as report.json has them.
  std::set<std::string> hosts, failing;
  const auto& test = report["tests"][0];
  for (const auto& agent : test["agents"]) hosts.insert(agent["agent"].get<std::string>());
  for (const auto& stream : test["streams"]) {
    if (!stream.contains("sender")) continue;
    hosts.insert(stream["sender"].get<std::string>());
    hosts.insert(stream["receiver"].get<std::string>());
    if (!stream["passed"].get<bool>())
      failing.insert(stream["sender"].get<std::string>() + "->" + stream["receiver"].get<std::string>());
  }
  const std::size_t n = hosts.size();
  EXPECT_EQ(rendered.attribute("matrix-hosts"), std::to_string(n));
  EXPECT_EQ(rendered.attribute("matrix-cells"), std::to_string(n * (n - 1)));
  EXPECT_EQ(rendered.attribute("failing-pairs"), std::to_string(failing.size()));
  const std::string fail_colour = rendered.attribute("fail-colour").value_or("?");
  const auto drawn_failing = nlohmann::json::parse(rendered.attribute("failing-colours").value_or("{}"));
  for (const auto& pair : failing) {
    ASSERT_TRUE(drawn_failing.contains(pair)) << pair << " not drawn as failing: " << drawn_failing.dump();
    EXPECT_EQ(drawn_failing[pair], fail_colour) << pair;
  }
  const auto drawn_passing = nlohmann::json::parse(rendered.attribute("passing-colours").value_or("{}"));
  for (const auto& [pair, colour] : drawn_passing.items()) {
    EXPECT_NE(colour, fail_colour) << pair << " passed but is drawn as failing";
  }

  // Rates and counts are drawn from zero: a zoomed axis made a 2.5 % dip look like a collapse.
  const auto minimums = nlohmann::json::parse(rendered.attribute("chart-axis-minimums").value_or("null"));
  ASSERT_TRUE(minimums.is_array()) << "the page did not say where its charts' axes start";
  for (const auto& minimum : minimums) EXPECT_EQ(minimum, 0) << "a chart's y axis starts at " << minimum.dump();

  std::filesystem::create_directories("test-artifacts");
  const std::string png = "test-artifacts/" + screenshot_name;
  EXPECT_EQ(HeadlessChromium::screenshot(page, png, scratch), 0);
  EXPECT_GT(std::filesystem::file_size(png), 10'000u) << png;
  std::cerr << "report.html screenshot: " << std::filesystem::absolute(png).string() << "\n";
}

// The run's report.html, drawn with no error and no console error; none (a failure said) where
// chromium is missing or the page would not draw.
inline std::optional<RenderedPage> drawn_report_page(const std::string& report_directory, const std::string& scratch) {
  if (!HeadlessChromium::available()) {
    ADD_FAILURE() << "chromium is not installed (scripts/install-deps.sh installs it): report.html cannot be checked";
    return std::nullopt;
  }
  RenderedPage page = HeadlessChromium::render(report_directory + "/report.html", scratch);
  EXPECT_EQ(page.status, 0) << page.log;
  EXPECT_EQ(page.attribute("rendered"), "yes") << page.log;
  EXPECT_EQ(page.attribute("errors"), std::nullopt) << page.attribute("errors").value_or("");
  EXPECT_TRUE(page.console_errors().empty()) << page.log;
  if (page.status != 0) return std::nullopt;
  return page;
}

// The run's report.html draws without an error and shows `text` (a method's table, a finding).
inline void expect_report_page_shows(const std::string& report_directory, const std::string& scratch,
                                     const std::string& text) {
  if (const auto page = drawn_report_page(report_directory, scratch)) {
    EXPECT_NE(page->dom.find(text), std::string::npos) << text << " not on the page";
  }
}

}  // namespace tusk::testing
