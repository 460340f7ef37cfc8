// The series file's retention (series_file.hpp): full-resolution rows past `full` on the run's
// clock go unless an event or a failed window is near them, a stream that stopped sending has its
// last minute written, and the file's used pages stay within the budget, the oldest full rows
// going first. Runs on the writer thread after a commit, every `prune_every` of the run's clock.
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/units.hpp"
#include "controller/series/series_file.hpp"

namespace tusk {

namespace {

// Rows taken out at once when the budget is passed: a transaction of bounded size.
constexpr int kBudgetRowsPerDelete = 20'000;

}  // namespace

void KeptSpans::add(std::uint64_t from_ms, std::uint64_t to_ms) {
  if (to_ms < from_ms) std::swap(from_ms, to_ms);
  auto at = std::lower_bound(spans_.begin(), spans_.end(), std::pair{from_ms, to_ms});
  at = spans_.insert(at, {from_ms, to_ms});
  // Merge with the spans it touches on either side.
  if (at != spans_.begin() && std::prev(at)->second >= at->first) {
    --at;
    at->second = std::max(at->second, std::next(at)->second);
    spans_.erase(std::next(at));
  }
  while (std::next(at) != spans_.end() && std::next(at)->first <= at->second) {
    at->second = std::max(at->second, std::next(at)->second);
    spans_.erase(std::next(at));
  }
  if (spans_.size() <= kMostKeptSpans) return;
  // The two spans with the smallest gap become one.
  std::size_t nearest = 0;
  for (std::size_t i = 1; i + 1 < spans_.size(); ++i) {
    if (spans_[i + 1].first - spans_[i].second < spans_[nearest + 1].first - spans_[nearest].second) nearest = i;
  }
  spans_[nearest].second = spans_[nearest + 1].second;
  spans_.erase(spans_.begin() + static_cast<std::ptrdiff_t>(nearest) + 1);
}

bool KeptSpans::overlaps(std::uint64_t from_ms, std::uint64_t to_ms) const {
  // The first span that ends at or after from_ms: it overlaps if it starts by to_ms.
  const auto at = std::lower_bound(spans_.begin(), spans_.end(), from_ms,
                                   [](const auto& span, std::uint64_t ms) { return span.second < ms; });
  return at != spans_.end() && at->first <= to_ms;
}

// tusk_kept(stream, first_ms, last_ms): whether a row lies near an event or a failed window.
void SeriesFile::kept_function(sqlite3_context* context, int count, sqlite3_value** values) {
  const auto* file = static_cast<const SeriesFile*>(sqlite3_user_data(context));
  if (count != 3) {
    sqlite3_result_int(context, 1);
    return;
  }
  const sqlite3_int64 stream = sqlite3_value_int64(values[0]);
  const auto first_ms = static_cast<std::uint64_t>(std::max<sqlite3_int64>(0, sqlite3_value_int64(values[1])));
  const auto last_ms = static_cast<std::uint64_t>(std::max<sqlite3_int64>(0, sqlite3_value_int64(values[2])));
  const bool kept = stream >= 1 && static_cast<std::size_t>(stream) <= file->tracks_.size() &&
                    file->tracks_[static_cast<std::size_t>(stream - 1)].kept.overlaps(first_ms, last_ms);
  sqlite3_result_int(context, kept ? 1 : 0);
}

void SeriesFile::retain() {
  if (clock_ms_ < pruned_at_ms_ + static_cast<std::uint64_t>(retention_.prune_every.count())) return;
  pruned_at_ms_ = clock_ms_;
  // A stream that sent nothing for a minute of the run's clock has ended (its test, or its agent):
  // its last minute is written now, not when the run ends, so a run killed later has it.
  for (std::size_t i = 0; i < tracks_.size(); ++i) {
    SeriesTrack& track = tracks_[i];
    if ((!track.minute.empty() || track.batch_minutes > 0) && track.last_run_ms + kSeriesMinute.count() < clock_ms_) {
      write_rollup(static_cast<std::int64_t>(i + 1), track, /*end_row=*/true);
    }
  }
  if (!minutes_.empty()) commit(Queue{});
  prune_old_rows();
  hold_budget();
}

void SeriesFile::prune_old_rows() {
  const auto full = static_cast<std::uint64_t>(retention_.full.count());
  if (clock_ms_ < full) return;
  const std::uint64_t horizon = clock_ms_ - full;
  std::int64_t upto = pruned_upto_;
  while (!marks_.empty() && marks_.front().newest_run_ms < horizon) {
    upto = marks_.front().last_rowid;
    marks_.pop_front();
  }
  if (upto <= pruned_upto_) return;
  // One scan: each row deleted says how many samples it held as it goes.
  SQLite::Statement prune(db_,
                          "DELETE FROM samples WHERE rowid > ? AND rowid <= ? AND NOT tusk_kept(stream, first_ms, "
                          "last_ms) RETURNING samples");
  prune.bind(1, pruned_upto_);
  prune.bind(2, upto);
  std::uint64_t samples = 0;
  while (prune.executeStep()) samples += static_cast<std::uint64_t>(prune.getColumn(0).getInt64());
  writer_stats_.samples_pruned += samples;
  pruned_upto_ = upto;
}

std::uint64_t SeriesFile::used_bytes() {
  const auto pages = db_.execAndGet("PRAGMA page_count").getInt64();
  const auto free_pages = db_.execAndGet("PRAGMA freelist_count").getInt64();
  const auto page_size = db_.execAndGet("PRAGMA page_size").getInt64();
  return static_cast<std::uint64_t>(std::max<std::int64_t>(0, pages - free_pages) * page_size);
}

void SeriesFile::hold_budget() {
  writer_stats_.used_bytes = used_bytes();
  while (writer_stats_.used_bytes > retention_.budget) {
    SQLite::Statement oldest(db_,
                             "SELECT coalesce(max(rowid), 0), coalesce(sum(samples), 0), count(*) FROM (SELECT rowid, "
                             "samples FROM samples ORDER BY rowid LIMIT ?)");
    oldest.bind(1, kBudgetRowsPerDelete);
    oldest.executeStep();
    const std::int64_t upto = oldest.getColumn(0).getInt64();
    const auto samples = static_cast<std::uint64_t>(oldest.getColumn(1).getInt64());
    const bool none = oldest.getColumn(2).getInt64() == 0;
    oldest.reset();
    if (none) {
      if (!writer_stats_.full_rows_stopped) {
        spdlog::warn("{}: the minutes alone reached the budget of {}: no more full-resolution rows are written", path_,
                     units::format_size(retention_.budget));
      }
      writer_stats_.full_rows_stopped = true;
      return;
    }
    SQLite::Statement drop(db_, "DELETE FROM samples WHERE rowid <= ?");
    drop.bind(1, upto);
    drop.exec();
    writer_stats_.samples_over_budget += samples;
    writer_stats_.used_bytes = used_bytes();
  }
}

}  // namespace tusk
