// The house's rules that a test holds over the source tree: which folder may include which (the
// order docs/ARCHITECTURE.md draws), and how long a file or a function may grow. Each check is a
// function of a tree, so a test can run it on the repository and on a planted tree alike.
#pragma once

#include <cstddef>
#include <filesystem>
#include <string>
#include <vector>

namespace tusk::style {

// One line of the order: the rooms under `base` ("controller", "agent", or "." for the repository's
// top folders), each allowed to include only itself and the rooms before it. A room is a folder
// under base ("run"), a file directly in base ("main.cpp"), "." for base's other files, or several
// rooms at one level that include none of each other ("dpdk|rdma").
struct RoomOrder {
  std::string base;
  std::vector<std::vector<std::string>> levels;  // levels[i]: the rooms at level i
};

struct IncludeOrder {
  std::vector<RoomOrder> lines;
  std::vector<std::string> allowed;  // headers any room may include (the engine table's look-up)
};

// The ```include-order block of a markdown text:
//   controller: topology model profile . . .
//   allowed: controller/engines/engine_slice.hpp
// Throws std::invalid_argument naming what is malformed or missing.
IncludeOrder parse_include_order(const std::string& markdown);

// Every #include "…" of a .cpp or .hpp under `root` that runs back up the order, or into a sibling,
// and every file under a base other than "." that no room holds: "file:line: why" each.
std::vector<std::string> include_order_violations(const std::filesystem::path& root, const IncludeOrder& order);

// Files under `folders` of `root` (.cpp and .hpp) longer than `max_lines`: "file: N lines" each.
std::vector<std::string> files_over(const std::filesystem::path& root, const std::vector<std::string>& folders,
                                    std::size_t max_lines);

struct FunctionSpan {
  std::string file;  // relative to the root
  std::size_t first_line = 0;
  std::size_t lines = 0;  // from the line that opens its body to the line that closes it
  std::string head;       // the declaration's text before its body, on one line
};

// Each function body (free, member, defined in a class) in one C++ text, found by its braces once
// comments, strings and characters are blanked: a brace whose statement has a parenthesis and
// opens at namespace or class level. Lambdas and local classes count toward their function.
std::vector<FunctionSpan> function_spans(const std::string& text, const std::string& file);

// Functions under `folders` of `root` longer than `max_lines`, but those whose head contains one of
// `exempt`: "file:line: N lines: head" each.
std::vector<std::string> functions_over(const std::filesystem::path& root, const std::vector<std::string>& folders,
                                        std::size_t max_lines, const std::vector<std::string>& exempt);

// Names that the .cpp files under one of `folders` bind at namespace scope (a line of its own
// starting `using NAME = …;`, `using a::b::NAME;` or `namespace NAME = …;`) to different things:
// CMake's unity builds (CI's sanitizer and fuzz trees) compile eight .cpp files of a target as one,
// where `json` meaning nlohmann::json in one and ordered_json in the next fails the build, in
// whichever batch the file list's order happens to put them. "folder: NAME: X (file), Y (file)".
std::vector<std::string> unity_name_clashes(const std::filesystem::path& root, const std::vector<std::string>& folders);

}  // namespace tusk::style
