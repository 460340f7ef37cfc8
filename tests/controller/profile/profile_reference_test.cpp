// docs/profile.md, the profile reference (and tusk-profile(5), generated from it), against the keys
// the loader reads: every key it reads has its row, and every row names a key it reads. The
// reference was a hand-kept copy of the key tables that drifted from them; now a drift fails here.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "controller/engines/engine_slice.hpp"
#include "controller/profile/localisation_keys.hpp"
#include "controller/profile/method_keys.hpp"
#include "controller/profile/profile_keys.hpp"
#include "controller/profile/profile_schema.hpp"
#include "controller/profile/threshold_catalog.hpp"
#include "tests/support/build_paths.hpp"
#include "tests/support/profile_text.hpp"

namespace tusk {
namespace {

// One heading of the page and what is under it, up to the next heading.
struct PageSection {
  std::set<std::string> rows;  // the first cell of each table row, as `key`
  std::string text;            // everything, for keys named in running text
};

std::map<std::string, PageSection> read_reference() {
  const std::string path = build_paths::source_dir() + "/docs/profile.md";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::map<std::string, PageSection> sections;
  const std::regex heading(R"(^#+ +(.*)$)");
  const std::regex row(R"(^\| *`([^`]+)` *\|)");
  std::string line, current;
  bool in_code = false;
  while (std::getline(in, line)) {
    if (line.rfind("```", 0) == 0) in_code = !in_code;
    std::smatch match;
    if (!in_code && std::regex_match(line, match, heading)) {
      current = match[1];
      continue;
    }
    if (std::regex_search(line, match, row)) sections[current].rows.insert(match[1]);
    sections[current].text += line + "\n";
  }
  return sections;
}

std::set<std::string> as_set(const std::vector<std::string_view>& keys) {
  return {keys.begin(), keys.end()};
}

// Both directions, with the keys named in the message.
void expect_same_keys(const std::set<std::string>& read, const std::set<std::string>& documented,
                      const std::string& where) {
  for (const auto& key : read) {
    EXPECT_TRUE(documented.contains(key)) << "the loader reads `" << key << "`, and " << where << " has no row for it";
  }
  for (const auto& key : documented) {
    EXPECT_TRUE(read.contains(key)) << where << " documents `" << key << "`, which the loader does not read";
  }
}

TEST(ProfileReference, TheTopLevelAgentsSafetyOpticsAndActionsTablesListExactlyTheKeysTheLoaderReads) {
  auto page = read_reference();
  expect_same_keys(as_set(profile_keys::top_level()), page["Top level"].rows, "## Top level");
  expect_same_keys(as_set(profile_keys::agents()), page["`agents`"].rows, "### `agents`");
  expect_same_keys(as_set(profile_keys::safety()), page["`safety`"].rows, "### `safety`");
  expect_same_keys(as_set(profile_keys::optics()), page["`optics`"].rows, "### `optics`");
  expect_same_keys(as_set(profile_keys::actions()), page["`actions`"].rows, "### `actions`");
  expect_same_keys(as_set(profile_keys::series()), page["`series`"].rows, "### `series`");
  expect_same_keys(as_set(localisation_keys::min_rate_keys()), page["`localisation.min_rate`"].rows,
                   "### `localisation.min_rate`");
  expect_same_keys(as_set(localisation_keys::keys()), page["`localisation`"].rows, "### `localisation`");
}

TEST(ProfileReference, EveryTestKeyOfEveryEngineHasARowAndEveryRowIsATestKey) {
  auto page = read_reference();
  std::set<std::string> documented;
  for (const char* section : {"Every engine", "dpdk", "rdma"}) {
    EXPECT_FALSE(page[section].rows.empty()) << "docs/profile.md has no table under '" << section << "'";
    documented.insert(page[section].rows.begin(), page[section].rows.end());
  }
  const auto names = profile_schema::test_key_names();
  expect_same_keys(as_set(names), documented, "the test key tables (Every engine, dpdk, rdma)");
}

// A test key's row whose range cell starts with whole numbers, "A..B" ("0..63 each", "1..16; needs a
// rate"), and the engine whose table it is in.
struct IntegerRange {
  std::string key, engine, text;
  long long min = 0, max = 0;
  std::string min_text, max_text;
  std::string needs;                                              // a line the key needs beside it ("topology: shift")
  bool list = false;                                              // takes a list, not a single number
  std::string field() const { return list ? key + "[0]" : key; }  // as its errors name it
};

std::vector<IntegerRange> integer_ranges() {
  std::ifstream in(build_paths::source_dir() + "/docs/profile.md");
  const std::regex heading(R"(^#+ +(.*)$)");
  const std::regex row(
      R"re(^\| *`([^`]+)` *\|[^|]*\|[^|]*\| *((-?(?:0x[0-9A-Fa-f]+|[0-9]+))\.\.((?:0x[0-9A-Fa-f]+|[0-9]+)))\b)re");
  std::vector<IntegerRange> ranges;
  std::string line, section;
  while (std::getline(in, line)) {
    std::smatch match;
    if (std::regex_match(line, match, heading)) {
      section = match[1];
    } else if ((section == "Every engine" || section == "dpdk" || section == "rdma") &&
               std::regex_search(line, match, row)) {
      IntegerRange range;
      range.key = match[1];
      range.engine = section == "rdma" ? "rdma" : "dpdk";
      range.text = match[2];
      range.min_text = match[3];
      range.max_text = match[4];
      range.min = std::stoll(range.min_text, nullptr, 0);
      range.max = std::stoll(range.max_text, nullptr, 0);
      if (line.find("`topology: shift` only") != std::string::npos) range.needs = "\n    topology: shift";
      const std::string type =
          line.substr(line.find('|', 2) + 1, line.find('|', line.find('|', 2) + 1) - line.find('|', 2) - 1);
      range.list = type.find("a list") != std::string::npos && type.find("integer") == std::string::npos;
      ranges.push_back(range);
    }
  }
  return ranges;
}

// What the loader says of `key: value` in a test of `engine`: its range error, or "" for none.
std::string range_error_of(const IntegerRange& range, long long value) {
  const std::string number = std::to_string(value);
  const std::string yaml = "\nname: x\nagents: {count: 2}\ntests:\n  - name: t\n    engine: " + range.engine +
                           "\n    duration: 1s" + range.needs + "\n    " + range.key + ": " +
                           (range.list ? "[" + number + "]" : number) + "\n";
  for (const auto& error : testing::profile_errors(yaml)) {
    if (error.find("." + range.field() + ": ") != std::string::npos &&
        (error.find("minimum") != std::string::npos || error.find("maximum") != std::string::npos)) {
      return error.substr(error.find(range.field() + " "));
    }
  }
  return "";
}

// The reference's ranges are the loader's: each bound is taken, one past it refused with the
// bound the page states (the man page is generated from this page).
TEST(ProfileReference, EveryIntegerRangeOfATestKeyIsTheOneTheLoaderHolds) {
  const auto ranges = integer_ranges();
  EXPECT_GE(ranges.size(), 15u) << "the range cells of docs/profile.md's test key tables were not found";
  for (const auto& range : ranges) {
    SCOPED_TRACE(range.key + " " + range.text);
    EXPECT_EQ(range_error_of(range, range.min), "");
    EXPECT_EQ(range_error_of(range, range.max), "");
    if (range.min > 0) {
      EXPECT_EQ(range_error_of(range, range.min - 1),
                fmt::format("{} {} is below the minimum {}", range.field(), range.min - 1, range.min_text));
    }
    EXPECT_EQ(range_error_of(range, range.max + 1),
              fmt::format("{} {} is above the maximum {}", range.field(), range.max + 1, range.max_text));
  }
}

// A test key's row whose default cell starts with a value in backticks ("`1500`", "`ect0` \\| ..."),
// and the engine whose table it is in.
struct StatedDefault {
  std::string key, engine, value, needs;
};

std::vector<StatedDefault> stated_defaults() {
  std::ifstream in(build_paths::source_dir() + "/docs/profile.md");
  const std::regex heading(R"(^#+ +(.*)$)");
  const std::regex row(R"re(^\| *`([^`]+)` *\|[^|]*\| *`([^`]+)`)re");
  const std::regex escaped_bar(R"(\\\|)");  // "\|" inside a cell
  std::vector<StatedDefault> defaults;
  std::string line, section;
  bool replay = false;  // in the training-step replay's table, whose keys need a collective
  while (std::getline(in, line)) {
    std::smatch match;
    if (line.rfind("| `collective` |", 0) == 0) replay = true;
    if (line.rfind('|', 0) != 0) replay = false;
    if (std::regex_match(line, match, heading)) {
      section = match[1];
    } else if ((section == "Every engine" || section == "dpdk" || section == "rdma") &&
               std::regex_search(line = std::regex_replace(line, escaped_bar, "/"), match, row)) {
      StatedDefault stated{match[1], section == "rdma" ? "rdma" : "dpdk", match[2], ""};
      // What the row's range cell says the key needs beside it.
      if (line.find("`topology: shift` only") != std::string::npos) stated.needs += "\n    topology: shift";
      if (line.find("with `group_by`") != std::string::npos) stated.needs += "\n    group_by: leaf";
      if (line.find("with `ecmp_paths`") != std::string::npos &&
          line.find("not with `ecmp_paths`") == std::string::npos) {
        stated.needs += "\n    ecmp_paths: 2";
      }
      if (line.find("ipv4_udp only") != std::string::npos) stated.needs += "\n    encapsulation: ipv4_udp";
      if (replay) {
        stated.needs +=
            "\n    collective: all_reduce\n    collective_bytes: 1MiB\n    steps: 4\n    step_period: 100ms";
      }
      defaults.push_back(stated);
    }
  }
  return defaults;
}

// What a loaded test means to its agents and its verdict: the common fields and the engine's
// part of an agent's plan, as text.
std::string meaning_of(const Profile& profile) {
  const TestSpec& test = profile.tests.at(0);
  std::string text = fmt::format(
      "duration {} sample {} topology {} thresholds {} window {} method {} shift {} "
      "outliers {} k {} noise floor {} {}\n",
      test.duration.count(), test.sample_interval.count(), static_cast<int>(test.topology), test.thresholds.size(),
      test.window ? test.window->count() : -1, test.method.has_value(), test.shift.has_value(),
      static_cast<int>(test.outliers), test.outlier_k, test.localisation.min_rate.loss,
      test.localisation.min_rate.damage);
  if (test.shift) {
    text += fmt::format("shift: shifts {} group {} groups {} scope {}\n", fmt::join(test.shift->shifts, ","),
                        static_cast<int>(test.shift->group_by), test.shift->groups.size(),
                        static_cast<int>(test.shift->scope));
  }
  proto::Plan plan;
  find_engine(test.engine)->complete_plan(profile, test, 2, plan);
  return text + plan.DebugString();
}

// The reference's defaults are the loader's: a test that states the page's default for a key
// loads to the same test, and the same plan, as one that leaves the key out.
TEST(ProfileReference, EveryStatedDefaultOfATestKeyIsWhatTheLoaderTakesWithoutIt) {
  const auto defaults = stated_defaults();
  EXPECT_GE(defaults.size(), 40u) << "the default cells of docs/profile.md's test key tables were not found";
  for (const auto& stated : defaults) {
    if (stated.key == "engine") continue;  // `dpdk`, **required**: the cell says a test has to give it
    SCOPED_TRACE(stated.key + ": " + stated.value);
    const std::string base = "\nname: x\nagents: {count: 2}\ntests:\n  - name: t\n    engine: " + stated.engine +
                             "\n    duration: 1s" + stated.needs;
    const std::vector<std::string> errors =
        testing::profile_errors(base + "\n    " + stated.key + ": " + stated.value + "\n");
    ASSERT_TRUE(errors.empty()) << "the page's default is refused: " << errors.front();
    EXPECT_EQ(meaning_of(testing::load_profile_yaml(base + "\n    " + stated.key + ": " + stated.value + "\n")),
              meaning_of(testing::load_profile_yaml(base + "\n")));
  }
}

TEST(ProfileReference, EveryThresholdHasARowAndEveryRowIsAThreshold) {
  auto page = read_reference();
  std::set<std::string> thresholds;
  for (const auto& kind : threshold_catalog()) thresholds.insert(std::string(kind.key));
  expect_same_keys(thresholds, page["Thresholds"].rows, "## Thresholds");
}

TEST(ProfileReference, EveryMethodKindHasARowThatNamesEachOfItsKeys) {
  auto page = read_reference();
  const PageSection& methods = page["Qualification methods"];
  const auto& kinds = method_keys::kind_names();
  for (std::size_t k = 0; k < kinds.size(); ++k) {
    const std::string kind(kinds[k]);
    ASSERT_TRUE(methods.rows.contains(kind)) << "## Qualification methods has no row for the kind `" << kind << "`";
    for (const auto key : method_keys::keys_of(static_cast<MethodKind>(k))) {
      EXPECT_NE(methods.text.find("`" + std::string(key) + "`"), std::string::npos)
          << "## Qualification methods never names `" << key << "`, a key of `" << kind << "`";
    }
  }
}

}  // namespace
}  // namespace tusk
