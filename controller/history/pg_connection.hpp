// One libpq connection and its results, owned (RAII), for the PostgreSQL run history: statements
// with text parameters, each error a HistoryError naming the database and what was being done.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tusk {

// A statement's parameters as text; nullopt is SQL NULL.
using PgParams = std::vector<std::optional<std::string>>;

std::optional<std::string> pg_text(const std::optional<double>& value);
std::optional<std::string> pg_text(const std::optional<std::int64_t>& value);

class PgResult {
 public:
  explicit PgResult(PGresult* result) : result_(result, PQclear) {}
  int rows() const { return PQntuples(result_.get()); }
  bool is_null(int row, int column) const { return PQgetisnull(result_.get(), row, column) != 0; }
  std::string text(int row, int column) const { return PQgetvalue(result_.get(), row, column); }
  std::int64_t int64(int row, int column) const;
  std::optional<std::int64_t> optional_int64(int row, int column) const;
  double real(int row, int column) const;
  std::optional<double> optional_real(int row, int column) const;
  PGresult* raw() const { return result_.get(); }

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> result_;
};

class PgConnection {
 public:
  // Connects to `location` (a URI or key=value string; libpq also reads PGSERVICE, PGPASSFILE,
  // ~/.pgpass and the PG* environment). Throws HistoryError for a password written in the
  // location (every user of the host sees a command line) or a server that does not answer.
  explicit PgConnection(const std::string& location);

  // Runs `sql` with `params` ($1, $2 ...); throws HistoryError "<location>: <doing>: <server's word>".
  PgResult exec(std::string_view doing, const std::string& sql, const PgParams& params = {}) const;
  // Runs several statements at once (a migration), without parameters.
  void exec_script(std::string_view doing, const std::string& sql) const;

  const std::string& location() const { return location_; }

 private:
  PgResult checked(std::string_view doing, PGresult* result) const;

  std::string location_;
  std::unique_ptr<PGconn, void (*)(PGconn*)> connection_;
};

// BEGIN on construction; ROLLBACK unless commit() was called (an exception midway writes nothing).
class PgTransaction {
 public:
  PgTransaction(const PgConnection& connection, std::string_view doing);
  ~PgTransaction();
  PgTransaction(const PgTransaction&) = delete;
  PgTransaction& operator=(const PgTransaction&) = delete;
  void commit();

 private:
  const PgConnection& connection_;
  std::string doing_;
  bool done_ = false;
};

}  // namespace tusk
