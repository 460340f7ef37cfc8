// Budgets as a test: no product file over 600 lines and no function over 120, so that a file keeps
// one job and a function fits a reader's screen or two. The named exceptions are tables, one row a
// key, whose length is their content.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/style/planted_tree.hpp"
#include "tests/style/source_rules.hpp"
#include "tests/support/build_paths.hpp"

namespace tusk::style {
namespace {
namespace fs = std::filesystem;

const std::vector<std::string> kProductFolders = {"agent", "common", "controller"};
constexpr std::size_t kMaxFileLines = 600;
constexpr std::size_t kMaxFunctionLines = 120;
// Heads of the functions that may be longer: the engine slices' profile key tables, one key a row.
const std::vector<std::string> kTables = {"std::vector<TestKey>& keys()"};

TEST(SizeBudget, NoProductFileIsOver600Lines) {
  const auto over = files_over(build_paths::source_dir(), kProductFolders, kMaxFileLines);
  EXPECT_TRUE(over.empty()) << "split these along their seams:\n" << joined(over);
}

TEST(SizeBudget, NoProductFunctionIsOver120Lines) {
  const auto over = functions_over(build_paths::source_dir(), kProductFolders, kMaxFunctionLines, kTables);
  EXPECT_TRUE(over.empty()) << "split these into steps that have names:\n" << joined(over);
}

// Issue 58's CI: `json` was nlohmann::json in one file and ordered_json in another of the
// controller's library, which compiled apart and failed as one unity batch of the TSan tree.
TEST(UnityNames, NoNameIsBoundToTwoThingsAtNamespaceScopeInOneFolder) {
  // And the controller's unit tests, one target whose files alias json both ways. (The lab tests'
  // targets each hold one meaning; a folder is stricter than a target, and they keep theirs.)
  std::vector<std::string> folders = kProductFolders;
  folders.push_back("tests/controller");
  const auto clashes = unity_name_clashes(build_paths::source_dir(), folders);
  EXPECT_TRUE(clashes.empty()) << "give each its own name:\n" << joined(clashes);
}

std::string lines(std::size_t count, const std::string& line = "int x;") {
  std::string text;
  for (std::size_t i = 0; i < count; ++i) text += line + "\n";
  return text;
}

TEST_F(PlantedTree, A601LineFileFailsAnd600Pass) {
  plant("controller/run/long.cpp", lines(601));
  plant("controller/run/full.cpp", lines(600));
  plant("tests/huge_test.cpp", lines(5000));
  EXPECT_EQ(files_over(root_, kProductFolders, kMaxFileLines),
            (std::vector<std::string>{"controller/run/long.cpp: 601 lines"}));
}

// A body of `inner` lines between its braces is inner + 2 lines long.
std::string function_of(const std::string& head, std::size_t inner) {
  return head + " {\n" + lines(inner, "  f();") + "}\n";
}

TEST_F(PlantedTree, A121LineFunctionFailsAnd120Pass) {
  plant("agent/a.cpp", "namespace tusk {\n" + function_of("void too_long(int x)", 119) +
                           function_of("void just_fits()", 118) + "}  // namespace tusk\n");
  EXPECT_EQ(functions_over(root_, kProductFolders, kMaxFunctionLines, {}),
            (std::vector<std::string>{"agent/a.cpp:2: 121 lines: void too_long(int x)"}));
  EXPECT_TRUE(functions_over(root_, kProductFolders, kMaxFunctionLines, {"too_long"}).empty());
}

TEST(FunctionSpans, BodiesAreFoundPastCommentsStringsInitialisersAndClasses) {
  // Not R"cpp(: clang-format would lay a C++ raw string out as code.
  const std::string text = R"src(#include <x>
#define BRACE {
namespace tusk {
namespace {
struct Rows { int a{1}; std::vector<int> b = {1, 2}; };
const std::map<int, int> kTable{{1, 2}, {3, 4}};
}  // namespace
// a comment with { and (
class Foo : public Bar {
 public:
  int size() const { return n_; }
  Foo(int a) : a_{a}, b_("{(") {
    auto f = [] { return '{'; };
    if (a) {
      g(R"x(})x");
    }
  }
 private:
  int n_ = 10'000;
};
std::string Foo::name() const
{
  return "}";
}
}  // namespace tusk
)src";
  const auto spans = function_spans(text, "f.cpp");
  ASSERT_EQ(spans.size(), 3u);
  EXPECT_EQ(spans[0].first_line, 11u);
  EXPECT_EQ(spans[0].lines, 1u);
  EXPECT_EQ(spans[0].head, "public: int size() const");
  EXPECT_EQ(spans[1].first_line, 12u);
  EXPECT_EQ(spans[1].lines, 6u);
  EXPECT_EQ(spans[2].first_line, 22u);
  EXPECT_EQ(spans[2].lines, 3u);
  EXPECT_EQ(spans[2].head, "std::string Foo::name() const");
}

TEST_F(PlantedTree, ANameBoundToTwoThingsInOneFolderFailsAndInTwoFoldersPasses) {
  plant("controller/a.cpp", "namespace tusk {\nusing json = nlohmann::ordered_json;\n}\n");
  plant("controller/b/b.cpp", "namespace tusk {\nusing nlohmann::json;\nnamespace fs = std::filesystem;\n}\n");
  plant("controller/c.cpp", "namespace fs = std::filesystem;\nvoid f() {\n  using json = int;\n}\n");
  plant("agent/d.cpp", "using nlohmann::json;\n");
  EXPECT_EQ(unity_name_clashes(root_, kProductFolders),
            (std::vector<std::string>{
                "controller: json: nlohmann::json (controller/b/b.cpp) nlohmann::ordered_json (controller/a.cpp)"}));
}

}  // namespace
}  // namespace tusk::style