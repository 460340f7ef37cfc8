// Fleet-relative verdicts: within a test, each stream against the median of its class, the
// streams that should behave alike (same kind, same step of a schedule, same path length where
// the flows were traced, same NIC driver family): a stream more than k scaled median absolute
// deviations from that median, on the bad side of a metric (throughput below, loss, retransmits,
// step time above), is an outlier. It finds the slow link or host whose numbers pass every fixed
// threshold but sit far below its siblings' ("is this bandwidth normal?" answered by the fleet).
// The median and MAD are robust: a few outliers in a class move neither. Pure.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "controller/verdict/verdict.hpp"

namespace tusk {

// A class needs this many streams for its median to say what is normal.
inline constexpr std::size_t kMinOutlierClass = 4;
// Outliers named one by one in a test's warnings or problems; report.json lists up to
// kMaxOutliersReported.
inline constexpr std::size_t kMaxOutlierLines = 20;
inline constexpr std::size_t kMaxOutliersReported = 1000;

struct StreamOutlier {
  std::size_t stream = 0;  // index into the test's streams
  std::string metric;      // throughput_bps, loss_ratio, retransmits, step_time_mean_ns
  double value = 0;
  double median = 0;      // of its class
  double spread = 0;      // 1.4826 x the class's MAD, at least the metric's floor: the unit of `deviations`
  double deviations = 0;  // (value - median) / spread, on the bad side
  std::size_t class_size = 0;
  std::string class_name;  // "rx, 2 hops, mlx5"
};

// The outliers of `streams` at `k` spreads, worst first.
std::vector<StreamOutlier> find_stream_outliers(const std::vector<StreamVerdict>& streams, double k);

// "l1h1 -> l2h1 (...): throughput_bps 2.1 Mbit/s, 30 % below the median 3 Mbit/s of its 12 siblings
// (rx, 2 hops): 41 MADs, beyond k 5"
std::string outlier_text(const StreamOutlier& outlier, const std::vector<StreamVerdict>& streams, double k);

}  // namespace tusk
