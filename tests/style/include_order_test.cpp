// The direction of the house as a test: docs/ARCHITECTURE.md's ```include-order block is the list,
// and no #include of the controller, the agent or common runs back up it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "tests/style/planted_tree.hpp"
#include "tests/style/source_rules.hpp"
#include "tests/support/build_paths.hpp"

namespace tusk::style {
namespace {
namespace fs = std::filesystem;

std::string architecture_text() {
  std::ifstream in(fs::path(build_paths::source_dir()) / "docs" / "ARCHITECTURE.md");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(IncludeOrder, NoIncludeRunsBackUpTheOrderTheArchitecturePageDraws) {
  const auto order = parse_include_order(architecture_text());
  std::vector<std::string> bases;
  for (const auto& line : order.lines) bases.push_back(line.base);
  EXPECT_EQ(bases, (std::vector<std::string>{".", "controller", "agent"}));
  const auto violations = include_order_violations(build_paths::source_dir(), order);
  EXPECT_TRUE(violations.empty()) << "move the code, or the room in docs/ARCHITECTURE.md's order:\n"
                                  << joined(violations);
}

// The page's rooms are described in the order's own order: whoever reads it meets each folder
// after the ones it uses.
TEST(IncludeOrder, ThePagesRoomsAreDescribedInTheOrdersOrder) {
  const auto text = architecture_text();
  for (const auto& line : parse_include_order(text).lines) {
    if (line.base == ".") continue;
    std::size_t last = 0;
    std::string last_room;
    for (const auto& level : line.levels) {
      for (const auto& room : level) {
        if (room == "." || room.find('.') != std::string::npos) continue;
        const auto at = text.find("- **`" + line.base + "/" + room + "/`**");
        ASSERT_NE(at, std::string::npos) << line.base << "/" << room << "/ has no room in the page's Rooms";
        EXPECT_GT(at, last) << line.base << "/" << room << "/ is described before " << last_room;
        last = at;
        last_room = line.base + "/" + room + "/";
      }
    }
  }
}

const char* const kOrder =
    "text\n```include-order\n"
    ".: common app\n"
    "app: low mid|side . main.cpp\n"
    "allowed: app/high/table.hpp\n"
    "```\n";

TEST_F(PlantedTree, AnUpwardIncludeASiblingsAndAnUnlistedFolderAreEachNamed) {
  plant("common/util.hpp", "#pragma once\n");
  plant("app/low/a.hpp", "#include \"common/util.hpp\"\n#include \"app/mid/b.hpp\"\n");
  plant("app/mid/b.hpp", "#include \"app/low/a.hpp\"\n#include \"app/side/c.hpp\"\n");
  plant("app/side/c.hpp", "#include <vector>\n#include \"tusk.pb.h\"\n");
  plant("app/core.hpp", "#include \"app/mid/b.hpp\"\n#include \"app/high/table.hpp\"\n");
  plant("app/main.cpp", "#include \"app/core.hpp\"\n#include \"app/side/c.hpp\"\n");
  plant("app/high/table.hpp", "#include \"app/low/a.hpp\"\n");
  plant("common/bad.cpp", "  #  include \"app/low/a.hpp\"\n");
  const auto violations = include_order_violations(root_, parse_include_order(kOrder));
  EXPECT_EQ(violations, (std::vector<std::string>{
                            "common/bad.cpp:1: includes app/low/a.hpp: app is after common in the order",
                            "app/high/table.hpp: in no room of the order of app",
                            "app/low/a.hpp:2: includes app/mid/b.hpp: app/mid is after app/low in the order",
                            "app/mid/b.hpp:2: includes app/side/c.hpp: app/mid and app/side are siblings, neither "
                            "includes the other",
                        }));
}

TEST_F(PlantedTree, TheRealTreesOrderFailsOnAPlantedUpwardInclude) {
  // The repository's own list, over a tree whose verdict/ includes run/.
  const auto order = parse_include_order(architecture_text());
  plant("controller/run/run_data.hpp", "#pragma once\n");
  plant("controller/verdict/verdict.hpp", "#pragma once\n#include \"controller/run/run_data.hpp\"\n");
  const auto violations = include_order_violations(root_, order);
  ASSERT_EQ(violations.size(), 1u) << joined(violations);
  EXPECT_EQ(violations[0],
            "controller/verdict/verdict.hpp:2: includes controller/run/run_data.hpp: controller/run is after "
            "controller/verdict in the order");
}

TEST(IncludeOrderBlock, AMalformedBlockSaysWhat) {
  EXPECT_THROW(parse_include_order("no block"), std::invalid_argument);
  EXPECT_THROW(parse_include_order("```include-order\ncontroller topology\n```\n"), std::invalid_argument);
  EXPECT_THROW(parse_include_order("```include-order\ncontroller:\n```\n"), std::invalid_argument);
  EXPECT_THROW(parse_include_order("```include-order\ncontroller: a b\n"), std::invalid_argument);
}

}  // namespace
}  // namespace tusk::style
