// Where run history is kept, behind one interface: an SQLite file (the embedded default) or a
// PostgreSQL database a fleet's controllers share (issue 62). Each store owns one connection; it is
// not thread-safe (one thread uses it, as the controller's main thread does after a run).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "controller/history/history_rows.hpp"

namespace tusk {

// The history could not be opened, upgraded, read or written; the message names where it is.
class HistoryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The schema this build writes. Raise it with a new migration in each store.
inline constexpr int kHistorySchemaVersion = 3;

struct RunFilter {
  std::string profile;    // the profile's name; "" for any
  std::string agent;      // runs this agent took part in (or was missing from); "" for any
  std::size_t limit = 0;  // the newest this many; 0 for all
};

// One stream of one run, for a trend.
struct StreamTrendRow {
  RunRow run;
  StreamRow stream;
};

// One link of one run, for a trend.
struct LinkTrendRow {
  RunRow run;
  LinkRow link;
};

// One host's part in one run: its streams, and how many of them failed.
struct HostRunRow {
  RunRow run;
  std::string agent;
  int streams = 0;
  int failing = 0;
};

class HistoryStore {
 public:
  virtual ~HistoryStore() = default;
  // The schema version the store carries.
  virtual int schema_version() const = 0;
  // One run in one transaction, replacing a run of the same id; nothing of it on failure.
  virtual void record_rows(const RunRows& rows) = 0;
  virtual std::vector<RunRow> list_runs(const RunFilter& filter) const = 0;
  virtual std::optional<RunRow> find_run(std::string_view run_id) const = 0;
  virtual std::optional<RunRows> load_run(std::string_view run_id) const = 0;
  virtual std::vector<StreamTrendRow> stream_trend(std::string_view link, const RunFilter& filter) const = 0;
  virtual std::vector<LinkTrendRow> link_trend(std::string_view link, const RunFilter& filter) const = 0;
  // Every link row and every host's part of the runs that started at or after `since_ns` (0: all),
  // oldest run first: the fabric's record across runs. A run's agents are not filled in.
  virtual std::vector<LinkTrendRow> links_since(std::int64_t since_ns) const = 0;
  virtual std::vector<HostRunRow> hosts_since(std::int64_t since_ns) const = 0;
};

// Keeps the rows of the newest `limit` runs among them (rows arrive oldest run first); 0 keeps all.
template <class Row>
void keep_newest_runs(std::vector<Row>& rows, std::size_t limit) {
  if (limit == 0) return;
  std::vector<std::string> kept;
  auto first_kept = rows.end();
  for (auto it = rows.end(); it != rows.begin();) {
    --it;
    if (kept.empty() || kept.back() != it->run.run_id) {
      if (kept.size() == limit) break;
      kept.push_back(it->run.run_id);
    }
    first_kept = it;
  }
  rows.erase(rows.begin(), first_kept);
}

}  // namespace tusk
