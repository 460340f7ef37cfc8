#include "controller/engines/ecmp_coverage.hpp"

#include <cmath>
#include <stdexcept>

namespace tusk {

std::uint32_t flows_for_coverage(std::uint32_t paths, double coverage) {
  if (paths == 0) throw std::invalid_argument("ecmp_paths must be at least 1");
  if (!(coverage > 0 && coverage < 1)) throw std::invalid_argument("coverage must be above 0 and below 1");
  if (paths == 1) return 1;
  const double m = paths;
  const double n = std::log(1 - std::pow(coverage, 1 / m)) / std::log((m - 1) / m);
  // A bound a hair above a whole number is that number: floating-point noise, not another flow.
  return static_cast<std::uint32_t>(std::ceil(n - 1e-9));
}

}  // namespace tusk
