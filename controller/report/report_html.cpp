#include <fmt/format.h>

#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "controller/report/report_assets.hpp"
#include "controller/report/report_page_model.hpp"
#include "controller/report/reports.hpp"

namespace tusk {

namespace {

// JSON inside <script type="application/json">: '<', '>' and '&' only ever occur inside strings
// there, and as \u escapes no agent name or message can close the script element.
std::string script_safe_json(const nlohmann::ordered_json& value) {
  const std::string text = value.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size() + text.size() / 64);
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "\\u003c";
        break;
      case '>':
        out += "\\u003e";
        break;
      case '&':
        out += "\\u0026";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string html_text(std::string_view text) {
  std::string out;
  for (const char c : text) {
    switch (c) {
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '&':
        out += "&amp;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// Fills the template's @NAME@ markers in the order they appear, each search starting after what
// the last one put in: a marker-like string in an agent's name is data, never a place to fill.
class TemplateFiller {
 public:
  explicit TemplateFiller(std::string_view page) : page_(page) {}
  void fill(std::string_view marker, std::string_view content) {
    const auto at = page_.find(marker, next_);
    if (at == std::string::npos)
      throw std::logic_error(fmt::format("report page template: no {} after offset {}", marker, next_));
    page_.replace(at, marker.size(), content);
    next_ = at + content.size();
  }
  std::string take() { return std::move(page_); }
  // The page up to `marker`, filled so far, taken out: the filler goes on with what follows it.
  std::string take_before(std::string_view marker) {
    const auto at = page_.find(marker, next_);
    if (at == std::string::npos)
      throw std::logic_error(fmt::format("report page template: no {} after offset {}", marker, next_));
    std::string before = page_.substr(0, at);
    page_.erase(0, at + marker.size());
    next_ = 0;
    return before;
  }

 private:
  std::string page_;
  std::size_t next_ = 0;
};

// A test's model as script_safe_json writes it whole, its streams' series written a stream at a
// time into the "series" column the model leaves empty.
void write_test_model(const TestModel& test, std::ostream& out) {
  const auto write_members = [&out](const nlohmann::ordered_json& object, const auto& write_value) {
    out << '{';
    bool first = true;
    for (const auto& [key, value] : object.items()) {
      if (!first) out << ',';
      first = false;
      out << script_safe_json(nlohmann::ordered_json(key)) << ':';
      write_value(key, value);
    }
    out << '}';
  };
  write_members(test.model, [&](const std::string& key, const nlohmann::ordered_json& value) {
    if (key != "streams" || !value.is_object()) {
      out << script_safe_json(value);
      return;
    }
    write_members(value, [&](const std::string& column, const nlohmann::ordered_json& entries) {
      if (column != "series") {
        out << script_safe_json(entries);
        return;
      }
      out << '[';
      for (std::size_t i = 0; i < test.streams; ++i) {
        if (i > 0) out << ',';
        out << script_safe_json(test.series(i));
      }
      out << ']';
    });
  });
}

}  // namespace

void write_report_html(const nlohmann::ordered_json& report, const WholeStream& whole_stream, std::ostream& out) {
  const nlohmann::ordered_json head = report_page_model_head(report);
  TemplateFiller page(report_assets::kPageTemplate);
  const auto& run_id = head["run"]["run_id"];
  page.fill("@TUSK_TITLE@", html_text("Tusk " + (run_id.is_string() ? run_id.get<std::string>() : std::string())));
  page.fill("@TUSK_UPLOT_STYLE@", report_assets::kUplotStyle);
  page.fill("@TUSK_PAGE_STYLE@", report_assets::kPageStyle);
  out << page.take_before("@TUSK_PAGE_MODEL@");
  // The model's text as one dump would write it, its last member's array ("tests") a test at a
  // time: a night's page model is never whole in memory, nor its text.
  const std::string text = script_safe_json(head);
  constexpr std::string_view kEmptyTestsEnd = "[]}";
  if (!std::string_view(text).ends_with(kEmptyTestsEnd)) throw std::logic_error("report page model: tests not last");
  out.write(text.data(), static_cast<std::streamsize>(text.size() - kEmptyTestsEnd.size()));
  out << '[';
  bool first = true;
  for_each_test_model(report, whole_stream, [&](TestModel test) {
    if (!first) out << ',';
    first = false;
    write_test_model(test, out);
  });
  out << "]}";
  page.fill("@TUSK_UPLOT_SCRIPT@", report_assets::kUplotScript);
  page.fill("@TUSK_EVIDENCE_SCRIPT@", report_assets::kEvidenceScript);
  page.fill("@TUSK_PAGE_SCRIPT@", report_assets::kPageScript);
  out << page.take();
}

std::string report_html(const nlohmann::ordered_json& report) {
  std::ostringstream out;
  write_report_html(report, WholeStream{}, out);
  return out.str();
}

}  // namespace tusk
