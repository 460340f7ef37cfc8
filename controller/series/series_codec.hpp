// How the series file packs its rows (schema 2): a stream's samples of one commit as one blob, and
// a stream's minute as one rollup blob. Integers are LEB128 varints, signed ones zigzagged;
// counters travel as their change since the previous value in the blob, so a clean stream's
// counters cost a byte or two each. Decoding reads from a file anyone may have written: every read
// is bounded by the blob and by the counts its row claims, and a blob that lies throws.
#pragma once

#include <cstdint>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace tusk {

struct SeriesDecodeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Appends to a blob.
class BlobWriter {
 public:
  explicit BlobWriter(std::string& out) : out_(out) {}
  void varint(std::uint64_t value);
  void signed_varint(std::int64_t value);
  // A double as the bits it changed from `before`, their trailing zeros cut: a byte when it did
  // not change, two or three for a gauge that moved within its scale.
  void double_change(double value, double before);
  void byte(std::uint8_t value) { out_.push_back(static_cast<char>(value)); }

 private:
  std::string& out_;
};

// Reads a blob; throws SeriesDecodeError past its end or on a varint longer than 64 bits.
class BlobReader {
 public:
  explicit BlobReader(std::string_view blob) : blob_(blob) {}
  std::uint64_t varint();
  std::int64_t signed_varint();
  double double_change(double before);
  std::uint8_t byte();
  bool done() const { return at_ == blob_.size(); }
  std::size_t left() const { return blob_.size() - at_; }

 private:
  std::string_view blob_;
  std::size_t at_ = 0;
};

// One sample of a stream as the file keeps it. Gauges that are no number are NaN.
struct SeriesSample {
  std::uint32_t sample = 0;
  std::uint64_t elapsed_ms = 0;
  std::int64_t agent_time_ns = 0;
  std::vector<std::uint64_t> counters;  // cumulative, in the layout's order
  std::vector<double> gauges;
};

// A stream's consecutive samples in one layout, packed. Its index, two clocks and each counter
// travel as the change of their step (value minus the value before, minus the step before: 0 for
// a steady rate), the first sample's from zero; a flag byte says which are 0, a bit per counter
// which of them follow; each gauge as a bit "same as before" or its 8 bytes. A steady stream's
// sample is a few bytes, whatever its counters count.
class FullRowEncoder {
 public:
  void add(std::uint32_t sample, std::uint64_t elapsed_ms, std::int64_t agent_time_ns,
           std::span<const std::uint64_t> counters, std::span<const double> gauges);
  const std::string& blob() const { return blob_; }
  std::uint32_t samples() const { return samples_; }
  void clear();

 private:
  std::string blob_;
  std::uint32_t samples_ = 0;
  // Index, elapsed, agent time, then the counters: each one's last value and step.
  std::vector<std::uint64_t> values_, steps_;
  std::vector<std::uint64_t> gauge_bits_;
  std::vector<std::uint64_t> now_;  // room reused between samples
};

// The samples of a row whose layout has `counters` and `gauges` values and which claims `samples`
// of them (at most kMaxSamplesPerRow).
std::vector<SeriesSample> decode_full_row(std::string_view blob, std::uint32_t samples, std::size_t counters,
                                          std::size_t gauges);
inline constexpr std::uint32_t kMaxSamplesPerSeriesRow = 1 << 16;
// A layout with more values than this is no layout this file wrote (the run bounds an agent's).
inline constexpr std::size_t kMaxSeriesLayoutValues = 1 << 16;

// A stream's minute: for each counter its change over the minute (`sum`: from the last value of the
// minute before, or from zero in the stream's first rollup of a layout), the least and most it
// changed between two samples, and (by the running sum) its last value; for each gauge the least,
// most, mean and last of its numbers and how many there were.
struct SeriesRollup {
  std::uint32_t samples = 0;
  std::uint64_t first_ms = 0, last_ms = 0;
  bool absolute = true;  // the sums start from zero: the stream's first rollup in this layout
  struct Counter {
    std::int64_t sum = 0, min = 0, max = 0;
  };
  struct Gauge {
    std::uint32_t count = 0;  // of numbers; 0: none this minute
    double min = 0, max = 0, mean = 0, last = 0;
  };
  std::vector<Counter> counters;
  std::vector<Gauge> gauges;
};

// Folds a stream's samples into minutes. The minute of a sample is its elapsed_ms / 60 s.
class RollupAccumulator {
 public:
  // Starts over in a new layout: the next rollup's sums are absolute.
  void reset(std::size_t counters, std::size_t gauges);
  bool empty() const { return rollup_.samples == 0; }
  std::int64_t minute() const { return minute_; }
  // Folds one sample in; a sample of another minute first needs take().
  void add(std::uint64_t elapsed_ms, std::span<const std::uint64_t> counters, std::span<const double> gauges);
  // The minute folded so far, packed; the accumulator goes on from its last values.
  std::string take();
  const SeriesRollup& current() const { return rollup_; }

 private:
  SeriesRollup rollup_, before_;  // before_: the rollup taken last in this layout (its gauges' last)
  std::int64_t minute_ = -1;
  bool have_last_ = false, has_step_ = false, next_absolute_ = true;
  std::vector<std::uint64_t> last_;         // the previous sample's counters (for min/max changes)
  std::vector<std::uint64_t> minute_base_;  // the last counters of the minute before (sums)
  std::vector<double> gauge_sum_;
};

// `before`: the stream's previous rollup in the same layout (none for an absolute one). A gauge
// that stood still at its previous value all minute is packed as its count alone.
std::string encode_rollup(const SeriesRollup& rollup, const SeriesRollup* before);
SeriesRollup decode_rollup(std::string_view blob, std::size_t counters, std::size_t gauges, const SeriesRollup* before);

}  // namespace tusk
