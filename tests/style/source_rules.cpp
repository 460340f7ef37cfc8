#include "tests/style/source_rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace tusk::style {
namespace fs = std::filesystem;
namespace {

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> words_of(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> words;
  for (std::string word; in >> word;) words.push_back(word);
  return words;
}

bool is_source(const fs::path& path) {
  return path.extension() == ".cpp" || path.extension() == ".hpp";
}

// The .cpp and .hpp files under root/folder, relative to root with '/', sorted.
std::vector<std::string> sources_under(const fs::path& root, const std::string& folder) {
  std::vector<std::string> files;
  const fs::path top = folder == "." ? root : root / folder;
  if (!fs::is_directory(top)) return files;
  for (auto it = fs::recursive_directory_iterator(top); it != fs::recursive_directory_iterator(); ++it) {
    const auto name = it->path().filename().string();
    if (it->is_directory() && (name.empty() || name[0] == '.' || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && is_source(it->path()))
      files.push_back(fs::relative(it->path(), root).generic_string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

// The level of `path` (relative to the root) in `line`, and the room's name there.
std::optional<std::pair<std::size_t, std::string>> room_of(const RoomOrder& line, const std::string& path) {
  std::string rel = path;
  if (line.base != ".") {
    if (path.rfind(line.base + "/", 0) != 0) return std::nullopt;
    rel = path.substr(line.base.size() + 1);
  }
  const auto slash = rel.find('/');
  const std::string folder = slash == std::string::npos ? "" : rel.substr(0, slash);
  std::optional<std::pair<std::size_t, std::string>> by_folder, by_dot;
  for (std::size_t level = 0; level < line.levels.size(); ++level) {
    for (const auto& room : line.levels[level]) {
      if (room == rel) return std::pair(level, room);  // a file of its own
      if (!folder.empty() && room == folder) by_folder = std::pair(level, room);
      if (folder.empty() && room == ".") by_dot = std::pair(level, room);
    }
  }
  return by_folder ? by_folder : by_dot;
}

std::string room_text(const RoomOrder& line, const std::string& room) {
  if (line.base == ".") return room;
  return room == "." ? line.base + "/*" : line.base + "/" + room;
}

}  // namespace

IncludeOrder parse_include_order(const std::string& markdown) {
  const auto open = markdown.find("```include-order\n");
  if (open == std::string::npos) throw std::invalid_argument("no ```include-order block");
  const auto body = open + std::string("```include-order\n").size();
  const auto close = markdown.find("```", body);
  if (close == std::string::npos) throw std::invalid_argument("the ```include-order block is not closed");
  IncludeOrder order;
  std::istringstream lines(markdown.substr(body, close - body));
  for (std::string text; std::getline(lines, text);) {
    auto words = words_of(text);
    if (words.empty()) continue;
    const std::string key = words.front();
    if (key.size() < 2 || key.back() != ':') throw std::invalid_argument("include-order: not `base: rooms`: " + text);
    words.erase(words.begin());
    if (words.empty()) throw std::invalid_argument("include-order: no rooms: " + text);
    if (key == "allowed:") {
      order.allowed.insert(order.allowed.end(), words.begin(), words.end());
      continue;
    }
    RoomOrder line{key.substr(0, key.size() - 1), {}};
    for (const auto& word : words) {
      std::vector<std::string> level;
      std::istringstream rooms(word);
      for (std::string room; std::getline(rooms, room, '|');) level.push_back(room);
      line.levels.push_back(level);
    }
    order.lines.push_back(line);
  }
  if (order.lines.empty()) throw std::invalid_argument("include-order: the block lists no rooms");
  return order;
}

std::vector<std::string> include_order_violations(const fs::path& root, const IncludeOrder& order) {
  static const std::regex kInclude(R"re(^\s*#\s*include\s*"([^"]+)")re");
  std::vector<std::string> found;
  for (const auto& line : order.lines) {
    for (const auto& file : sources_under(root, line.base)) {
      const auto from = room_of(line, file);
      if (!from) {
        if (line.base != ".") found.push_back(fmt::format("{}: in no room of the order of {}", file, line.base));
        continue;
      }
      std::ifstream in(root / file);
      std::size_t number = 0;
      for (std::string text; std::getline(in, text);) {
        ++number;
        std::smatch match;
        if (!std::regex_search(text, match, kInclude)) continue;
        const std::string target = match[1];
        if (std::find(order.allowed.begin(), order.allowed.end(), target) != order.allowed.end()) continue;
        const auto to = room_of(line, target);
        if (!to) continue;
        if (to->first > from->first) {
          found.push_back(fmt::format("{}:{}: includes {}: {} is after {} in the order", file, number, target,
                                      room_text(line, to->second), room_text(line, from->second)));
        } else if (to->first == from->first && to->second != from->second) {
          found.push_back(fmt::format("{}:{}: includes {}: {} and {} are siblings, neither includes the other", file,
                                      number, target, room_text(line, from->second), room_text(line, to->second)));
        }
      }
    }
  }
  return found;
}

std::vector<std::string> files_over(const fs::path& root, const std::vector<std::string>& folders,
                                    std::size_t max_lines) {
  std::vector<std::string> found;
  for (const auto& folder : folders) {
    for (const auto& file : sources_under(root, folder)) {
      const auto text = read_text(root / file);
      const auto lines = static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
      if (lines > max_lines) found.push_back(fmt::format("{}: {} lines", file, lines));
    }
  }
  return found;
}

namespace {

// The text with comments, string and character literals and preprocessor lines blanked (newlines
// kept), so that braces and parentheses are the code's own.
std::string code_only(const std::string& text) {
  std::string out = text;
  auto blank = [&out](std::size_t from, std::size_t to) {
    for (std::size_t i = from; i < to && i < out.size(); ++i) {
      if (out[i] != '\n') out[i] = ' ';
    }
  };
  std::size_t i = 0;
  bool line_start = true;
  while (i < text.size()) {
    const char c = text[i];
    if (line_start && c == '#') {  // a directive, with its continuation lines
      std::size_t end = i;
      while (end < text.size() && !(text[end] == '\n' && text[end - 1] != '\\')) ++end;
      blank(i, end);
      i = end;
      continue;
    }
    if (c == '\n') {
      line_start = true;
      ++i;
      continue;
    }
    if (c != ' ' && c != '\t') line_start = false;
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      const auto end = std::min(text.find('\n', i), text.size());
      blank(i, end);
      i = end;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      const auto close = text.find("*/", i + 2);
      const auto end = close == std::string::npos ? text.size() : close + 2;
      blank(i, end);
      i = end;
    } else if (c == 'R' && i + 1 < text.size() && text[i + 1] == '"' &&
               (i == 0 || !(std::isalnum(static_cast<unsigned char>(text[i - 1])) || text[i - 1] == '_'))) {
      const auto paren = text.find('(', i + 2);
      const std::string delimiter = ")" + text.substr(i + 2, paren - (i + 2)) + "\"";
      const auto close = text.find(delimiter, paren);
      const auto end = close == std::string::npos ? text.size() : close + delimiter.size();
      blank(i + 1, end);
      i = end;
    } else if (c == '"' || (c == '\'' && (i == 0 || !std::isalnum(static_cast<unsigned char>(text[i - 1]))))) {
      std::size_t end = i + 1;  // a ' after a digit or letter is a digit separator (10'000)
      while (end < text.size() && text[end] != c && text[end] != '\n') end += text[end] == '\\' ? 2 : 1;
      blank(i + 1, std::min(end, text.size()));
      i = end + 1;
    } else {
      ++i;
    }
  }
  return out;
}

enum class Scope { Namespace, Class, Function, Other };

bool has_word(const std::string& text, const std::string& word) {
  return std::regex_search(text, std::regex("\\b" + word + "\\b"));
}

// What a brace opened at namespace or class level begins, from the statement before it.
Scope opened_by(const std::string& statement) {
  if (has_word(statement, "namespace") || has_word(statement, "extern")) return Scope::Namespace;
  const auto paren = statement.find('(');
  if (has_word(statement, "operator")) return Scope::Function;
  if (paren != std::string::npos) {
    const auto equals = statement.find('=');
    return equals != std::string::npos && equals < paren ? Scope::Other : Scope::Function;
  }
  if (std::regex_search(statement, std::regex(R"(\b(class|struct|union|enum)\b)"))) return Scope::Class;
  return Scope::Other;
}

std::string one_line(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c))) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += c;
    }
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out.size() > 120 ? out.substr(0, 117) + "..." : out;
}

}  // namespace

std::vector<FunctionSpan> function_spans(const std::string& text, const std::string& file) {
  const std::string code = code_only(text);
  std::vector<FunctionSpan> spans;
  struct Open {
    Scope scope;
    std::size_t line;
    std::string statement;  // the statement before it, for its head, and to resume after an initializer
  };
  std::vector<Open> stack;
  std::string statement;
  std::size_t line = 1;
  for (std::size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '\n') ++line;
    const Scope here = stack.empty() ? Scope::Namespace : stack.back().scope;
    const bool outside = here == Scope::Namespace || here == Scope::Class;
    if (c == '{') {
      stack.push_back({outside ? opened_by(statement) : Scope::Other, line, statement});
      statement.clear();
    } else if (c == '}') {
      if (stack.empty()) continue;
      const Open open = stack.back();
      stack.pop_back();
      statement.clear();
      if (open.scope != Scope::Function) continue;
      auto next = code.find_first_not_of(" \t\n", i + 1);
      const char after = next == std::string::npos ? ';' : code[next];
      if (after == ',' || after == '{' || after == ')') {  // a member's brace initializer, not a body
        statement = open.statement + "{}";
        continue;
      }
      spans.push_back({file, open.line, line - open.line + 1, one_line(open.statement)});
    } else if (c == ';') {
      statement.clear();
    } else if (outside) {
      statement += c;
    }
  }
  return spans;
}

std::vector<std::string> functions_over(const fs::path& root, const std::vector<std::string>& folders,
                                        std::size_t max_lines, const std::vector<std::string>& exempt) {
  std::vector<std::string> found;
  for (const auto& folder : folders) {
    for (const auto& file : sources_under(root, folder)) {
      for (const auto& span : function_spans(read_text(root / file), file)) {
        if (span.lines <= max_lines) continue;
        const bool excused = std::any_of(exempt.begin(), exempt.end(), [&span](const std::string& name) {
          return span.head.find(name) != std::string::npos;
        });
        if (!excused) found.push_back(fmt::format("{}:{}: {} lines: {}", file, span.first_line, span.lines, span.head));
      }
    }
  }
  return found;
}

std::vector<std::string> unity_name_clashes(const fs::path& root, const std::vector<std::string>& folders) {
  static const std::regex kAlias(R"re(^(?:using|namespace)\s+(\w+)\s*=\s*([^;]+);)re");
  static const std::regex kDeclaration(R"re(^using\s+((?:\w+::)+)(\w+)\s*;)re");
  std::vector<std::string> clashes;
  for (const auto& folder : folders) {
    std::map<std::string, std::map<std::string, std::string>> bound;  // name -> what -> first file
    for (const auto& file : sources_under(root, folder)) {
      if (fs::path(file).extension() != ".cpp") continue;
      std::istringstream text(read_text(root / file));
      for (std::string line; std::getline(text, line);) {
        std::smatch match;
        if (std::regex_search(line, match, kAlias)) {
          bound[match[1]].try_emplace(match[2], file);
        } else if (std::regex_search(line, match, kDeclaration)) {
          bound[match[2]].try_emplace(match[1].str() + match[2].str(), file);
        }
      }
    }
    for (const auto& [name, meanings] : bound) {
      if (meanings.size() < 2) continue;
      std::string text = fmt::format("{}: {}:", folder, name);
      for (const auto& [what, file] : meanings) text += fmt::format(" {} ({})", what, file);
      clashes.push_back(text);
    }
  }
  return clashes;
}

}  // namespace tusk::style
