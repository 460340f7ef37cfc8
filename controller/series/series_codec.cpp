#include "controller/series/series_codec.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
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

void BlobWriter::float64(double value) {
  char bytes[8];
  std::memcpy(bytes, &value, 8);
  out_.append(bytes, 8);
}

void BlobWriter::float32(float value) {
  char bytes[4];
  std::memcpy(bytes, &value, 4);
  out_.append(bytes, 4);
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

std::uint8_t BlobReader::byte() {
  if (at_ >= blob_.size()) throw SeriesDecodeError(fmt::format("a blob of {} bytes ends too soon", blob_.size()));
  return static_cast<std::uint8_t>(blob_[at_++]);
}

double BlobReader::float64() {
  if (blob_.size() - at_ < 8) throw SeriesDecodeError(fmt::format("a blob of {} bytes ends too soon", blob_.size()));
  double value;
  std::memcpy(&value, blob_.data() + at_, 8);
  at_ += 8;
  return value;
}

float BlobReader::float32() {
  if (blob_.size() - at_ < 4) throw SeriesDecodeError(fmt::format("a blob of {} bytes ends too soon", blob_.size()));
  float value;
  std::memcpy(&value, blob_.data() + at_, 4);
  at_ += 4;
  return value;
}

void FullRowEncoder::clear() {
  blob_.clear();
  samples_ = 0;
  sample_ = 0;
  elapsed_ms_ = 0;
  agent_time_ns_ = 0;
  counters_.clear();
  gauge_bits_.clear();
}

void FullRowEncoder::add(std::uint32_t sample, std::uint64_t elapsed_ms, std::int64_t agent_time_ns,
                         std::span<const std::uint64_t> counters, std::span<const double> gauges) {
  BlobWriter out(blob_);
  if (samples_ == 0) {
    counters_.assign(counters.size(), 0);
    gauge_bits_.assign(gauges.size(), std::bit_cast<std::uint64_t>(std::numeric_limits<double>::quiet_NaN()));
  }
  out.signed_varint(static_cast<std::int64_t>(sample - sample_));
  out.signed_varint(static_cast<std::int64_t>(elapsed_ms - elapsed_ms_));
  out.signed_varint(static_cast<std::int64_t>(static_cast<std::uint64_t>(agent_time_ns) -
                                              static_cast<std::uint64_t>(agent_time_ns_)));
  for (std::size_t i = 0; i < counters.size() && i < counters_.size(); ++i) {
    out.signed_varint(change(counters_[i], counters[i]));
    counters_[i] = counters[i];
  }
  std::vector<bool> changed(gauge_bits_.size());
  for (std::size_t i = 0; i < gauges.size() && i < changed.size(); ++i) {
    changed[i] = std::bit_cast<std::uint64_t>(gauges[i]) != gauge_bits_[i];
  }
  write_mask(out, changed);
  for (std::size_t i = 0; i < changed.size(); ++i) {
    if (!changed[i]) continue;
    out.float64(gauges[i]);
    gauge_bits_[i] = std::bit_cast<std::uint64_t>(gauges[i]);
  }
  sample_ = sample;
  elapsed_ms_ = elapsed_ms;
  agent_time_ns_ = agent_time_ns;
  ++samples_;
}

std::vector<SeriesSample> decode_full_row(std::string_view blob, std::uint32_t samples, std::size_t counters,
                                          std::size_t gauges) {
  check_layout(counters, gauges);
  if (samples > kMaxSamplesPerSeriesRow) {
    throw SeriesDecodeError(fmt::format("a row of {} samples: more than a series file writes", samples));
  }
  // Each sample takes at least a byte per counter and three of time: a row cannot claim more.
  if (samples > blob.size() / (3 + counters + mask_bytes(gauges))) {
    throw SeriesDecodeError(fmt::format("a row claims {} samples in {} bytes", samples, blob.size()));
  }
  BlobReader in(blob);
  std::vector<SeriesSample> rows;
  rows.reserve(samples);
  SeriesSample last;
  last.counters.assign(counters, 0);
  last.gauges.assign(gauges, std::numeric_limits<double>::quiet_NaN());
  for (std::uint32_t s = 0; s < samples; ++s) {
    SeriesSample row;
    row.sample = static_cast<std::uint32_t>(last.sample + static_cast<std::uint64_t>(in.signed_varint()));
    row.elapsed_ms = last.elapsed_ms + static_cast<std::uint64_t>(in.signed_varint());
    row.agent_time_ns = static_cast<std::int64_t>(static_cast<std::uint64_t>(last.agent_time_ns) +
                                                  static_cast<std::uint64_t>(in.signed_varint()));
    row.counters.resize(counters);
    for (std::size_t i = 0; i < counters; ++i) {
      row.counters[i] = last.counters[i] + static_cast<std::uint64_t>(in.signed_varint());
    }
    row.gauges = last.gauges;
    const std::vector<bool> changed = read_mask(in, gauges);
    for (std::size_t i = 0; i < gauges; ++i) {
      if (changed[i]) row.gauges[i] = in.float64();
    }
    last = row;
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
  // What the reader will decode (float32 fields rounded) is what the next rollup compares with.
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

// A counter's least and most change as offsets from its mean change: small for steady traffic.
std::int64_t mean_step(const SeriesRollup& rollup, const SeriesRollup::Counter& counter) {
  return rollup.samples > 0 ? counter.sum / static_cast<std::int64_t>(rollup.samples) : 0;
}

}  // namespace

std::string encode_rollup(const SeriesRollup& rollup, const SeriesRollup* before) {
  std::string blob;
  BlobWriter out(blob);
  out.byte(rollup.absolute ? 1 : 0);
  out.varint(rollup.samples);
  out.varint(rollup.first_ms);
  out.varint(rollup.last_ms - rollup.first_ms);
  std::vector<bool> moved(rollup.counters.size());
  for (std::size_t i = 0; i < moved.size(); ++i) {
    const auto& c = rollup.counters[i];
    moved[i] = c.sum != 0 || c.min != 0 || c.max != 0;
  }
  write_mask(out, moved);
  for (std::size_t i = 0; i < moved.size(); ++i) {
    if (!moved[i]) continue;
    const auto& c = rollup.counters[i];
    const std::int64_t mean = mean_step(rollup, c);
    out.signed_varint(c.sum);
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
    out.float32(static_cast<float>(g.min));
    out.float32(static_cast<float>(g.max));
    out.float32(static_cast<float>(g.mean));
    out.float64(g.last);
  }
  return blob;
}

SeriesRollup decode_rollup(std::string_view blob, std::size_t counters, std::size_t gauges,
                           const SeriesRollup* before) {
  check_layout(counters, gauges);
  BlobReader in(blob);
  SeriesRollup rollup;
  rollup.absolute = in.byte() != 0;
  const std::uint64_t samples = in.varint();
  if (samples > kMaxSamplesPerSeriesRow * 64ull) {
    throw SeriesDecodeError(fmt::format("a minute of {} samples: more than a series file writes", samples));
  }
  rollup.samples = static_cast<std::uint32_t>(samples);
  rollup.first_ms = in.varint();
  rollup.last_ms = rollup.first_ms + in.varint();
  rollup.counters.resize(counters);
  const std::vector<bool> moved = read_mask(in, counters);
  for (std::size_t i = 0; i < counters; ++i) {
    if (!moved[i]) continue;
    auto& c = rollup.counters[i];
    c.sum = in.signed_varint();
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
    g.min = in.float32();
    g.max = in.float32();
    g.mean = in.float32();
    g.last = in.float64();
  }
  if (!in.done()) throw SeriesDecodeError("a minute's rollup has bytes left over");
  return rollup;
}

}  // namespace tusk
