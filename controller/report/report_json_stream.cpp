// report.json written as it is made: the document's head, then each test's head with its streams
// one at a time, so that no more than one test's head or one stream is a JSON value in memory at
// once (a checkpoint of 4,032 streams built the whole document and its text: 3-4 x the run's
// steady memory). The text is json_text(report_json(outcome)) to the byte: the same members in
// the same order, indented as nlohmann's dump(2) indents them.
#include <functional>
#include <ostream>
#include <string>

#include "common/json_text.hpp"
#include "controller/report/report_json_parts.hpp"
#include "controller/report/reports.hpp"

namespace tusk {

namespace {

using json = nlohmann::ordered_json;
constexpr int kIndent = 2;  // json_text's

std::string indentation(int depth) {
  return std::string(static_cast<std::size_t>(kIndent * depth), ' ');
}

// `value` as json_text writes it, `depth` levels in: each line after the first takes the depth's
// indentation (a newline in the text is always one between members: strings escape theirs).
void put_value(std::ostream& out, const json& value, int depth) {
  const std::string text = json_text(value, kIndent);
  const std::string prefix = indentation(depth);
  std::size_t from = 0;
  for (std::size_t newline = text.find('\n'); newline != std::string::npos; newline = text.find('\n', from)) {
    out.write(text.data() + from, static_cast<std::streamsize>(newline + 1 - from));
    out << prefix;
    from = newline + 1;
  }
  out.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
}

// An array of `count` elements, each written by `element(i, depth)`.
void put_array(std::ostream& out, std::size_t count, int depth, const std::function<void(std::size_t, int)>& element) {
  if (count == 0) {
    out << "[]";
    return;
  }
  out << "[\n";
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) out << ",\n";
    out << indentation(depth + 1);
    element(i, depth + 1);
  }
  out << '\n' << indentation(depth) << ']';
}

// An object's members in order; `member(key, depth)` writes a member's value itself and says so,
// or leaves it to put_value.
void put_object(std::ostream& out, const json& object, int depth,
                const std::function<bool(const std::string&, int)>& member) {
  if (object.empty()) {
    out << "{}";
    return;
  }
  out << "{\n";
  bool first = true;
  for (auto it = object.begin(); it != object.end(); ++it) {
    if (!first) out << ",\n";
    first = false;
    out << indentation(depth + 1) << json_text(json(it.key()), kIndent) << ": ";
    if (!member(it.key(), depth + 1)) put_value(out, it.value(), depth + 1);
  }
  out << '\n' << indentation(depth) << '}';
}

void put_test(std::ostream& out, const TestOutcome& test, int depth) {
  const std::uint32_t bin_width = test_bin_width(test);
  put_object(out, test_json_head(test), depth, [&](const std::string& key, int at) {
    if (key != "streams") return false;
    put_array(out, test.streams.size(), at,
              [&](std::size_t i, int in) { put_value(out, test_stream_json(test, test.streams[i], bin_width), in); });
    return true;
  });
}

}  // namespace

void write_report_json(const RunOutcome& outcome, std::ostream& out, const json& summary) {
  json head = report_json_head(outcome);
  for (auto it = summary.begin(); it != summary.end(); ++it) {
    if (!head.contains(it.key())) head[it.key()] = it.value();
  }
  put_object(out, head, 0, [&](const std::string& key, int depth) {
    if (key != "tests") return false;
    put_array(out, outcome.tests.size(), depth, [&](std::size_t i, int in) { put_test(out, outcome.tests[i], in); });
    return true;
  });
}

}  // namespace tusk
