// What a run looks like while it lasts, for Prometheus (`run --metrics-listen`): the latest
// counters of every stream of the current test, its throughput over the last sample interval and
// its BER bound, and the controller's health (agents connected, records in, duplicates, gaps).
// Kept as plain data; a scrape turns a copy of it into metric families (metrics_endpoint).
//
// Series: the streams of one test at a time. When the next test starts, the last one's series go
// (Prometheus keeps their history); after the run, the last test's stay with their final values.
// At most `max_streams` streams per test are kept, and no more than their series' text fits in
// `max_series_bytes`, first come first kept; the rest are counted in tusk_metrics_streams_omitted. Label values come
// from agents and are cut to `max_label_bytes`.
//
// Threads: on_record runs on the control plane's io thread, test_started and attach on the
// orchestrator's, collect on the HTTP server's. One mutex guards the state; it is held to update a
// stream or to copy the state, never while a family is built or the registry is asked.
#pragma once

#include <prometheus/metric_family.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "controller/outcome/agent_data.hpp"
#include "controller/profile/profile.hpp"
#include "tusk.pb.h"

namespace tusk {

struct LiveMetricsLimits {
  std::size_t max_streams = 20'000;
  std::size_t max_label_bytes = 128;
  // What one scrape of the streams' series may take as text, estimated as each stream is added:
  // at the other limits alone a scrape was 222 MB (300,000 series), and each concurrent scrape
  // renders its own copy.
  std::size_t max_series_bytes = 16 * 1024 * 1024;
};

// A suspect of the running test as its latest checkpoint (or its end) localised it.
struct LiveSuspect {
  std::string link;  // the link's key ("l1:s2 -> s2:l1"), or "host <agent>" for a host's own link
  std::string kind;  // loss, damage, failure
  std::string confidence;
  std::optional<double> since_s;  // the start of the first window it was at fault in, into the test
  std::optional<double> named_s;  // when a checkpoint (or the test's end) first named it, into the test
};

// The progress line's words on the suspects: "  suspect l1:s2 -> s2:l1 since 20 s, named at 23 s
// (+1 more)", the first with when its fault began and when it was first named; empty for none.
std::string progress_suspects_text(const std::vector<LiveSuspect>& suspects);

// The most suspects a scrape shows: more is a fabric whose every link is named, and the report's.
inline constexpr std::size_t kMaxLiveSuspects = 256;

// The canonical counters exported per stream, each as a Prometheus counter (common/counter_names.hpp).
inline constexpr std::size_t kExportedCounters = 13;

class LiveMetrics {
 public:
  using Clock = std::chrono::steady_clock;
  using LinksSource = std::function<std::vector<AgentLink>()>;

  explicit LiveMetrics(const Profile& profile, LiveMetricsLimits limits = {});
  LiveMetrics(const LiveMetrics&) = delete;
  LiveMetrics& operator=(const LiveMetrics&) = delete;

  // The run's side of the link: while it lives, records of `run_id` count and scrapes ask `links`
  // (the registry's, thread-safe) for the agents; destroyed when the run is over, which keeps the
  // final values and stops asking (the registry goes with the run).
  class Attachment {
   public:
    Attachment() = default;
    explicit Attachment(LiveMetrics* metrics) : metrics_(metrics) {}
    Attachment(Attachment&& other) noexcept : metrics_(std::exchange(other.metrics_, nullptr)) {}
    Attachment& operator=(Attachment&& other) noexcept;
    ~Attachment();
    Attachment(const Attachment&) = delete;
    Attachment& operator=(const Attachment&) = delete;

   private:
    LiveMetrics* metrics_ = nullptr;
  };
  [[nodiscard]] Attachment attach(const std::string& run_id, LinksSource links);

  // A test added while the run goes, after the profile's (a method's step): once it starts, its
  // streams are the series, under its own name, as a profile's test's are.
  void add_test(const TestSpec& test);
  void test_started(int test_index);
  void on_record(const std::string& agent, const proto::Record& record, Clock::time_point now = Clock::now());
  // The test's suspects now, in place of any said before: tusk_suspect_link{test, link, kind,
  // confidence}, valued the seconds into the test its first window at fault began (-1: not known),
  // and tusk_suspect_named_seconds, when it was first named: the time from onset to named between.
  void set_suspects(int test_index, std::vector<LiveSuspect> suspects);

  std::vector<prometheus::MetricFamily> collect(Clock::time_point now = Clock::now()) const;

 private:
  struct StreamSeries {
    std::shared_ptr<const std::vector<prometheus::ClientMetric::Label>> labels;
    std::array<std::optional<std::uint64_t>, kExportedCounters> counters;
    std::uint32_t last_sample = 0;
    // Bytes and time at the last sample, for the throughput over the next interval.
    std::optional<std::uint64_t> last_bytes;
    std::uint64_t last_elapsed_ms = 0;
    std::optional<double> throughput_bps;  // none before the first sample, and after the stream's result
  };

  // Records per whole second, the last few seconds, for the records/s gauge.
  static constexpr std::size_t kRateSeconds = 8;
  struct RecordRate {
    std::array<std::uint64_t, kRateSeconds> per_second{};
    std::int64_t newest_second = 0;
    void advance_to(std::int64_t second);
  };

  void detach();
  // The running test's suspects, as one family, when it has any.
  void add_suspects(std::vector<prometheus::MetricFamily>& families) const;
  // False when the stream is new and the limit leaves no room for it.
  bool update_stream(const std::string& agent, const proto::StreamCounters& stream, std::uint32_t sample_index,
                     std::optional<std::uint64_t> elapsed_ms);
  // Locked: what the agent's latest record left out.
  void note_omitted(const std::string& agent, std::size_t omitted);
  std::shared_ptr<const std::vector<prometheus::ClientMetric::Label>> labels_of(
      const std::string& agent, const proto::StreamCounters& stream) const;

  const std::string profile_name_;
  const std::size_t profile_tests_;
  const LiveMetricsLimits limits_;

  // Taken alone, or before mutex_; never while the io thread could wait for it.
  mutable std::mutex links_mutex_;
  LinksSource links_;

  mutable std::mutex mutex_;
  // Per test (the profile's, then the steps add_test added): its name, and its engine's BER
  // confidence as the verdict holds it.
  std::vector<std::string> test_names_;
  std::vector<std::optional<double>> ber_confidence_;
  std::string run_id_;
  bool run_over_ = false;
  int current_test_ = -1;
  int series_test_ = -1;  // the test whose streams are the series: the last one started
  std::map<std::pair<std::string, std::string>, StreamSeries> streams_;  // (agent, stream id)
  int suspects_test_ = -1;
  std::vector<LiveSuspect> suspects_;
  std::size_t series_bytes_ = 0;  // the streams' series as text, estimated (max_series_bytes)
  // Streams left out of each agent's latest record: every record holds all of an agent's streams,
  // so this counts them once however often they come, in memory bounded by the agents.
  std::map<std::string, std::size_t> omitted_by_agent_;
  std::uint64_t records_ = 0;
  RecordRate rate_;
  struct AgentHealth {
    std::size_t known = 0;
    std::size_t connected = 0;
    std::uint64_t duplicate_records = 0;
    std::uint64_t missing_records = 0;
  };
  static AgentHealth health_of(const std::vector<AgentLink>& links);
  AgentHealth final_health_;  // the registry's counts as the run left them, once it is gone
};

}  // namespace tusk
