#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "controller/report/reports.hpp"

namespace tusk {
namespace fs = std::filesystem;

namespace {
void write_file(const fs::path& path, const std::string& text) {
  std::ofstream file(path);
  file << text;
  file.close();
  if (!file) throw std::runtime_error(fmt::format("cannot write '{}'", path.string()));
}

void create_directory(const std::string& directory) {
  std::error_code ec;
  fs::create_directories(directory, ec);
  if (ec) throw std::runtime_error(fmt::format("cannot create report directory '{}': {}", directory, ec.message()));
}
}  // namespace

void write_reports(const RunOutcome& outcome, const std::string& directory) {
  create_directory(directory);
  const auto report = report_json(outcome);
  write_file(fs::path(directory) / "report.json", report.dump(2) + "\n");
  write_file(fs::path(directory) / "junit.xml", report_junit(outcome));
  write_file(fs::path(directory) / "report.html", report_html(report));
}

void check_report_directory(const std::string& directory) {
  create_directory(directory);
  const fs::path probe = fs::path(directory) / ".tusk-write-check";
  write_file(probe, "tusk\n");
  std::error_code ec;
  fs::remove(probe, ec);
}

std::optional<ReportFallback> write_reports_somewhere(const RunOutcome& outcome, const std::string& directory,
                                                      const std::string& fallback_directory,
                                                      std::ostream& stdout_stream) {
  ReportFallback fallback;
  try {
    write_reports(outcome, directory);
    return std::nullopt;
  } catch (const std::exception& e) {
    fallback.error = e.what();
  }
  if (!fallback_directory.empty()) {
    try {
      write_reports(outcome, fallback_directory);
      fallback.written_to = fallback_directory;
      return fallback;
    } catch (const std::exception&) {
    }
  }
  stdout_stream << report_json(outcome).dump(2) << "\n";
  fallback.written_to = "-";
  return fallback;
}

}  // namespace tusk
