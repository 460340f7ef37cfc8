// The PostgreSQL run history (issue 62) on a throw-away server of the test's own: its schema in a
// namespace of its own and its version, what it refuses (a newer schema, another program's tables,
// a password on the command line, a server that does not answer), both ways of naming it, and
// several controllers writing at once without losing or mixing a row.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <functional>
#include <thread>

#include "controller/history/run_history.hpp"
#include "tests/controller/history/history_test_reports.hpp"
#include "tests/support/throwaway_postgres.hpp"

namespace tusk::testing {
namespace {

TEST(PostgresHistory, TheSchemaLivesInItsOwnNamespaceAndANewerVersionIsRefusedUntouched) {
  auto& server = ThrowawayPostgres::shared();
  const std::string location = server.fresh_database("schema");
  const std::string database = ThrowawayPostgres::database_of(location);
  // Another program's table beside it in the same database is left alone.
  server.admin("CREATE TABLE public.runs (note TEXT)", database);
  {
    RunHistory history(location);
    EXPECT_EQ(history.schema_version(), kHistorySchemaVersion);
    history.record_run(sample_report("run-1"), "/reports/run-1");
  }
  server.admin("SELECT count(*) FROM tusk.runs, tusk.streams, tusk.links, tusk.run_agents", database);
  server.admin("UPDATE tusk.history_schema SET version = 7", database);
  const std::string error = error_of([&] { RunHistory{location}; });
  EXPECT_NE(error.find(location + ": history schema version 7 is newer"), std::string::npos) << error;
  server.admin("UPDATE tusk.history_schema SET version = 3", database);
  EXPECT_EQ(RunHistory(location).list_runs().size(), 1u) << "refused, not rewritten";

  const std::string other = server.fresh_database("other");
  server.admin("CREATE SCHEMA tusk; CREATE TABLE tusk.notes (text TEXT)", ThrowawayPostgres::database_of(other));
  const std::string refused = error_of([&] { RunHistory{other}; });
  EXPECT_NE(refused.find(other + ": not a tusk run history"), std::string::npos) << refused;
}

// Every earlier version of the schema is upgraded in place, its runs kept: version 2 (before a
// suspect's fault kind and rate), made from today's by taking them away again.
TEST(PostgresHistory, AVersionTwoSchemaIsUpgradedAndItsRunsKept) {
  auto& server = ThrowawayPostgres::shared();
  const std::string location = server.fresh_database("fromtwo");
  const std::string database = ThrowawayPostgres::database_of(location);
  RunHistory(location).record_run(sample_report("run-1", "2026-11-24T08:00:00.000Z"), "/r/1");
  server.admin("ALTER TABLE tusk.links DROP COLUMN kind, DROP COLUMN rate; UPDATE tusk.history_schema SET version = 2",
               database);
  RunHistory history(location);
  EXPECT_EQ(history.schema_version(), 3);
  history.record_run(sample_report("run-2", "2026-11-25T08:00:00.000Z"), "/r/2");
  const auto before = history.load_run("run-1");
  const auto after = history.load_run("run-2");
  ASSERT_TRUE(before && after);
  EXPECT_EQ(before->streams.size(), 7u);
  EXPECT_EQ(before->links[0].kind, "");
  EXPECT_EQ(after->links[0].kind, "loss");
  EXPECT_DOUBLE_EQ(after->links[0].rate.value_or(-1), 0.02);
}

TEST(PostgresHistory, AUriAndAKeyValueStringNameTheSameHistory) {
  auto& server = ThrowawayPostgres::shared();
  const std::string location = server.fresh_database("forms");
  RunHistory(location).record_run(sample_report("run-1"), "/reports/run-1");
  const std::string database = ThrowawayPostgres::database_of(location);
  const std::string uri = server.uri(database);
  ASSERT_TRUE(is_postgres_location(uri));
  RunHistory by_uri(uri);
  EXPECT_EQ(by_uri.path(), uri);
  ASSERT_TRUE(by_uri.find_run("run-1"));
  EXPECT_EQ(by_uri.load_run("run-1")->streams.size(), 7u);
}

TEST(PostgresHistory, ItsLocationIsKnownFromAnSqliteFilesPath) {
  for (const char* postgres : {"postgresql://db.example/tusk", "postgres:///tusk", "service=tusk",
                               "host=/run/postgresql dbname=tusk", "dbname=tusk sslmode=verify-full"}) {
    EXPECT_TRUE(is_postgres_location(postgres)) << postgres;
  }
  // Before, each of these was an SQLite file (the first under a directory named "postgresql:").
  for (const char* file :
       {"postgresql:/tusk", "history.sqlite", "/var/lib/tusk/history.sqlite", "./a=b.sqlite", "=x", "Service=tusk"}) {
    EXPECT_FALSE(is_postgres_location(file)) << file;
  }
}

TEST(PostgresHistory, APasswordOnTheCommandLineIsRefusedAndAServerThatDoesNotAnswerIsNamed) {
  for (const std::string& with_password : {std::string("postgresql://tusk:s3cret@/tusk?host=/nonexistent"),
                                           std::string("host=/nonexistent password=s3cret")}) {
    const std::string error = error_of([&] { RunHistory{with_password}; });
    EXPECT_NE(error.find("carries a password"), std::string::npos) << error;
    EXPECT_NE(error.find("~/.pgpass"), std::string::npos) << error;
    EXPECT_EQ(error.find("s3cret"), std::string::npos) << "the error repeats the password: " << error;
  }
  const std::string down = "host=/nonexistent-tusk-socket dbname=tusk";
  const std::string error = error_of([&] { RunHistory{down}; });
  EXPECT_NE(error.find(down + ": cannot connect: "), std::string::npos) << error;
  EXPECT_FALSE(history_exists("/nonexistent/history.sqlite"));
  EXPECT_TRUE(history_exists(down)) << "whether a server answers is for connecting to say";
}

// Four controllers open one new history at once (the schema made once, under its lock) and each
// records five runs of its own and the same shared run id: every run is there once, whole.
TEST(PostgresHistory, ControllersWritingAtOnceLoseAndMixNoRow) {
  const std::string location = ThrowawayPostgres::shared().fresh_database("concurrent");
  constexpr int kControllers = 4;
  constexpr int kRuns = 5;
  std::vector<std::string> errors(kControllers);
  std::vector<std::thread> controllers;
  for (int c = 0; c < kControllers; ++c) {
    controllers.emplace_back([&, c] {
      try {
        RunHistory history(location);
        for (int r = 0; r < kRuns; ++r) {
          auto report =
              sample_report(fmt::format("ctl{}-run{}", c, r), "2026-12-07T08:00:00.000Z", fmt::format("pod-{}", c));
          history.record_run(report, fmt::format("/reports/ctl{}/{}", c, r));
        }
        history.record_run(sample_report("shared-run"), fmt::format("/reports/ctl{}/shared", c));
      } catch (const std::exception& e) {
        errors[c] = e.what();
      }
    });
  }
  for (auto& controller : controllers) controller.join();
  for (int c = 0; c < kControllers; ++c) EXPECT_EQ(errors[c], "") << "controller " << c;
  RunHistory history(location);
  const auto runs = history.list_runs();
  EXPECT_EQ(runs.size(), static_cast<std::size_t>(kControllers * kRuns + 1));
  for (int c = 0; c < kControllers; ++c) {
    RunFilter pod;
    pod.profile = fmt::format("pod-{}", c);
    const auto own = history.list_runs(pod);
    ASSERT_EQ(own.size(), static_cast<std::size_t>(kRuns)) << pod.profile;
    for (const auto& run : own) {
      const auto rows = history.load_run(run.run_id);
      ASSERT_TRUE(rows);
      EXPECT_EQ(rows->streams.size(), 7u) << run.run_id;
      EXPECT_EQ(rows->run.run_directory.rfind(fmt::format("/reports/ctl{}/", c), 0), 0u) << run.run_directory;
    }
  }
  const auto shared = history.load_run("shared-run");
  ASSERT_TRUE(shared);
  EXPECT_EQ(shared->streams.size(), 7u) << "one controller's recording, whole, not two mixed";
}

}  // namespace
}  // namespace tusk::testing
