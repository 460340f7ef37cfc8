// A PostgreSQL server of the tests' own (issue 62), listening on a Unix socket in a directory of its
// own and nowhere else: the one ctest's `postgres` fixture started (tests/support/
// throwaway-postgres.sh; TUSK_TEST_POSTGRES names its directory), else one of this process's,
// started on first use (initdb and pg_ctl, as user postgres when the test runs as root: initdb
// refuses root) and removed at exit. Debian's `postgresql` package (scripts/install-deps.sh).
#pragma once

#include <libpq-fe.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

namespace tusk::testing {

class ThrowawayPostgres {
 public:
  // The fixture's server where ctest started one, else this process's.
  static ThrowawayPostgres& shared() {
    static ThrowawayPostgres server;
    return server;
  }

  // A new, empty database of the server; its libpq location ("host=... dbname=... user=tusk").
  std::string fresh_database(const std::string& hint) {
    // Test processes share the fixture's server: the process id keeps their databases apart.
    const std::string name = "t" + std::to_string(getpid()) + "_" + std::to_string(++databases_) + "_" + safe(hint);
    admin("CREATE DATABASE " + name);
    return location(name);
  }

  // The database a location of fresh_database's names.
  static std::string database_of(const std::string& location) {
    const auto from = location.find("dbname=") + 7;
    return location.substr(from, location.find(' ', from) - from);
  }

  // The same database as a postgresql:// URI.
  std::string uri(const std::string& database) const {
    return "postgresql:///" + database + "?host=" + percent(dir_.string()) + "&user=tusk";
  }

  std::string location(const std::string& database) const {
    return "host=" + dir_.string() + " dbname=" + database + " user=tusk";
  }

  // Runs one statement on database `database` as the superuser; throws on an error.
  void admin(const std::string& sql, const std::string& database = "postgres") const {
    PGconn* connection = PQconnectdb(location(database).c_str());
    const bool connected = PQstatus(connection) == CONNECTION_OK;
    PGresult* result = connected ? PQexec(connection, sql.c_str()) : nullptr;
    const bool ok = result && (PQresultStatus(result) == PGRES_COMMAND_OK || PQresultStatus(result) == PGRES_TUPLES_OK);
    const std::string error = PQerrorMessage(connection);
    PQclear(result);
    PQfinish(connection);
    if (!ok) throw std::runtime_error("throw-away PostgreSQL: " + sql + ": " + error);
  }

  // Stops and starts the server again: only a server of its own (ThrowawayPostgres(Own{})), never
  // the fixture's, which the tests beside it use.
  void stop() { pg_ctl("stop -m fast"); }
  void start() {
    pg_ctl("start -w -o \"-k " + dir_.string() + " -c listen_addresses='' -F\" -l " + (dir_ / "log").string());
  }

  // A server of this process's own, whatever the fixture has: for a test that stops it.
  struct Own {};
  explicit ThrowawayPostgres(Own) { start_own(); }
  ~ThrowawayPostgres() {
    if (!own_) return;
    std::system(
        (as_owner() + bin_ + "/pg_ctl -D " + (dir_ / "data").string() + " -m immediate stop >/dev/null 2>&1").c_str());
    std::error_code ignored;
    std::filesystem::remove_all(dir_, ignored);
  }
  ThrowawayPostgres(const ThrowawayPostgres&) = delete;
  ThrowawayPostgres& operator=(const ThrowawayPostgres&) = delete;

 private:
  ThrowawayPostgres() {
    if (const char* shared = std::getenv("TUSK_TEST_POSTGRES");
        shared && *shared && std::filesystem::exists(std::filesystem::path(shared) / ".s.PGSQL.5432")) {
      dir_ = shared;
      return;  // the fixture's: it stops it
    }
    start_own();
  }

  void start_own() {
    bin_ = find_bin();
    std::string pattern = (std::filesystem::temp_directory_path() / "tusk-pg-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("throw-away PostgreSQL: mkdtemp failed");
    dir_ = pattern;
    own_ = true;
    std::filesystem::permissions(dir_, std::filesystem::perms::owner_all | std::filesystem::perms::group_exec |
                                           std::filesystem::perms::others_exec);
    if (geteuid() == 0) run("chown postgres " + dir_.string());
    run(as_owner() + bin_ + "/initdb -D " + (dir_ / "data").string() +
        " -A trust -U tusk --no-sync --no-instructions >" + (dir_ / "initdb.log").string() + " 2>&1");
    start();
  }

  static std::string find_bin() {
    std::vector<std::filesystem::path> found;
    std::error_code error;
    for (const auto& entry : std::filesystem::directory_iterator("/usr/lib/postgresql", error)) {
      if (std::filesystem::exists(entry.path() / "bin" / "pg_ctl")) found.push_back(entry.path() / "bin");
    }
    if (found.empty()) {
      throw std::runtime_error(
          "no PostgreSQL server under /usr/lib/postgresql: install Debian's postgresql "
          "(scripts/install-deps.sh does)");
    }
    std::sort(found.begin(), found.end());
    return found.back().string();
  }

  std::string as_owner() const { return geteuid() == 0 ? "runuser -u postgres -- " : ""; }

  void pg_ctl(const std::string& arguments) const {
    run(as_owner() + bin_ + "/pg_ctl -D " + (dir_ / "data").string() + " " + arguments + " >>" +
        (dir_ / "pg_ctl.log").string() + " 2>&1");
  }

  static void run(const std::string& command) {
    if (std::system(command.c_str()) != 0) throw std::runtime_error("throw-away PostgreSQL: failed: " + command);
  }

  static std::string safe(const std::string& hint) {
    std::string out;
    for (const char c : hint) {
      if (std::isalnum(static_cast<unsigned char>(c))) out += static_cast<char>(std::tolower(c));
      if (out.size() == 40) break;
    }
    return out;
  }

  static std::string percent(const std::string& text) {
    std::string out;
    for (const char c : text) {
      if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.') {
        out += c;
      } else {
        char code[4];
        std::snprintf(code, sizeof code, "%%%02X", static_cast<unsigned char>(c));
        out += code;
      }
    }
    return out;
  }

  std::string bin_;
  std::filesystem::path dir_;
  int databases_ = 0;
  bool own_ = false;
};

}  // namespace tusk::testing
