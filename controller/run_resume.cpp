#include "controller/run_resume.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <stdexcept>

#include "controller/history/history_rows.hpp"
#include "controller/series/series_file.hpp"

namespace tusk {

namespace fs = std::filesystem;

std::shared_ptr<ScheduleLedger> open_resumed_run(const std::string& run_directory, const std::string& profile_file,
                                                 const std::string& topology_file, const FabricTopology* topology) {
  const fs::path directory(run_directory);
  std::error_code ignored;
  // A run that finished is not resumed; one a signal interrupted (a host shutting down sends
  // SIGTERM first) wrote its reports as it stopped, and goes on like one that was killed.
  const bool reported = fs::exists(directory / "junit.xml", ignored);
  if (reported && !read_report_file(run_directory).contains("interrupted")) {
    throw std::runtime_error(
        fmt::format("{}: the run finished (its junit.xml is there): there is nothing to resume", run_directory));
  }
  auto ledger = std::make_shared<ScheduleLedger>(read_schedule_ledger(run_directory, topology));
  const LedgerIdentity& id = ledger->identity;
  if (file_digest(profile_file) != id.profile_digest) {
    throw std::runtime_error(fmt::format(
        "{}: not the profile run {} ran with (its bytes differ): a run goes on with the profile it started with",
        profile_file, id.run_id));
  }
  const std::uint64_t topology_digest = topology_file.empty() ? 0 : file_digest(topology_file);
  if (topology_digest != id.topology_digest) {
    throw std::runtime_error(
        id.topology_digest == 0
            ? fmt::format("--topology: run {} ran without a topology file: resume it without one", id.run_id)
        : topology_file.empty()
            ? fmt::format("--topology: run {} ran with a topology file: give the same one", id.run_id)
            : fmt::format("{}: not the topology file run {} ran with (its bytes differ)", topology_file, id.run_id));
  }
  // The first part's files keep its run id in their names (and a count, when a resumed run that
  // finished no step stopped too); the series file's write-ahead log and index move with it
  // (SQLite finds them by the file's name).
  const auto set_aside = [&](const std::string& stem, const std::string& extension) {
    const std::string name = stem + extension;
    if (!fs::exists(directory / name, ignored)) return std::string();
    std::string kept_as = fmt::format("{}.{}{}", stem, id.run_id, extension);
    for (int n = 2; fs::exists(directory / kept_as, ignored); ++n) {
      kept_as = fmt::format("{}.{}-{}{}", stem, id.run_id, n, extension);
    }
    for (const char* suffix : {"", "-wal", "-shm"}) {
      const fs::path from = directory / (name + suffix);
      if (!fs::exists(from, ignored)) continue;
      std::error_code error;
      fs::rename(from, directory / (kept_as + suffix), error);
      if (error) throw std::runtime_error(fmt::format("{}: cannot set it aside: {}", from.string(), error.message()));
    }
    return kept_as;
  };
  const fs::path series(kSeriesFileName);
  const std::string series_kept = set_aside(series.stem().string(), series.extension().string());
  const std::string report_kept = set_aside("report", ".json");
  if (reported) {
    set_aside("junit", ".xml");
    set_aside("report", ".html");
  }
  spdlog::info("--resume: run {} finished {} step(s) of test {} '{}'; its report and series are kept as {} and {}",
               id.run_id, ledger->steps.size(), id.test_index, id.test_name,
               report_kept.empty() ? "(none)" : report_kept, series_kept.empty() ? "(none)" : series_kept);
  ledger->identity.series_file = series_kept;
  return ledger;
}

}  // namespace tusk
