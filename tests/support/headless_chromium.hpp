// Opens a report.html as a person would, in Debian's headless Chromium: what the page drew (its
// DOM after the scripts ran), what the browser logged (console errors, blocked requests), and a
// screenshot. The page writes its own checkable state into data- attributes (report.js).
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace tusk::testing {

struct RenderedPage {
  int status = -1;
  std::string dom;  // the DOM after the page's scripts ran
  std::string log;  // Chromium's stderr, console messages included
  // Console errors, uncaught exceptions and Content-Security-Policy refusals in the log.
  std::vector<std::string> console_errors() const {
    std::vector<std::string> errors;
    std::istringstream lines(log);
    for (std::string line; std::getline(lines, line);) {
      const bool console = line.find("CONSOLE") != std::string::npos;
      if ((console && (line.find("rror") != std::string::npos || line.find("Uncaught") != std::string::npos)) ||
          line.find("Content Security Policy") != std::string::npos || line.find("Refused to") != std::string::npos) {
        errors.push_back(line);
      }
    }
    return errors;
  }
  // data-NAME="..." of the first element that has it, HTML entities decoded.
  std::optional<std::string> attribute(const std::string& name) const {
    const std::regex pattern("data-" + name + "=\"([^\"]*)\"");
    std::smatch match;
    if (!std::regex_search(dom, match, pattern)) return std::nullopt;
    std::string value = match[1];
    for (const auto& [entity, text] : std::vector<std::pair<std::string, std::string>>{
             {"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&#39;", "'"}, {"&amp;", "&"}}) {
      for (auto at = value.find(entity); at != std::string::npos; at = value.find(entity, at + text.size())) {
        value.replace(at, entity.size(), text);
      }
    }
    return value;
  }
};

class HeadlessChromium {
 public:
  static std::string binary() {
    for (const char* candidate : {"/usr/bin/chromium", "/usr/bin/chromium-browser"}) {
      if (::access(candidate, X_OK) == 0) return candidate;
    }
    return {};
  }
  static bool available() { return !binary().empty(); }

  // Loads `page` and returns its DOM once the page's scripts ran (virtual time lets timers finish).
  static RenderedPage render(const std::string& page, const std::string& scratch) {
    const std::string dom = scratch + "/dom.html", log = scratch + "/chromium.log";
    RenderedPage out;
    out.status =
        run(common_flags(scratch) + " --enable-logging=stderr --v=0 --virtual-time-budget=10000 --dump-dom " +
            quoted("file://" + std::filesystem::absolute(page).string()) + " >" + quoted(dom) + " 2>" + quoted(log));
    out.dom = read(dom);
    out.log = read(log);
    return out;
  }

  static int screenshot(const std::string& page, const std::string& png, const std::string& scratch, int width = 1400,
                        int height = 2000) {
    return run(common_flags(scratch) + " --hide-scrollbars --window-size=" + std::to_string(width) + "," +
               std::to_string(height) + " --screenshot=" + quoted(png) + " " +
               quoted("file://" + std::filesystem::absolute(page).string()) + " >/dev/null 2>&1");
  }

 private:
  static std::string quoted(const std::string& text) { return "'" + text + "'"; }
  static std::string common_flags(const std::string& scratch) {
    // A profile of its own per call, no sandbox (tests run as root), no GPU on a server.
    return quoted(binary()) + " --headless=new --no-sandbox --disable-gpu --no-first-run --disable-extensions " +
           "--user-data-dir=" + quoted(scratch + "/chromium-profile");
  }
  static int run(const std::string& command) {
    const int status = std::system(("timeout 120 " + command).c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }
  static std::string read(const std::string& path) {
    std::ifstream file(path);
    return std::string(std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>());
  }
};

}  // namespace tusk::testing
