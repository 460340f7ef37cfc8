#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "common/json_text.hpp"
#include "common/printable.hpp"
#include "controller/report/report_json_parts.hpp"
#include "controller/report/report_page_model.hpp"
#include "controller/report/reports.hpp"

namespace tusk {
namespace fs = std::filesystem;

namespace {

// The files a run writes into its directory: one that holds any of them holds a report.
constexpr const char* kReportFiles[] = {"report.json", "junit.xml", "report.html"};

// Moves the finished temporary file to `path` unless something is there already: link() fails
// rather than replace, on every file system with hard links; renameat2's RENAME_NOREPLACE covers
// most of those without.
int publish_new(const std::string& temporary, const fs::path& path) {
  if (::link(temporary.c_str(), path.c_str()) == 0) {
    ::unlink(temporary.c_str());
    return 0;
  }
  if (errno == EEXIST) return EEXIST;
  if (::renameat2(AT_FDCWD, temporary.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return 0;
  return errno;
}

enum class Existing { Replace, Keep };

// Writes what `write` puts out to a new file beside `path`, then puts it in place: renamed over
// `path` (Existing::Replace: a reader sees the old file or the whole new one), or only where
// nothing is (Existing::Keep: a report is evidence, never overwritten). A failed write leaves no
// truncated file.
void write_file(const fs::path& path, const std::function<void(std::ostream&)>& write, Existing existing) {
  std::string temporary = path.string() + ".XXXXXX";
  const int fd = mkstemp(temporary.data());
  if (fd < 0) throw std::runtime_error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(errno)));
  // The files are for everyone who may read the run's directory, like any other file made here.
  int error = fchmod(fd, 0644) != 0 ? errno : 0;
  ::close(fd);
  try {
    if (error == 0) {
      std::ofstream file(temporary, std::ios::binary | std::ios::trunc);
      errno = 0;
      if (file) write(file);
      file.flush();
      if (!file) error = errno != 0 ? errno : EIO;
      file.close();
      if (error == 0 && file.fail()) error = errno != 0 ? errno : EIO;
    }
  } catch (...) {
    ::unlink(temporary.c_str());
    throw;
  }
  if (error == 0) {
    if (existing == Existing::Keep) {
      error = publish_new(temporary, path);
    } else if (std::rename(temporary.c_str(), path.c_str()) != 0) {
      error = errno;
    }
  }
  if (error != 0) {
    ::unlink(temporary.c_str());
    if (error == EEXIST && existing == Existing::Keep) {
      throw std::runtime_error(
          fmt::format("cannot write '{}': it exists, and a report is never overwritten", path.string()));
    }
    throw std::runtime_error(fmt::format("cannot write '{}': {}", path.string(), std::strerror(error)));
  }
}

void write_file(const fs::path& path, const std::string& text, Existing existing) {
  write_file(
      path, [&text](std::ostream& out) { out.write(text.data(), static_cast<std::streamsize>(text.size())); },
      existing);
}

// A report.json's top-level "run_id" and "status", read only until both are found (they come
// first): a checkpoint of millions of streams is not parsed whole to learn whose it is.
struct ReportIdentity : nlohmann::json_sax<nlohmann::json> {
  std::string run_id, status;
  bool found_run_id = false, found_status = false;

  bool null() override { return next(); }
  bool boolean(bool) override { return next(); }
  bool number_integer(number_integer_t) override { return next(); }
  bool number_unsigned(number_unsigned_t) override { return next(); }
  bool number_float(number_float_t, const string_t&) override { return next(); }
  bool binary(binary_t&) override { return next(); }
  bool string(string_t& value) override {
    if (depth_ == 1 && key_ == "run_id") std::tie(run_id, found_run_id) = std::pair(value, true);
    if (depth_ == 1 && key_ == "status") std::tie(status, found_status) = std::pair(value, true);
    return next();
  }
  bool start_object(std::size_t) override { return open(); }
  bool start_array(std::size_t) override { return open(); }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool key(string_t& name) override {
    if (depth_ == 1) key_ = name;
    return true;
  }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) override { return false; }

 private:
  bool next() const { return !(found_run_id && found_status); }
  bool open() {
    ++depth_;
    return depth_ <= kMaxJsonDepth;
  }
  bool close() {
    --depth_;
    return next();
  }
  std::size_t depth_ = 0;
  std::string key_;
};

ReportIdentity report_identity(const fs::path& file) {
  ReportIdentity identity;
  std::ifstream in(file);
  if (in) nlohmann::json::sax_parse(in, &identity);
  return identity;
}

// What an existing report in `directory` is, for the message that refuses to write over it.
std::string existing_report(const fs::path& directory, const std::string& file) {
  const std::string run_id = report_identity(directory / "report.json").run_id;
  return run_id.empty()
             ? fmt::format("'{}' already holds {}", directory.string(), file)
             : fmt::format("'{}' already holds run {}'s report ({})", directory.string(), printable(run_id), file);
}

void create_directory(const std::string& directory) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create report directory '{}': {}", directory, ec.message()));
}

// A directory no one else made: mkdtemp fails rather than reuse a name, so a link or directory
// another local user placed in a shared /tmp is never followed.
std::string private_directory(const std::string& parent, const std::string& run_id) {
  std::string name = (fs::path(parent) / fmt::format("tusk-reports-{}-XXXXXX", run_id)).string();
  if (!mkdtemp(name.data())) {
    throw std::runtime_error(fmt::format("cannot create a directory in '{}': {}", parent, std::strerror(errno)));
  }
  return name;
}

// Whether `directory`'s report.json is a checkpoint of run `run_id`: the one file a run's own final
// report replaces.
bool holds_checkpoint_of(const fs::path& directory, const std::string& run_id) {
  const ReportIdentity identity = report_identity(directory / "report.json");
  return identity.status == "running" && identity.found_run_id && identity.run_id == run_id;
}

// report.html of a run's outcome, as its report.json would draw it: `report` is report_json's
// document without the bins (with any "baseline"); each stream's whole JSON is made from `outcome`
// as the page's model reaches it, so one stream's series are in memory at a time.
void write_run_page(const nlohmann::ordered_json& report, const RunOutcome& outcome, std::ostream& out) {
  std::size_t widths_of = outcome.tests.size();  // the test whose bin width `width` is
  std::uint32_t width = 0;
  write_report_html(
      report,
      [&](std::size_t test, std::size_t stream) {
        if (test >= outcome.tests.size() || stream >= outcome.tests[test].streams.size()) {
          return nlohmann::ordered_json::object();
        }
        const TestOutcome& outcome_test = outcome.tests[test];
        if (widths_of != test) {
          widths_of = test;
          width = test_bin_width(outcome_test);
        }
        return test_stream_json(outcome_test, outcome_test.streams[stream], width);
      },
      out);
}

}  // namespace

void write_checkpoint(const RunOutcome& so_far, const std::string& directory) {
  create_directory(directory);
  write_file(
      fs::path(directory) / "report.json",
      [&so_far](std::ostream& out) {
        write_report_json(so_far, out);
        out << '\n';
      },
      Existing::Replace);
}

void write_reports(const RunOutcome& outcome, const nlohmann::ordered_json& report, const std::string& directory) {
  create_directory(directory);
  write_file(
      fs::path(directory) / "report.json",
      [&](std::ostream& out) {
        write_report_json(outcome, out, report);
        out << '\n';
      },
      holds_checkpoint_of(directory, outcome.run_id) ? Existing::Replace : Existing::Keep);
  write_file(fs::path(directory) / "junit.xml", report_junit(outcome), Existing::Keep);
  write_file(
      fs::path(directory) / "report.html", [&](std::ostream& out) { write_run_page(report, outcome, out); },
      Existing::Keep);
}

void check_report_directory(const std::string& directory) {
  for (const char* file : kReportFiles) {
    std::error_code ignored;
    if (fs::exists(fs::symlink_status(fs::path(directory) / file, ignored))) {
      throw std::runtime_error(fmt::format("{}: a report is never overwritten; give --out a new directory",
                                           existing_report(directory, file)));
    }
  }
  create_directory(directory);
  const fs::path probe = fs::path(directory) / ".tusk-write-check";
  write_file(probe, "tusk\n", Existing::Replace);
  std::error_code ec;
  fs::remove(probe, ec);
}

std::optional<ReportFallback> write_reports_somewhere(const RunOutcome& outcome, const nlohmann::ordered_json& report,
                                                      const std::string& directory, const std::string& fallback_parent,
                                                      std::ostream& stdout_stream) {
  ReportFallback fallback;
  try {
    write_reports(outcome, report, directory);
    return std::nullopt;
  } catch (const std::exception& e) {
    fallback.error = e.what();
  }
  if (!fallback_parent.empty()) {
    try {
      const std::string fallback_directory = private_directory(fallback_parent, outcome.run_id);
      write_reports(outcome, report, fallback_directory);
      fallback.written_to = fallback_directory;
      return fallback;
    } catch (const std::exception& e) {
      fallback.error += fmt::format("; {}", e.what());
    }
  }
  write_report_json(outcome, stdout_stream, report);
  stdout_stream << "\n";
  fallback.written_to = "-";
  return fallback;
}

}  // namespace tusk
