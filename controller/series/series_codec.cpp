#include "controller/series/series_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>

namespace tusk {

namespace {

constexpr std::int64_t kMinuteMs = 60'000;

std::uint64_t zigzag(std::int64_t value) {
  return (static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63);
}

std::int64_t unzigzag(std::uint64_t value) {
  return static_cast<std::int64_t>(value >> 1) ^ -static_cast<std::int64_t>(value & 1);
}

// The change from `before` to `now` of a counter that may also go back (an agent that took a count
// back): two's complement, so adding it to `before` gives `now` again whatever the values.
std::int64_t change(std::uint64_t before, std::uint64_t now) {
  return static_cast<std::int64_t>(now - before);
}

std::size_t mask_bytes(std::size_t bits) {
  return (bits + 7) / 8;
}

void write_mask(BlobWriter& out, const std::vector<bool>& bits) {
  for (std::size_t i = 0; i < bits.size(); i += 8) {
    std::uint8_t byte = 0;
    for (std::size_t b = 0; b < 8 && i + b < bits.size(); ++b) byte |= static_cast<std::uint8_t>(bits[i + b]) << b;
    out.byte(byte);
  }
}

std::vector<bool> read_mask(BlobReader& in, std::size_t bits) {
  std::vector<bool> mask(bits);
  for (std::size_t i = 0; i < mask_bytes(bits); ++i) {
    const std::uint8_t byte = in.byte();
    for (std::size_t b = 0; b < 8 && i * 8 + b < bits; ++b) mask[i * 8 + b] = (byte >> b) & 1;
  }
  return mask;
}

void check_layout(std::size_t counters, std::size_t gauges) {
  if (counters > kMaxSeriesLayoutValues || gauges > kMaxSeriesLayoutValues) {
    throw SeriesDecodeError(
        fmt::format("a layout of {} counters and {} gauges: more than a series file holds", counters, gauges));
  }
}

}  // namespace

void BlobWriter::varint(std::uint64_t value) {
  while (value >= 0x80) {
    out_.push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out_.push_back(static_cast<char>(value));
}

void BlobWriter::signed_varint(std::int64_t value) {
  varint(zigzag(value));
}

void BlobWriter::double_change(double value, double before) {
  const std::uint64_t changed = std::bit_cast<std::uint64_t>(value) ^ std::bit_cast<std::uint64_t>(before);
  const int zeros = std::countr_zero(changed);  // 64 when nothing changed
  byte(static_cast<std::uint8_t>(zeros));
  if (zeros < 64) varint(changed >> zeros);
}

std::uint64_t BlobReader::varint() {
  std::uint64_t value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    const std::uint8_t next = byte();
    value |= static_cast<std::uint64_t>(next & 0x7f) << shift;
    if ((next & 0x80) == 0) return value;
  }
  throw SeriesDecodeError("a varint longer than 64 bits");
}

std::int64_t BlobReader::signed_varint() {
  return unzigzag(varint());
}

double BlobReader::double_change(double before) {
  const std::uint8_t zeros = byte();
  if (zeros == 64) return before;
  if (zeros > 63) throw SeriesDecodeError(fmt::format("a double's change shifted by {} bits", zeros));
  const std::uint64_t bits = varint();
  if (((bits << zeros) >> zeros) != bits) throw SeriesDecodeError("a double's change wider than 64 bits");
  return std::bit_cast<double>(std::bit_cast<std::uint64_t>(before) ^ (bits << zeros));
}

std::uint8_t BlobReader::byte() {
  if (at_ >= blob_.size()) throw SeriesDecodeError(fmt::format("a blob of {} bytes ends too soon", blob_.size()));
  return static_cast<std::uint8_t>(blob_[at_++]);
}

namespace {

// The flag byte of a packed sample.
enum SampleFlag : std::uint8_t {
  kIndexSteady = 1,     // the index's step is the step before
  kElapsedSteady = 2,   // so is elapsed time's
  kAgentSteady = 4,     // and the agent clock's
  kCountersSteady = 8,  // every counter's: no counter mask follows
  kGaugesSame = 16,     // no gauge changed: no gauge mask follows
};
constexpr std::size_t kTimeColumns = 3;

}  // namespace

void FullRowEncoder::clear() {
  blob_.clear();
  samples_ = 0;
  values_.clear();
  steps_.clear();
  gauge_bits_.clear();
}

void FullRowEncoder::add(std::uint32_t sample, std::uint64_t elapsed_ms, std::int64_t agent_time_ns,
                         std::span<const std::uint64_t> counters, std::span<const double> gauges) {
  if (samples_ == 0) {
    values_.assign(kTimeColumns + counters.size(), 0);
    steps_.assign(values_.size(), 0);
    gauge_bits_.assign(gauges.size(), std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()));
  }
  now_.assign(values_.size(), 0);
  now_[0] = sample;
  now_[1] = elapsed_ms;
  now_[2] = static_cast<std::uint64_t>(agent_time_ns);
  for (std::size_t i = 0; i < counters.size() && kTimeColumns + i < now_.size(); ++i)
    now_[kTimeColumns + i] = counters[i];
  // Each column's change of step, two's complement: exact whatever the values do.
  std::uint8_t flags = 0;
  bool counters_steady = true;
  for (std::size_t i = 0; i < now_.size(); ++i) {
    const std::uint64_t step = now_[i] - values_[i];
    const bool steady = step == steps_[i];
    if (i < kTimeColumns && steady) flags |= static_cast<std::uint8_t>(1u << i);
    if (i >= kTimeColumns && !steady) counters_steady = false;
  }
  if (counters_steady) flags |= kCountersSteady;
  std::vector<bool> changed(gauge_bits_.size());
  bool gauges_same = true;
  for (std::size_t i = 0; i < changed.size(); ++i) {
    const double value = i < gauges.size() ? gauges[i] : std::numeric_limits<double>::quiet_NaN();
    changed[i] = std::bit_cast<std::uint64_t>(value) != gauge_bits_[i];
    gauges_same = gauges_same && !changed[i];
  }
  if (gauges_same) flags |= kGaugesSame;
  BlobWriter out(blob_);
  out.byte(flags);
  std::vector<bool> moved(now_.size() - kTimeColumns);
  for (std::size_t i = 0; i < now_.size(); ++i) {
    const std::uint64_t step = now_[i] - values_[i];
    if (i >= kTimeColumns) moved[i - kTimeColumns] = step != steps_[i];
    if (i < kTimeColumns && step != steps_[i]) out.signed_varint(static_cast<std::int64_t>(step - steps_[i]));
  }
  if (!counters_steady) {
    write_mask(out, moved);
    for (std::size_t i = kTimeColumns; i < now_.size(); ++i) {
      const std::uint64_t step = now_[i] - values_[i];
      if (moved[i - kTimeColumns]) out.signed_varint(static_cast<std::int64_t>(step - steps_[i]));
    }
  }
  if (!gauges_same) {
    write_mask(out, changed);
    for (std::size_t i = 0; i < changed.size(); ++i) {
      if (!changed[i]) continue;
      out.double_change(gauges[i], std::bit_cast<double>(gauge_bits_[i]));
      gauge_bits_[i] = std::bit_cast<std::uint64_t>(gauges[i]);
    }
  }
  for (std::size_t i = 0; i < now_.size(); ++i) {
    steps_[i] = now_[i] - values_[i];
    values_[i] = now_[i];
  }
  ++samples_;
}

std::vector<SeriesSample> decode_full_row(std::string_view blob, std::uint32_t samples, std::size_t counters,
                                          std::size_t gauges) {
  check_layout(counters, gauges);
  if (samples > kMaxSamplesPerSeriesRow) {
    throw SeriesDecodeError(fmt::format("a row of {} samples: more than a series file writes", samples));
  }
  // Each sample takes at least its flag byte: a row cannot claim more.
  if (samples > blob.size()) {
    throw SeriesDecodeError(fmt::format("a row claims {} samples in {} bytes", samples, blob.size()));
  }
  BlobReader in(blob);
  std::vector<SeriesSample> rows;
  rows.reserve(samples);
  std::vector<std::uint64_t> values(kTimeColumns + counters, 0), steps(values.size(), 0);
  std::vector<double> last_gauges(gauges, std::numeric_limits<double>::quiet_NaN());
  for (std::uint32_t s = 0; s < samples; ++s) {
    const std::uint8_t flags = in.byte();
    for (std::size_t i = 0; i < kTimeColumns; ++i) {
      if ((flags & (1u << i)) == 0) steps[i] += static_cast<std::uint64_t>(in.signed_varint());
    }
    if ((flags & kCountersSteady) == 0) {
      const std::vector<bool> moved = read_mask(in, counters);
      for (std::size_t i = 0; i < counters; ++i) {
        if (moved[i]) steps[kTimeColumns + i] += static_cast<std::uint64_t>(in.signed_varint());
      }
    }
    for (std::size_t i = 0; i < values.size(); ++i) values[i] += steps[i];
    if ((flags & kGaugesSame) == 0) {
      const std::vector<bool> changed = read_mask(in, gauges);
      for (std::size_t i = 0; i < gauges; ++i) {
        if (changed[i]) last_gauges[i] = in.double_change(last_gauges[i]);
      }
    }
    SeriesSample row;
    row.sample = static_cast<std::uint32_t>(values[0]);
    row.elapsed_ms = values[1];
    row.agent_time_ns = static_cast<std::int64_t>(values[2]);
    row.counters.assign(values.begin() + kTimeColumns, values.end());
    row.gauges = last_gauges;
    rows.push_back(std::move(row));
  }
  if (!in.done()) throw SeriesDecodeError(fmt::format("a row of {} samples has bytes left over", samples));
  return rows;
}

void RollupAccumulator::reset(std::size_t counters, std::size_t gauges) {
  rollup_ = SeriesRollup{};
  rollup_.counters.resize(counters);
  rollup_.gauges.resize(gauges);
  before_ = SeriesRollup{};
  minute_ = -1;
  have_last_ = false;
  has_step_ = false;
  next_absolute_ = true;
  last_.assign(counters, 0);
  minute_base_.assign(counters, 0);
  gauge_sum_.assign(gauges, 0);
}

void RollupAccumulator::add(std::uint64_t elapsed_ms, std::span<const std::uint64_t> counters,
                            std::span<const double> gauges) {
  const std::int64_t minute = static_cast<std::int64_t>(elapsed_ms / kMinuteMs);
  if (rollup_.samples == 0) {
    minute_ = minute;
    rollup_.first_ms = elapsed_ms;
    rollup_.absolute = next_absolute_;
  }
  // The least and most change start at the rollup's first change (not its first sample: the
  // stream's first sample changes from nothing).
  const bool first = !has_step_;
  for (std::size_t i = 0; i < rollup_.counters.size(); ++i) {
    const std::uint64_t value = i < counters.size() ? counters[i] : 0;
    SeriesRollup::Counter& counter = rollup_.counters[i];
    counter.sum = change(minute_base_[i], value);
    if (have_last_) {
      const std::int64_t step = change(last_[i], value);
      counter.min = first ? step : std::min(counter.min, step);
      counter.max = first ? step : std::max(counter.max, step);
    }
    last_[i] = value;
  }
  for (std::size_t i = 0; i < rollup_.gauges.size() && i < gauges.size(); ++i) {
    const double value = gauges[i];
    if (!std::isfinite(value)) continue;
    SeriesRollup::Gauge& gauge = rollup_.gauges[i];
    gauge.min = gauge.count == 0 ? value : std::min(gauge.min, value);
    gauge.max = gauge.count == 0 ? value : std::max(gauge.max, value);
    gauge.last = value;
    gauge_sum_[i] += value;
    ++gauge.count;
  }
  rollup_.last_ms = elapsed_ms;
  ++rollup_.samples;
  has_step_ = has_step_ || have_last_;
  have_last_ = true;
}

std::string RollupAccumulator::take() {
  for (std::size_t i = 0; i < rollup_.gauges.size(); ++i) {
    if (rollup_.gauges[i].count > 0) rollup_.gauges[i].mean = gauge_sum_[i] / rollup_.gauges[i].count;
  }
  // What the reader will decode (the mean rounded) is what the next rollup goes on from.
  std::string blob = encode_rollup(rollup_, rollup_.absolute ? nullptr : &before_);
  before_ = decode_rollup(blob, rollup_.counters.size(), rollup_.gauges.size(), rollup_.absolute ? nullptr : &before_);
  minute_base_ = last_;
  next_absolute_ = false;
  const std::size_t counters = rollup_.counters.size(), gauges = rollup_.gauges.size();
  rollup_ = SeriesRollup{};
  rollup_.counters.resize(counters);
  rollup_.gauges.resize(gauges);
  gauge_sum_.assign(gauges, 0);
  minute_ = -1;
  has_step_ = false;
  return blob;
}

namespace {

// A gauge that stood at the previous rollup's last value all minute.
bool stood_still(const SeriesRollup::Gauge& gauge, const SeriesRollup* before, std::size_t i) {
  if (before == nullptr || i >= before->gauges.size() || before->gauges[i].count == 0) return false;
  const double last = before->gauges[i].last;
  return gauge.min == last && gauge.max == last && gauge.last == last;
}

SeriesRollup::Counter counter_before(const SeriesRollup* before, std::size_t i) {
  return before != nullptr && i < before->counters.size() ? before->counters[i] : SeriesRollup::Counter{};
}

// A counter's least and most change as offsets from its mean change: small for steady traffic.
std::int64_t mean_step(const SeriesRollup& rollup, const SeriesRollup::Counter& counter) {
  return rollup.samples > 0 ? counter.sum / static_cast<std::int64_t>(rollup.samples) : 0;
}

}  // namespace

std::string encode_rollup(const SeriesRollup& rollup, const SeriesRollup* before) {
  if (rollup.absolute) before = nullptr;  // a layout's first minute goes on from nothing
  std::string blob;
  BlobWriter out(blob);
  out.byte(rollup.absolute ? 1 : 0);
  out.varint(rollup.samples);
  // Its time from the minute before's end; each counter as it differs from the minute before's (a
  // steady counter is a bit): its change, and its least and most step about its mean step.
  out.signed_varint(static_cast<std::int64_t>(rollup.first_ms - (before ? before->last_ms : 0)));
  out.varint(rollup.last_ms - rollup.first_ms);
  std::vector<bool> moved(rollup.counters.size());
  for (std::size_t i = 0; i < moved.size(); ++i) {
    const auto& c = rollup.counters[i];
    const SeriesRollup::Counter was = counter_before(before, i);
    moved[i] = c.sum != was.sum || c.min != was.min || c.max != was.max;
  }
  write_mask(out, moved);
  for (std::size_t i = 0; i < moved.size(); ++i) {
    if (!moved[i]) continue;
    const auto& c = rollup.counters[i];
    const std::int64_t mean = mean_step(rollup, c);
    out.signed_varint(static_cast<std::int64_t>(static_cast<std::uint64_t>(c.sum) -
                                                static_cast<std::uint64_t>(counter_before(before, i).sum)));
    out.signed_varint(static_cast<std::int64_t>(static_cast<std::uint64_t>(mean) - static_cast<std::uint64_t>(c.min)));
    out.signed_varint(static_cast<std::int64_t>(static_cast<std::uint64_t>(c.max) - static_cast<std::uint64_t>(mean)));
  }
  std::vector<bool> present(rollup.gauges.size()), still(rollup.gauges.size());
  for (std::size_t i = 0; i < present.size(); ++i) {
    present[i] = rollup.gauges[i].count > 0;
    still[i] = present[i] && stood_still(rollup.gauges[i], before, i);
  }
  write_mask(out, present);
  write_mask(out, still);
  for (std::size_t i = 0; i < present.size(); ++i) {
    if (!present[i]) continue;
    const auto& g = rollup.gauges[i];
    out.varint(g.count);
    if (still[i]) continue;
    // Each against the minute before's (a gauge that moves within its range changes few bits); the
    // mean to a float's precision, whose cut bits are zeros.
    const SeriesRollup::Gauge was =
        before != nullptr && i < before->gauges.size() ? before->gauges[i] : SeriesRollup::Gauge{};
    out.double_change(g.min, was.min);
    out.double_change(g.max, was.max);
    out.double_change(static_cast<double>(static_cast<float>(g.mean)), was.mean);
    out.double_change(g.last, was.last);
  }
  return blob;
}

SeriesRollup decode_rollup(std::string_view blob, std::size_t counters, std::size_t gauges,
                           const SeriesRollup* before) {
  check_layout(counters, gauges);
  BlobReader in(blob);
  SeriesRollup rollup;
  rollup.absolute = in.byte() != 0;
  if (rollup.absolute) before = nullptr;
  const std::uint64_t samples = in.varint();
  if (samples > kMaxSamplesPerSeriesRow * 64ull) {
    throw SeriesDecodeError(fmt::format("a minute of {} samples: more than a series file writes", samples));
  }
  rollup.samples = static_cast<std::uint32_t>(samples);
  rollup.first_ms = (before ? before->last_ms : 0) + static_cast<std::uint64_t>(in.signed_varint());
  rollup.last_ms = rollup.first_ms + in.varint();
  rollup.counters.resize(counters);
  const std::vector<bool> moved = read_mask(in, counters);
  for (std::size_t i = 0; i < counters; ++i) {
    auto& c = rollup.counters[i];
    if (!moved[i]) {
      c = counter_before(before, i);
      continue;
    }
    c.sum = static_cast<std::int64_t>(static_cast<std::uint64_t>(counter_before(before, i).sum) +
                                      static_cast<std::uint64_t>(in.signed_varint()));
    const std::int64_t mean = mean_step(rollup, c);
    c.min =
        static_cast<std::int64_t>(static_cast<std::uint64_t>(mean) - static_cast<std::uint64_t>(in.signed_varint()));
    c.max =
        static_cast<std::int64_t>(static_cast<std::uint64_t>(mean) + static_cast<std::uint64_t>(in.signed_varint()));
  }
  rollup.gauges.resize(gauges);
  const std::vector<bool> present = read_mask(in, gauges);
  const std::vector<bool> still = read_mask(in, gauges);
  for (std::size_t i = 0; i < gauges; ++i) {
    if (!present[i]) continue;
    auto& g = rollup.gauges[i];
    const std::uint64_t count = in.varint();
    g.count = static_cast<std::uint32_t>(std::min<std::uint64_t>(count, UINT32_MAX));
    if (still[i]) {
      if (before == nullptr || i >= before->gauges.size()) {
        throw SeriesDecodeError("a gauge that stood still with no minute before it");
      }
      g.min = g.max = g.mean = g.last = before->gauges[i].last;
      continue;
    }
    const SeriesRollup::Gauge was =
        before != nullptr && i < before->gauges.size() ? before->gauges[i] : SeriesRollup::Gauge{};
    g.min = in.double_change(was.min);
    g.max = in.double_change(was.max);
    g.mean = in.double_change(was.mean);
    g.last = in.double_change(was.last);
  }
  if (!in.done()) throw SeriesDecodeError("a minute's rollup has bytes left over");
  return rollup;
}

}  // namespace tusk
