#include "controller/history/run_history.hpp"

#include <cstdlib>
#include <filesystem>

#include "controller/history/postgres_history.hpp"
#include "controller/history/sqlite_history.hpp"

namespace tusk {
namespace fs = std::filesystem;

std::string default_history_path() {
  if (const char* data = std::getenv("XDG_DATA_HOME"); data && *data) {
    return (fs::path(data) / "tusk" / "history.sqlite").string();
  }
  if (const char* home = std::getenv("HOME"); home && *home) {
    return (fs::path(home) / ".local" / "share" / "tusk" / "history.sqlite").string();
  }
  return "tusk-history.sqlite";
}

bool is_postgres_location(std::string_view location) {
  if (location.starts_with("postgresql://") || location.starts_with("postgres://")) return true;
  // libpq's key=value form starts with a keyword: letters and underscores, then '='.
  const auto equals = location.find('=');
  if (equals == std::string_view::npos || equals == 0) return false;
  for (const char c : location.substr(0, equals)) {
    if (!((c >= 'a' && c <= 'z') || c == '_')) return false;
  }
  return true;
}

bool history_exists(const std::string& location) {
  std::error_code error;
  return is_postgres_location(location) || fs::exists(location, error);
}

RunHistory::RunHistory(const std::string& location) : path_(location) {
  if (is_postgres_location(location)) {
    store_ = std::make_unique<PostgresHistory>(location);
  } else {
    store_ = std::make_unique<SqliteHistory>(location);
  }
}

void RunHistory::record_run(const nlohmann::ordered_json& report, std::string_view run_directory) {
  // Every field is read and checked before the store is touched: a malformed report writes nothing.
  record_rows(rows_of_report(report, run_directory));
}

}  // namespace tusk
