#include "controller/verdict/stream_outliers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <tuple>

#include "common/units.hpp"

namespace tusk {
namespace {

// 1.4826 x MAD estimates a normal distribution's standard deviation.
constexpr double kMadToSigma = 1.4826;

struct OutlierMetric {
  const char* name;
  bool high_is_bad;
  // The smallest spread worth counting in: streams at one set rate agree to a fraction of a
  // percent, and a MAD of zero would make any difference an outlier.
  double relative_floor;  // of the class's median
  double absolute_floor;
};

constexpr OutlierMetric kMetrics[] = {
    {"throughput_bps", false, 0.01, 0},
    {"loss_ratio", true, 0.01, 1e-3},  // 0.5 % more loss than the class at k 5: thresholds judge less
    {"retransmits", true, 0.10, 10},   // a few spurious ones happen on every RoCE link
    {"step_time_mean_ns", true, 0.01, 1000},
};

// "rxe0/1" -> "rxe", "mlx5_1/1" -> "mlx5": the driver family a device is named by (the inventory
// carries no model: two ConnectX generations share mlx5).
std::string nic_family(const std::string& nic) {
  const std::string device = nic.substr(0, nic.find('/'));
  if (const auto underscore = device.find('_'); underscore != std::string::npos) return device.substr(0, underscore);
  const auto last_letter = device.find_last_not_of("0123456789");
  return last_letter == std::string::npos ? device : device.substr(0, last_letter + 1);
}

double median_of(std::vector<double> values) {
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle), values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  const double lower = *std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle));
  return (lower + upper) / 2;
}

// Each flow's traced hop count, by (sender, receiver, sender's stream id), from the streams that carry
// the trace (a sender's), for the receiver's stream of the same flow.
using FlowKey = std::tuple<std::string, std::string, std::uint32_t>;

std::map<FlowKey, std::size_t> traced_hops(const std::vector<StreamVerdict>& streams) {
  std::map<FlowKey, std::size_t> hops;
  for (const auto& verdict : streams) {
    if (verdict.stream.path_size() == 0) continue;
    hops[{verdict.agent, verdict.stream.peer(), verdict.stream.sender_stream_id()}] =
        static_cast<std::size_t>(verdict.stream.path_size());
  }
  return hops;
}

std::string class_of(const StreamVerdict& verdict, const std::map<FlowKey, std::size_t>& hops) {
  const auto& stream = verdict.stream;
  std::string name = stream.kind().empty() ? "stream" : stream.kind();
  if (verdict.step > 0) name += fmt::format(", step {}", verdict.step);
  std::size_t path = static_cast<std::size_t>(stream.path_size());
  if (path == 0) {
    const auto found = hops.find({stream.peer(), verdict.agent, stream.sender_stream_id()});
    if (found != hops.end()) path = found->second;
  }
  if (path > 0) name += fmt::format(", {} hop{}", path, path == 1 ? "" : "s");
  if (!stream.nic().empty()) name += ", " + nic_family(stream.nic());
  return name;
}

std::string metric_value_text(const std::string& metric, double value) {
  if (metric == "throughput_bps") return units::format_bit_rate(value);
  if (metric == "loss_ratio") return units::format_percent(value);
  if (metric == "step_time_mean_ns") {
    return units::format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(value)));
  }
  return fmt::format("{:.6g}", value);
}

}  // namespace

std::vector<StreamOutlier> find_stream_outliers(const std::vector<StreamVerdict>& streams, double k) {
  const auto hops = traced_hops(streams);
  std::vector<std::string> classes(streams.size());
  for (std::size_t i = 0; i < streams.size(); ++i) classes[i] = class_of(streams[i], hops);
  std::vector<StreamOutlier> outliers;
  for (const OutlierMetric& metric : kMetrics) {
    std::map<std::string, std::vector<std::size_t>> members;  // class -> streams measuring the metric
    for (std::size_t i = 0; i < streams.size(); ++i) {
      const auto& kind = streams[i].stream.kind();
      if (!kind_judges(kind, metric.name) || !kind_counts_a_flow(kind)) continue;
      const auto value = streams[i].metrics.find(metric.name);
      if (value == streams[i].metrics.end() || !std::isfinite(value->second)) continue;
      members[classes[i]].push_back(i);
    }
    for (const auto& [name, indices] : members) {
      if (indices.size() < kMinOutlierClass) continue;
      std::vector<double> values;
      values.reserve(indices.size());
      for (const std::size_t i : indices) values.push_back(streams[i].metrics.at(metric.name));
      const double median = median_of(values);
      std::vector<double> distances;
      distances.reserve(values.size());
      for (const double value : values) distances.push_back(std::abs(value - median));
      const double spread = std::max({kMadToSigma * median_of(distances), metric.relative_floor * std::abs(median),
                                      metric.absolute_floor, 1e-300});
      for (std::size_t j = 0; j < indices.size(); ++j) {
        const double deviations = (metric.high_is_bad ? values[j] - median : median - values[j]) / spread;
        if (deviations <= k) continue;
        outliers.push_back({indices[j], metric.name, values[j], median, spread, deviations, indices.size(), name});
      }
    }
  }
  std::sort(outliers.begin(), outliers.end(),
            [](const StreamOutlier& a, const StreamOutlier& b) { return a.deviations > b.deviations; });
  return outliers;
}

std::string outlier_text(const StreamOutlier& outlier, const std::vector<StreamVerdict>& streams, double k) {
  const std::string title = outlier.stream < streams.size() ? stream_title(streams[outlier.stream]) : "?";
  std::string against;
  if (outlier.median != 0) {
    const double share = std::abs(outlier.value - outlier.median) / std::abs(outlier.median);
    against = fmt::format("{} {} ", units::format_percent(share), outlier.value < outlier.median ? "below" : "above");
  } else {
    against = "against ";
  }
  return fmt::format("outlier: {}: {} {}, {}the median {} of its {} siblings ({}): {:.1f} MADs, beyond k {:g}", title,
                     outlier.metric, metric_value_text(outlier.metric, outlier.value), against,
                     metric_value_text(outlier.metric, outlier.median), outlier.class_size - 1, outlier.class_name,
                     outlier.deviations, k);
}

}  // namespace tusk
