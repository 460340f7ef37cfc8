// Where a run's reports go and what they are made of: any byte a profile, a peer or a path holds
// ends up in a report that parses; a failed write leaves no half file; the fallback directory is
// the controller's own, never one another local user placed.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "common/exit_codes.hpp"
#include "common/json_text.hpp"
#include "controller/history/history_rows.hpp"
#include "controller/method/method_result.hpp"
#include "controller/offline_commands.hpp"
#include "controller/report/report_page_model.hpp"
#include "controller/report/reports.hpp"
#include "tests/support/named_sample.hpp"

namespace tusk {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::ordered_json;

class ReportOutput : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/tusk-report-output-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    dir_ = name;
    outcome_.run_id = "20261126-000000-abcd";
    outcome_.profile.name = "latin-1";
    // A profile whose comment was saved as Latin-1 ("# caf\xe9"): the test passed, then the
    // strict JSON writer threw and the whole run was lost.
    outcome_.profile.source = "name: latin-1\n# caf\xe9\n";
    outcome_.faults.push_back({0, "agent-\xff", -1, "a fault from a directory named \xff\xfe"});
  }
  void TearDown() override { fs::remove_all(dir_); }

  static std::string read(const fs::path& path) {
    std::ifstream file(path);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
  }

  std::string dir_;
  RunOutcome outcome_;
};

TEST_F(ReportOutput, BytesThatAreNotUtf8AreWrittenAsReplacementCharactersNotLost) {
  const std::string out = dir_ + "/run";
  std::ostringstream stdout_text;
  ASSERT_FALSE(write_reports_somewhere(outcome_, report_json(outcome_), out, dir_, stdout_text));
  const json report = json::parse(read(out + "/report.json"));
  EXPECT_NE(report.dump().find("caf\xef\xbf\xbd"), std::string::npos);
  EXPECT_TRUE(fs::exists(out + "/report.html"));
  EXPECT_TRUE(fs::exists(out + "/junit.xml"));
  for (const auto& entry : fs::directory_iterator(out)) {
    EXPECT_EQ(entry.path().filename().string().find(".XXXXXX"), std::string::npos) << entry.path();
    EXPECT_EQ(entry.path().filename().string().find("report.json."), std::string::npos) << entry.path();
  }
}

// Issue 59: a checkpoint is written a test and a stream at a time, never as one document; what it
// writes is the document's text to the byte, whatever the report holds: no test, an empty test,
// streams with their bins and bytes that are not UTF-8, a method's steps with theirs.
TEST_F(ReportOutput, TheReportWrittenAStreamAtATimeIsTheWholeDocumentsTextToTheByte) {
  const auto written = [](const RunOutcome& outcome) {
    std::ostringstream out;
    write_report_json(outcome, out);
    return out.str();
  };
  EXPECT_EQ(written(outcome_), json_text(report_json(outcome_))) << "no test";
  TestOutcome empty;
  empty.spec.name = "nothing ran";
  outcome_.tests.push_back(empty);
  TestOutcome test;
  test.index = 1;
  test.spec.name = "pairs";
  test.agents = {"a", "b"};
  for (const std::string agent : {"a", "b"}) {
    auto& data = test.per_agent[agent];
    for (std::uint32_t s = 1; s <= 3; ++s) {
      data.samples.insert(s);
      for (int i = 0; i < 3; ++i) {
        proto::StreamCounters stream;
        stream.set_stream_id(fmt::format("rx:{}/{}\xff", agent, i));
        (*stream.mutable_counters())["rx_bytes"] = 1250 * s;
        (*stream.mutable_counters())["lost_frames"] = s == 3 && i == 1 ? 7 : 0;
        testing::add_named(data.series[stream.stream_id()], s, 1000 * s, std::move(stream));
      }
    }
    for (int i = 0; i < 3; ++i) {
      StreamVerdict verdict;
      verdict.agent = agent;
      verdict.stream.set_stream_id(fmt::format("rx:{}/{}\xff", agent, i));
      verdict.stream.set_kind("rx");
      verdict.metrics["throughput_bps"] = 1e4 * (i + 1);
      test.streams.push_back(std::move(verdict));
    }
  }
  test.problems = {"a: samples missing: 4"};
  TestOutcome method_test = test;
  method_test.index = 2;
  auto method = std::make_shared<MethodResult>();
  method->kind = MethodKind::Sweep;
  method->steps.push_back(MethodStep{});
  method->step_outcomes.push_back(test);
  method_test.method = method;
  outcome_.tests.push_back(std::move(test));
  outcome_.tests.push_back(std::move(method_test));
  const std::string text = written(outcome_);
  EXPECT_EQ(text, json_text(report_json(outcome_)));
  EXPECT_EQ(json::parse(text)["tests"][1]["streams"].size(), 6u);

  // A checkpoint is that text, with the line's end.
  const std::string out = dir_ + "/checkpoint";
  outcome_.checkpoint_ns = 1;
  write_checkpoint(outcome_, out);
  EXPECT_EQ(read(out + "/report.json"), json_text(report_json(outcome_)) + "\n");
  // The run's own final report replaces its checkpoint, which is read only as far as its run id
  // and status; another run's report is never replaced.
  RunOutcome other = outcome_;
  other.run_id = "20261126-000000-ffff";
  other.checkpoint_ns = 0;
  EXPECT_THROW(write_reports(other, report_json(other), out), std::runtime_error);
  outcome_.checkpoint_ns = 0;
  write_reports(outcome_, report_json(outcome_), out);
  EXPECT_EQ(json::parse(read(out + "/report.json"))["status"], "finished");
}

// The run's own report is written from its summary without the streams' bins (what the summary
// table, the baseline, the history and the actions read) and the outcome, a test at a time: the
// document with its bins doubled the controller's memory as a run of 4,032 streams ended. Its
// report.json, its page and its stdout fallback are still the whole document's, to the byte,
// with the comparison with a baseline last.
TEST_F(ReportOutput, TheRunsReportFromItsSummaryWithoutBinsIsTheWholeDocumentToTheByte) {
  TestOutcome test;
  test.index = 0;
  test.spec.name = "pairs";
  test.agents = {"a"};
  auto& data = test.per_agent["a"];
  for (std::uint32_t s = 1; s <= 4; ++s) {
    data.samples.insert(s);
    proto::StreamCounters stream;
    stream.set_stream_id("rx:a/0");
    (*stream.mutable_counters())["rx_bytes"] = 1250 * s;
    testing::add_named(data.series[stream.stream_id()], s, 1000 * s, std::move(stream));
  }
  StreamVerdict verdict;
  verdict.agent = "a";
  verdict.stream.set_stream_id("rx:a/0");
  verdict.stream.set_kind("rx");
  test.streams.push_back(verdict);
  TestOutcome method_test = test;
  method_test.index = 1;
  auto method = std::make_shared<MethodResult>();
  method->steps.push_back(MethodStep{});
  method->step_outcomes.push_back(test);
  method_test.method = method;
  outcome_.tests.push_back(std::move(test));
  outcome_.tests.push_back(std::move(method_test));

  json summary = report_json(outcome_, StreamBins::Left);
  EXPECT_FALSE(summary["tests"][0]["streams"][0].contains("bins"));
  EXPECT_FALSE(summary["tests"][1]["method"]["steps"][0]["test"]["streams"][0].contains("bins"));
  const json baseline = {{"run_id", "20261125-000000-0000"}, {"regression_count", 0}};
  summary["baseline"] = baseline;
  json whole = report_json(outcome_);
  ASSERT_TRUE(whole["tests"][0]["streams"][0]["bins"].is_object());
  whole["baseline"] = baseline;

  const std::string out = dir_ + "/run";
  std::ostringstream no_stdout;
  ASSERT_FALSE(write_reports_somewhere(outcome_, summary, out, dir_, no_stdout));
  EXPECT_EQ(read(out + "/report.json"), json_text(whole) + "\n");
  const std::string page = read(out + "/report.html");
  EXPECT_EQ(page, report_html(whole));
  // The page's model, written a test at a time, is the whole model's one dump.
  const std::string open = "<script id=\"report-data\" type=\"application/json\">";
  const auto from = page.find(open);
  ASSERT_NE(from, std::string::npos);
  const auto to = page.find("</script>", from);
  EXPECT_EQ(page.substr(from + open.size(), to - from - open.size()),
            report_page_model(whole).dump(-1, ' ', false, json::error_handler_t::replace));
  // Neither the directory nor a fallback: the same text on stdout.
  std::ostringstream stdout_text;
  const auto fallback = write_reports_somewhere(outcome_, summary, out, "", stdout_text);
  ASSERT_TRUE(fallback);
  EXPECT_EQ(fallback->written_to, "-");
  EXPECT_EQ(stdout_text.str(), json_text(whole) + "\n");
}

TEST_F(ReportOutput, AFileThatCannotBeWrittenLeavesNoHalfFileAndTheOldOneWhole) {
  const std::string out = dir_ + "/run";
  fs::create_directories(out + "/report.html");  // a directory in the way of the page
  std::ofstream(out + "/report.html/keep") << "x";
  std::ostringstream stdout_text;
  const auto fallback = write_reports_somewhere(outcome_, report_json(outcome_), out, "", stdout_text);
  ASSERT_TRUE(fallback);
  EXPECT_EQ(fallback->written_to, "-");
  EXPECT_NE(fallback->error.find("cannot write '" + out + "/report.html'"), std::string::npos) << fallback->error;
  // Nothing half-written stays beside the files, and stdout has the whole report.
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    EXPECT_TRUE(name == "report.json" || name == "junit.xml" || name == "report.html") << name;
  }
  EXPECT_EQ(json::parse(stdout_text.str())["run_id"], outcome_.run_id);
}

// Before: `run --out DIR` twice replaced the first run's report without a word, and the history
// still named DIR as the first run's.
TEST_F(ReportOutput, ADirectoryThatHoldsAReportIsRefusedBeforeTheRunAndNeverWrittenOver) {
  const std::string out = dir_ + "/run";
  check_report_directory(out);  // new: fine
  std::ostringstream stdout_text;
  ASSERT_FALSE(write_reports_somewhere(outcome_, report_json(outcome_), out, dir_, stdout_text));
  const std::string first = read(out + "/report.json");
  try {
    check_report_directory(out);
    FAIL() << "a directory holding a report was accepted";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(
        std::string(e.what()).find("'" + out + "' already holds run " + outcome_.run_id + "'s report (report.json)"),
        std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("never overwritten"), std::string::npos) << e.what();
  }
  // One file of a report is enough to refuse it, whichever it is.
  const std::string partial = dir_ + "/partial";
  fs::create_directories(partial);
  std::ofstream(partial + "/junit.xml") << "<testsuites/>\n";
  EXPECT_THROW(check_report_directory(partial), std::runtime_error);

  // Another run that wrote there meanwhile (both checked the directory while it was empty): the
  // second's report goes to a directory of its own, and the first stays whole.
  RunOutcome second = outcome_;
  second.run_id = "20261126-000001-beef";
  const auto fallback = write_reports_somewhere(second, report_json(second), out, dir_, stdout_text);
  ASSERT_TRUE(fallback);
  EXPECT_NE(
      fallback->error.find("cannot write '" + out + "/report.json': it exists, and a report is never overwritten"),
      std::string::npos)
      << fallback->error;
  EXPECT_EQ(read(out + "/report.json"), first);
  EXPECT_EQ(json::parse(read(fallback->written_to + "/report.json"))["run_id"], second.run_id);
}

// Before: the receiver's testcase read "lab-b:rx:lab-a/1 -> lab-a", backwards: the flow is lab-a -> lab-b.
TEST_F(ReportOutput, AJunitTestcaseNamesItsTrafficsDirectionThenWhereItWasMeasured) {
  TestOutcome test;
  test.spec.name = "cable";
  StreamVerdict received;
  received.agent = "lab-b";
  received.stream.set_stream_id("rx:lab-a/1");
  received.stream.set_kind("rx");
  received.stream.set_peer("lab-a");
  StreamVerdict sent = received;
  sent.agent = "lab-a";
  sent.stream.set_stream_id("flow:lab-b/qp0");
  sent.stream.set_kind("flow");
  sent.stream.set_peer("lab-b");
  // A stream with no peer (a NIC's counters) keeps the name pipelines have keyed on: agent:stream.
  StreamVerdict nic;
  nic.agent = "vm1";
  nic.stream.set_stream_id("nic:rxe0/1");
  nic.stream.set_kind("nic");
  test.streams = {received, sent, nic};
  outcome_.tests.push_back(test);
  const std::string junit = report_junit(outcome_);
  EXPECT_NE(junit.find("name=\"lab-a -&gt; lab-b (lab-b rx:lab-a/1)\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("name=\"lab-a -&gt; lab-b (lab-a flow:lab-b/qp0)\""), std::string::npos) << junit;
  EXPECT_NE(junit.find("name=\"vm1:nic:rxe0/1\""), std::string::npos) << junit;
}

// Before: the fallback was the fixed $TMPDIR/tusk-reports/<run id>, followed through a link
// another local user had placed there.
// A DPDK port that received test frames whose damaged header named no stream says so once, in the
// summary's and report.json's warnings, though every receiving stream of it carries the count.
TEST(ReaderWarnings, FramesDamagedBeyondTellingTheirStreamAreSaidOnceAPort) {
  TestOutcome test;
  for (const char* peer : {"lab-a", "lab-c"}) {
    StreamVerdict received;
    received.agent = "lab-b";
    received.stream.set_kind("rx");
    received.stream.set_peer(peer);
    (*received.stream.mutable_counters())["bad_headers_unattributed"] = 3;
    test.streams.push_back(received);
  }
  const auto lines = reader_warnings(test);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0],
            "lab-b: 3 test frames arrived with their Tusk header damaged beyond telling their stream: damaged frames "
            "of no stream, and lost frames of the streams they belonged to");
  test.streams.front().stream.mutable_counters()->at("bad_headers_unattributed") = 0;
  test.streams.back().stream.mutable_counters()->at("bad_headers_unattributed") = 0;
  EXPECT_TRUE(reader_warnings(test).empty());
}

TEST_F(ReportOutput, TheFallbackIsANewPrivateDirectoryNeverALinkPlacedInTheSharedParent) {
  const std::string victim = dir_ + "/victim";
  fs::create_directories(victim);
  fs::create_directory_symlink(victim, dir_ + "/tusk-reports");
  fs::create_directories(dir_ + "/tusk-reports-" + outcome_.run_id);
  const std::string blocked = dir_ + "/not-a-directory";
  std::ofstream(blocked) << "in the way\n";
  std::ostringstream stdout_text;
  const auto fallback = write_reports_somewhere(outcome_, report_json(outcome_), blocked + "/run", dir_, stdout_text);
  ASSERT_TRUE(fallback);
  ASSERT_NE(fallback->written_to, "-") << fallback->error;
  EXPECT_EQ(fs::path(fallback->written_to).parent_path(), fs::path(dir_));
  EXPECT_EQ(fs::path(fallback->written_to).filename().string().rfind("tusk-reports-" + outcome_.run_id + "-", 0), 0u);
  EXPECT_FALSE(fs::is_symlink(fallback->written_to));
  struct stat status {};
  ASSERT_EQ(stat(fallback->written_to.c_str(), &status), 0);
  EXPECT_EQ(status.st_mode & 0777, 0700u);
  EXPECT_TRUE(fs::exists(fallback->written_to + "/report.json"));
  EXPECT_TRUE(fs::is_empty(victim));
  EXPECT_TRUE(stdout_text.str().empty());
}

// A report.json read back: by `report`, and by read_report_file for history --import, compare and act.
class ReportInput : public ReportOutput {};

// One object of 100,000 keys (a hand edit, an attachment made to stall whoever reads it): read as
// ordered_json it took 14 s, each key looked up among all those before it. Now one pass, and the
// keys keep the file's order (counting down here, so not their sorted order).
TEST_F(ReportInput, AnObjectOf100000KeysIsReadInOnePass) {
  std::string text =
      fmt::format(R"({{"schema": "{}", "run_id": "{}", "tests": [], "agents": [])", kReportSchema, outcome_.run_id);
  for (int i = 99'999; i >= 0; --i) text += fmt::format(R"(, "k{}": {})", i, i);
  std::ofstream(dir_ + "/report.json") << text << "}";
  const json report = read_report_file(dir_);
  ASSERT_EQ(report.size(), 100'004u);
  EXPECT_EQ(std::next(report.begin(), 4).key(), "k99999");
  EXPECT_EQ(std::prev(report.end()).key(), "k0");
  EXPECT_EQ(report.at("k54321"), 54321);
  EXPECT_EQ(report.at("run_id"), outcome_.run_id);
  EXPECT_EQ(command_report(dir_, dir_ + "/report.html", false), kExitPass);
  EXPECT_NE(read(dir_ + "/report.html").find(outcome_.run_id), std::string::npos);
}

}  // namespace
}  // namespace tusk
