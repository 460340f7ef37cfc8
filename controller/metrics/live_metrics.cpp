#include "controller/metrics/live_metrics.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>

#include "common/counter_names.hpp"
#include "common/rates.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/verdict/ber_bound.hpp"
#include "controller/verdict/path_faults.hpp"
#include "controller/verdict/stream_values.hpp"

namespace tusk {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct ExportedCounter {
  std::string_view counter;  // its canonical name
  const char* family;
  const char* help;
};

// Counters reset with each test (a new `test` label); within one they only grow, as agents count
// them since the test's start.
constexpr std::array<ExportedCounter, kExportedCounters> kCounters{{
    {counters::kTxFrames, "tusk_stream_tx_frames_total", "Frames this stream sent since its test started."},
    {counters::kRxFrames, "tusk_stream_rx_frames_total", "Frames this stream received since its test started."},
    {counters::kTxBytes, "tusk_stream_tx_bytes_total", "Bytes this stream sent since its test started."},
    {counters::kRxBytes, "tusk_stream_rx_bytes_total", "Bytes this stream received since its test started."},
    {counters::kLostFrames, "tusk_stream_lost_frames_total",
     "Frames sent to this stream that never arrived, outside traffic gaps."},
    {counters::kBitErrors, "tusk_stream_bit_errors_total", "Bit errors in the payloads this stream compared."},
    {counters::kBitsCompared, "tusk_stream_bits_compared_total", "Payload bits this stream compared."},
    {counters::kErroredFrames, "tusk_stream_errored_frames_total", "Frames with at least one bit error."},
    {counters::kCompletionErrors, "tusk_stream_completion_errors_total", "RDMA work completions with an error."},
    {counters::kIntegrityErrors, "tusk_stream_integrity_errors_total", "RDMA messages whose data check failed."},
    {counters::kRetransmits, "tusk_stream_retransmits_total", "Transport retransmissions counted for this stream."},
    {counters::kLinkFlaps, "tusk_stream_link_flaps_total", "Times the link went down and came back."},
    {counters::kStalls, "tusk_stream_stalls_total", "RDMA flows that waited their stall timeout with nothing done."},
}};

// Seconds of the records/s gauge: whole seconds only, so a scrape in the middle of one does not halve it.
constexpr std::int64_t kRateWindowSeconds = 5;

std::int64_t second_of(LiveMetrics::Clock::time_point time) {
  return std::chrono::duration_cast<std::chrono::seconds>(time.time_since_epoch()).count();
}

// Cut to `max_bytes` without splitting a UTF-8 sequence (protobuf strings are valid UTF-8, and a
// label value Prometheus cannot read would fail the whole scrape).
std::string cut_label(const std::string& value, std::size_t max_bytes) {
  if (value.size() <= max_bytes) return value;
  std::size_t end = max_bytes;
  while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80) --end;
  return value.substr(0, end);
}

MetricFamily family(const char* name, const char* help, MetricType type) {
  MetricFamily out;
  out.name = name;
  out.help = help;
  out.type = type;
  return out;
}

ClientMetric gauge(double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric metric;
  metric.label = std::move(labels);
  metric.gauge.value = value;
  return metric;
}

// The running test's suspects, one series each: `since` valued when its first window at fault
// began, else when it was first named.
MetricFamily suspects_family(const std::string& test, const std::vector<LiveSuspect>& suspects, bool since) {
  auto out = since ? family("tusk_suspect_link",
                            "A suspect link (or host's link) of the test as its latest checkpoint localised it; the "
                            "value is the seconds into the test when the first window it was at fault in began, -1 "
                            "when not known.",
                            MetricType::Gauge)
                   : family("tusk_suspect_named_seconds",
                            "The seconds into the test when a checkpoint (or the test's end) first named the suspect; "
                            "less tusk_suspect_link, the time from the fault's onset to its name.",
                            MetricType::Gauge);
  for (const auto& suspect : suspects) {
    const std::optional<double>& value = since ? suspect.since_s : suspect.named_s;
    if (!since && !value) continue;
    out.metric.push_back(
        gauge(value.value_or(-1),
              {{"test", test}, {"link", suspect.link}, {"kind", suspect.kind}, {"confidence", suspect.confidence}}));
  }
  return out;
}

ClientMetric counter(double value, std::vector<ClientMetric::Label> labels = {}) {
  ClientMetric metric;
  metric.label = std::move(labels);
  metric.counter.value = value;
  return metric;
}

// The bytes a stream's throughput is counted from, by the verdict's rule: what arrived where the
// receiver counts it, else what was sent.
std::optional<std::uint64_t> throughput_bytes(const proto::StreamCounters& stream) {
  if (auto rx = counter_of(stream, counters::kRxBytes)) return rx;
  return counter_of(stream, counters::kTxBytes);
}

bool exports_anything(const proto::StreamCounters& stream) {
  return std::any_of(kCounters.begin(), kCounters.end(),
                     [&](const ExportedCounter& exported) { return counter_of(stream, exported.counter).has_value(); });
}

}  // namespace

LiveMetrics::Attachment& LiveMetrics::Attachment::operator=(Attachment&& other) noexcept {
  if (this != &other) {
    if (metrics_) metrics_->detach();
    metrics_ = std::exchange(other.metrics_, nullptr);
  }
  return *this;
}

LiveMetrics::Attachment::~Attachment() {
  if (metrics_) metrics_->detach();
}

void LiveMetrics::RecordRate::advance_to(std::int64_t second) {
  if (second <= newest_second) return;
  const std::int64_t steps = std::min<std::int64_t>(second - newest_second, kRateSeconds);
  for (std::int64_t s = second - steps + 1; s <= second; ++s) {
    per_second[static_cast<std::size_t>(s) % kRateSeconds] = 0;
  }
  newest_second = second;
}

LiveMetrics::LiveMetrics(const Profile& profile, LiveMetricsLimits limits)
    : profile_name_(profile.name), profile_tests_(profile.tests.size()), limits_(limits) {
  for (const auto& test : profile.tests) add_test(test);
}

void LiveMetrics::add_test(const TestSpec& test) {
  std::optional<double> confidence;
  const EngineSlice* engine = find_engine(test.engine);
  if (engine && engine->ber_target) {
    if (const auto target = engine->ber_target(test)) confidence = target->confidence;
  }
  std::lock_guard lock(mutex_);
  test_names_.push_back(test.name);
  ber_confidence_.push_back(confidence);
}

LiveMetrics::Attachment LiveMetrics::attach(const std::string& run_id, LinksSource links) {
  {
    std::lock_guard lock(links_mutex_);
    links_ = std::move(links);
  }
  std::lock_guard lock(mutex_);
  run_id_ = run_id;
  run_over_ = false;
  return Attachment(this);
}

void LiveMetrics::detach() {
  std::lock_guard links_lock(links_mutex_);
  AgentHealth last;
  try {
    if (links_) last = health_of(links_());
  } catch (const std::exception& e) {
    spdlog::warn("metrics: cannot read the agents' final counts: {}", e.what());
  }
  links_ = nullptr;
  // The control plane closes with the run: no agent is connected to this controller any more.
  last.connected = 0;
  std::lock_guard lock(mutex_);
  final_health_ = last;
  run_over_ = true;
  current_test_ = -1;
}

LiveMetrics::AgentHealth LiveMetrics::health_of(const std::vector<AgentLink>& links) {
  AgentHealth health;
  health.known = links.size();
  for (const auto& link : links) {
    health.connected += link.connected;
    health.duplicate_records += link.duplicate_records;
    health.missing_records += link.missing_records;
  }
  return health;
}

void LiveMetrics::test_started(int test_index) {
  std::lock_guard lock(mutex_);
  current_test_ = test_index;
  if (test_index < 0 || static_cast<std::size_t>(test_index) >= test_names_.size() || test_index == series_test_) {
    return;
  }
  streams_.clear();
  series_bytes_ = 0;
  omitted_by_agent_.clear();
  series_test_ = test_index;
  suspects_.clear();
  suspects_test_ = -1;
}

void LiveMetrics::set_suspects(int test_index, std::vector<LiveSuspect> suspects) {
  if (suspects.size() > kMaxLiveSuspects) suspects.resize(kMaxLiveSuspects);
  for (auto& suspect : suspects) {
    suspect.link = cut_label(suspect.link, limits_.max_label_bytes);
    suspect.kind = cut_label(suspect.kind, limits_.max_label_bytes);
    suspect.confidence = cut_label(suspect.confidence, limits_.max_label_bytes);
  }
  std::lock_guard lock(mutex_);
  suspects_test_ = test_index;
  suspects_ = std::move(suspects);
}

void LiveMetrics::on_record(const std::string& agent, const proto::Record& record, Clock::time_point now) {
  std::lock_guard lock(mutex_);
  ++records_;
  rate_.advance_to(second_of(now));
  ++rate_.per_second[static_cast<std::size_t>(rate_.newest_second) % kRateSeconds];

  // Only the test the orchestrator started: an agent cannot move the series on (or back) by
  // naming another, and a late record of the last test changes nothing.
  const auto known_test = [&](const std::string& run_id, int test_index) {
    return !run_id_.empty() && run_id == run_id_ && test_index >= 0 && test_index == series_test_;
  };
  if (record.has_sample()) {
    const auto& sample = record.sample();
    if (!known_test(sample.run_id(), sample.test_index()) || sample.index() == 0) return;
    std::size_t omitted = 0;
    for (const auto& stream : sample.streams()) {
      omitted += !update_stream(agent, stream, sample.index(), sample.elapsed_ms());
    }
    note_omitted(agent, omitted);
  } else if (record.has_result()) {
    const auto& result = record.result();
    if (!known_test(result.run_id(), result.test_index())) return;
    std::size_t omitted = 0;
    for (const auto& stream : result.streams()) omitted += !update_stream(agent, stream, 0, std::nullopt);
    note_omitted(agent, omitted);
  }
}

void LiveMetrics::note_omitted(const std::string& agent, std::size_t omitted) {
  if (omitted > 0) {
    omitted_by_agent_[agent] = omitted;
  } else {
    omitted_by_agent_.erase(agent);
  }
}

std::shared_ptr<const std::vector<ClientMetric::Label>> LiveMetrics::labels_of(
    const std::string& agent, const proto::StreamCounters& stream) const {
  const auto cut = [&](const std::string& value) { return cut_label(value, limits_.max_label_bytes); };
  // The direction the stream's data went between the two hosts, by which side counts it.
  std::string link;
  if (!stream.peer().empty()) {
    if (counter_of(stream, counters::kRxBytes)) {
      link = fmt::format("{} -> {}", stream.peer(), agent);
    } else if (counter_of(stream, counters::kTxBytes)) {
      link = fmt::format("{} -> {}", agent, stream.peer());
    }
  }
  return std::make_shared<const std::vector<ClientMetric::Label>>(std::vector<ClientMetric::Label>{
      {"test", test_names_.at(static_cast<std::size_t>(series_test_))},
      {"agent", cut(agent)},
      {"peer", cut(stream.peer())},
      {"stream", cut(stream.stream_id())},
      {"kind", cut(stream.kind())},
      {"flow", cut(flow_text(stream))},
      {"link", cut(link)},
  });
}

bool LiveMetrics::update_stream(const std::string& agent, const proto::StreamCounters& stream,
                                std::uint32_t sample_index, std::optional<std::uint64_t> elapsed_ms) {
  auto it = streams_.find({agent, stream.stream_id()});
  if (it == streams_.end()) {
    if (!exports_anything(stream)) return true;  // nothing to show, so nothing left out
    if (streams_.size() >= limits_.max_streams) return false;
    auto labels = labels_of(agent, stream);
    // Each series of the stream is a line: its name, these labels quoted, a value.
    std::size_t line_bytes = 64;
    for (const auto& label : *labels) line_bytes += label.name.size() + label.value.size() + 4;
    const std::size_t bytes = (kExportedCounters + 2) * line_bytes;
    if (series_bytes_ + bytes > limits_.max_series_bytes) return false;
    series_bytes_ += bytes;
    it = streams_.emplace(std::make_pair(agent, stream.stream_id()), StreamSeries{}).first;
    it->second.labels = std::move(labels);
  }
  StreamSeries& series = it->second;
  const bool result = !elapsed_ms.has_value();
  // Records of one agent arrive in order; an older sample (or one after the result) changes nothing.
  if (!result && sample_index <= series.last_sample) return true;
  for (std::size_t i = 0; i < kCounters.size(); ++i) {
    if (auto value = counter_of(stream, kCounters[i].counter)) series.counters[i] = *value;
  }
  if (result) {
    series.last_sample = UINT32_MAX;
    series.throughput_bps.reset();  // the stream sends no more
    return true;
  }
  series.last_sample = sample_index;
  const auto bytes = throughput_bytes(stream);
  if (!bytes) return true;
  // Counts start at 0 with the test, so the first sample's interval starts there too.
  const std::uint64_t before = series.last_bytes.value_or(0);
  if (*elapsed_ms > series.last_elapsed_ms && *bytes >= before) {
    series.throughput_bps = throughput_bps(static_cast<double>(*bytes - before),
                                           static_cast<double>(*elapsed_ms - series.last_elapsed_ms) / 1e3);
  }
  series.last_bytes = bytes;
  series.last_elapsed_ms = *elapsed_ms;
  return true;
}

std::vector<MetricFamily> LiveMetrics::collect(Clock::time_point now) const {
  // The registry first and on its own: its lock is the io thread's, and ours is not held meanwhile.
  std::optional<AgentHealth> live_health;
  {
    std::lock_guard links_lock(links_mutex_);
    if (links_) live_health = health_of(links_());
  }

  struct StreamCopy {
    std::shared_ptr<const std::vector<ClientMetric::Label>> labels;
    std::array<std::optional<std::uint64_t>, kExportedCounters> counters;
    std::optional<double> throughput_bps;
  };
  std::vector<StreamCopy> streams;
  std::string run_id;
  bool run_over = false;
  int current_test = -1;
  std::uint64_t omitted = 0, records = 0;
  RecordRate rate;
  AgentHealth health;
  std::optional<std::string> current_name;
  std::optional<double> test_confidence;
  {
    std::lock_guard lock(mutex_);
    if (current_test_ >= 0 && static_cast<std::size_t>(current_test_) < test_names_.size()) {
      current_name = test_names_[static_cast<std::size_t>(current_test_)];
    }
    if (series_test_ >= 0) test_confidence = ber_confidence_[static_cast<std::size_t>(series_test_)];
    streams.reserve(streams_.size());
    for (const auto& [key, series] : streams_)
      streams.push_back({series.labels, series.counters, series.throughput_bps});
    run_id = run_id_;
    run_over = run_over_;
    current_test = current_test_;
    for (const auto& [agent, count] : omitted_by_agent_) omitted += count;
    records = records_;
    rate = rate_;
    health = live_health.value_or(final_health_);
  }

  std::vector<MetricFamily> families;
  const auto add = [&](const char* name, const char* help, MetricType type, double value,
                       std::vector<ClientMetric::Label> labels = {}) {
    families.push_back(family(name, help, type));
    families.back().metric.push_back(type == MetricType::Counter ? counter(value, std::move(labels))
                                                                 : gauge(value, std::move(labels)));
  };
  if (!run_id.empty()) {
    add("tusk_run_info", "The run this controller is running; the value is always 1.", MetricType::Gauge, 1,
        {{"run_id", run_id}, {"profile", profile_name_}});
  }
  add("tusk_run_finished", "1 once the run is over (the values are final), else 0.", MetricType::Gauge,
      run_over ? 1 : 0);
  add("tusk_run_tests", "Tests in the run's profile.", MetricType::Gauge, static_cast<double>(profile_tests_));
  add("tusk_current_test_index", "The running test's index from 0; -1 when none runs.", MetricType::Gauge,
      current_test);
  if (current_name) {
    add("tusk_current_test_info", "The running test (a method's step by its own name); the value is always 1.",
        MetricType::Gauge, 1, {{"test", *current_name}, {"index", std::to_string(current_test)}});
  }
  add("tusk_agents_connected", "Agents connected to the controller now.", MetricType::Gauge,
      static_cast<double>(health.connected));
  add("tusk_agents_known", "Agents that registered with the controller during the run.", MetricType::Gauge,
      static_cast<double>(health.known));
  add("tusk_records_received_total", "Telemetry records (samples, events, results) received, duplicates not counted.",
      MetricType::Counter, static_cast<double>(records));
  static_assert(kRateWindowSeconds < static_cast<std::int64_t>(kRateSeconds), "the window fits in the buckets");
  rate.advance_to(second_of(now));
  std::uint64_t recent = 0;
  for (std::int64_t s = rate.newest_second - kRateWindowSeconds; s < rate.newest_second; ++s) {
    recent += rate.per_second[static_cast<std::size_t>(s) % kRateSeconds];
  }
  add("tusk_records_per_second", "Records received per second over the last 5 whole seconds.", MetricType::Gauge,
      static_cast<double>(recent) / kRateWindowSeconds);
  add("tusk_records_duplicate_total",
      "Records agents sent again (after a reconnect) that were already stored, and dropped.", MetricType::Counter,
      static_cast<double>(health.duplicate_records));
  add("tusk_records_missing_total", "Records agents numbered but never delivered: the gaps in their sequence numbers.",
      MetricType::Counter, static_cast<double>(health.missing_records));
  add("tusk_metrics_streams_omitted", "Streams of the current test left out of these metrics by the series limit.",
      MetricType::Gauge, static_cast<double>(omitted));

  for (std::size_t i = 0; i < kCounters.size(); ++i) {
    auto out = family(kCounters[i].family, kCounters[i].help, MetricType::Counter);
    for (const auto& stream : streams) {
      if (stream.counters[i]) out.metric.push_back(counter(static_cast<double>(*stream.counters[i]), *stream.labels));
    }
    if (!out.metric.empty()) families.push_back(std::move(out));
  }
  auto throughput =
      family("tusk_stream_throughput_bits_per_second",
             "The stream's throughput over its last sample interval; gone once its result is in.", MetricType::Gauge);
  for (const auto& stream : streams) {
    if (stream.throughput_bps) throughput.metric.push_back(gauge(*stream.throughput_bps, *stream.labels));
  }
  if (!throughput.metric.empty()) families.push_back(std::move(throughput));
  // The bound the verdict will claim, from the same function and the test's confidence.
  // A plain double and a flag: GCC's -O2 flow analysis takes an optional's value for uninitialised.
  const bool has_confidence = test_confidence.has_value();
  const double confidence = test_confidence.value_or(0.0);
  constexpr std::size_t kBitErrorsAt = 5, kBitsComparedAt = 6;
  static_assert(kCounters[kBitErrorsAt].counter == counters::kBitErrors);
  static_assert(kCounters[kBitsComparedAt].counter == counters::kBitsCompared);
  auto ber =
      family("tusk_stream_ber_upper_bound",
             "Upper bound on the stream's bit error ratio so far, at its test's confidence level.", MetricType::Gauge);
  for (const auto& stream : streams) {
    const auto& bits = stream.counters[kBitsComparedAt];
    if (!has_confidence || !bits || *bits == 0) continue;
    try {
      const std::uint64_t errors = std::min(stream.counters[kBitErrorsAt].value_or(0), *bits);
      ber.metric.push_back(gauge(estimate_ber(errors, *bits, confidence).upper_bound, *stream.labels));
    } catch (const std::invalid_argument&) {
      // A confidence the loader would not pass; the verdict gives no bound then either.
    }
  }
  if (!ber.metric.empty()) families.push_back(std::move(ber));
  add_suspects(families);
  return families;
}

void LiveMetrics::add_suspects(std::vector<MetricFamily>& families) const {
  std::vector<LiveSuspect> suspects;
  std::string test;
  {
    std::lock_guard lock(mutex_);
    suspects = suspects_;
    if (suspects_test_ >= 0 && static_cast<std::size_t>(suspects_test_) < test_names_.size()) {
      test = test_names_[static_cast<std::size_t>(suspects_test_)];
    }
  }
  if (suspects.empty()) return;
  families.push_back(suspects_family(test, suspects, true));
  if (auto named = suspects_family(test, suspects, false); !named.metric.empty()) families.push_back(std::move(named));
}

std::string progress_suspects_text(const std::vector<LiveSuspect>& suspects) {
  if (suspects.empty()) return {};
  const LiveSuspect& first = suspects.front();
  return fmt::format("  suspect {}{}{}{}", first.link,
                     first.since_s ? fmt::format(" since {:.0f} s", *first.since_s) : "",
                     first.named_s ? fmt::format(", named at {:.0f} s", *first.named_s) : "",
                     suspects.size() > 1 ? fmt::format(" (+{} more)", suspects.size() - 1) : "");
}

}  // namespace tusk
