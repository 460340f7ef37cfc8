#include "controller/history/pg_connection.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "controller/history/history_store.hpp"

namespace tusk {
namespace {

// libpq's messages end in a newline and may run over several lines.
std::string one_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

// Refuses a location that carries a password: on a command line every user of the host sees it.
void refuse_password(const std::string& location) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(location.c_str(), &error);
  if (options == nullptr) {
    const std::string why = error ? one_line(error) : "not a connection string";
    PQfreemem(error);
    throw HistoryError(fmt::format("{}: not a PostgreSQL connection string: {}", location, why));
  }
  bool has_password = false;
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (std::string_view(option->keyword) == "password" && option->val != nullptr && *option->val != '\0') {
      has_password = true;
    }
  }
  PQconninfoFree(options);
  if (has_password) {
    throw HistoryError(
        "the PostgreSQL history's location carries a password, which every user of this host can read on a command "
        "line: put it in ~/.pgpass (or PGPASSFILE), a service file (PGSERVICEFILE, then --history service=NAME) or "
        "PGPASSWORD, and leave it out of --history");
  }
}

}  // namespace

std::optional<std::string> pg_text(const std::optional<double>& value) {
  if (!value) return std::nullopt;
  if (std::isnan(*value)) return "NaN";
  if (std::isinf(*value)) return *value > 0 ? "Infinity" : "-Infinity";
  return fmt::format("{}", *value);  // the shortest text that reads back as the same double
}

std::optional<std::string> pg_text(const std::optional<std::int64_t>& value) {
  if (!value) return std::nullopt;
  return std::to_string(*value);
}

std::int64_t PgResult::int64(int row, int column) const {
  const char* text = PQgetvalue(result_.get(), row, column);
  std::int64_t value = 0;
  std::from_chars(text, text + PQgetlength(result_.get(), row, column), value);
  return value;
}

std::optional<std::int64_t> PgResult::optional_int64(int row, int column) const {
  if (is_null(row, column)) return std::nullopt;
  return int64(row, column);
}

double PgResult::real(int row, int column) const {
  return std::strtod(PQgetvalue(result_.get(), row, column), nullptr);  // also "NaN", "Infinity"
}

std::optional<double> PgResult::optional_real(int row, int column) const {
  if (is_null(row, column)) return std::nullopt;
  return real(row, column);
}

PgConnection::PgConnection(const std::string& location) : location_(location), connection_(nullptr, PQfinish) {
  refuse_password(location);
  // The location's own connect_timeout, if it sets one, overrides this (it is expanded later).
  const char* keywords[] = {"connect_timeout", "fallback_application_name", "dbname", nullptr};
  const char* values[] = {"10", "tusk-controller", location.c_str(), nullptr};
  connection_.reset(PQconnectdbParams(keywords, values, 1));
  if (!connection_) throw HistoryError(fmt::format("{}: cannot connect: out of memory", location_));
  if (PQstatus(connection_.get()) != CONNECTION_OK) {
    throw HistoryError(fmt::format("{}: cannot connect: {}", location_, one_line(PQerrorMessage(connection_.get()))));
  }
  // The server's notices ("schema tusk already exists, skipping") go to the log, not stderr, where
  // they would land in the middle of a command's output.
  PQsetNoticeProcessor(
      connection_.get(), [](void*, const char* message) { spdlog::debug("PostgreSQL: {}", one_line(message)); },
      nullptr);
}

PgResult PgConnection::exec(std::string_view doing, const std::string& sql, const PgParams& params) const {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const auto& param : params) values.push_back(param ? param->c_str() : nullptr);
  return checked(doing, PQexecParams(connection_.get(), sql.c_str(), static_cast<int>(values.size()), nullptr,
                                     values.data(), nullptr, nullptr, 0));
}

void PgConnection::exec_script(std::string_view doing, const std::string& sql) const {
  checked(doing, PQexec(connection_.get(), sql.c_str()));
}

PgResult PgConnection::checked(std::string_view doing, PGresult* raw) const {
  PgResult result(raw);
  const ExecStatusType status = PQresultStatus(result.raw());
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    const char* message = PQresultErrorMessage(result.raw());
    throw HistoryError(fmt::format("{}: {}: {}", location_, doing,
                                   one_line(message && *message ? message : PQerrorMessage(connection_.get()))));
  }
  return result;
}

PgTransaction::PgTransaction(const PgConnection& connection, std::string_view doing)
    : connection_(connection), doing_(doing) {
  connection_.exec(doing_, "BEGIN");
}

PgTransaction::~PgTransaction() {
  if (done_) return;
  try {
    connection_.exec(doing_, "ROLLBACK");
  } catch (const HistoryError&) {
    // The connection is gone: the server rolls the transaction back itself.
  }
}

void PgTransaction::commit() {
  connection_.exec(doing_, "COMMIT");
  done_ = true;
}

}  // namespace tusk
