#include "controller/engines/rdma/collective.hpp"

#include <cmath>

#include "controller/model/training_model.hpp"

namespace tusk {

std::uint64_t scaled_collective_bytes(const proto::RdmaTest& test) {
  const double scale = test.scale() > 0 ? test.scale() : 1.0;
  return static_cast<std::uint64_t>(std::llround(static_cast<double>(test.collective_bytes()) * scale));
}

std::uint64_t peer_bytes_per_step(const std::string& collective, std::uint64_t collective_bytes, std::size_t ranks) {
  if (ranks < 2) return 0;
  const double s = static_cast<double>(collective_bytes);
  const double g = static_cast<double>(ranks);
  double bytes = 0;  // the model's wire bytes per rank, sent to one peer (ring) or spread over all
  if (collective == "all_reduce") {
    bytes = traffic::algorithm::ring_all_reduce(s, g);
  } else if (collective == "all_gather") {
    bytes = traffic::algorithm::all_gather(s, g);
  } else if (collective == "reduce_scatter") {
    bytes = traffic::algorithm::reduce_scatter(s, g);
  } else if (collective == "all_to_all") {
    bytes = traffic::algorithm::all_to_all(s, g) / (g - 1);
  }
  return static_cast<std::uint64_t>(std::llround(bytes));
}

double bus_bandwidth_factor(const std::string& collective, std::size_t ranks) {
  if (ranks < 2) return 0;
  const double n = static_cast<double>(ranks);
  return collective == "all_reduce" ? 2 * (n - 1) / n : (n - 1) / n;
}

}  // namespace tusk
