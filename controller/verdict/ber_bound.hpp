// Bit error ratio statistics for the report: the measured BER, the upper bound that the test can
// claim at a given confidence level, and how many bits (how much time) a target BER still needs.
//
// Bit errors are modelled as Poisson: with k errors seen in N bits, the bound is the rate λ/N at which
// seeing k or fewer errors has probability 1 − confidence. For k = 0 this is −ln(1 − CL)/N, the
// usual "3/N at 95 %" rule. Pure functions; any thread may call them.
#pragma once

#include <cstdint>

namespace tusk {

struct BerEstimate {
  double measured = 0;     // errors / bits; NaN when no bits were compared
  double upper_bound = 0;  // BER ≤ this at `confidence`; +infinity when no bits were compared
  double lower_bound = 0;  // BER ≥ this at `confidence`: what errors show (0 without errors)
  double confidence = 0;
  std::uint64_t bits = 0;
  std::uint64_t errors = 0;

  // With no bits compared there is nothing to report: measured is NaN and the bound infinite, which
  // nlohmann::json writes as null.
  bool has_data() const { return bits > 0; }
};

// Throws std::invalid_argument when confidence is not inside (0, 1) or bit_errors > bits_compared.
// The bound is capped at 1: for tiny N the Poisson model would otherwise claim a BER above 1.
BerEstimate estimate_ber(std::uint64_t bit_errors, std::uint64_t bits_compared, double confidence);

// The Poisson upper limit on the mean, given `observed` events: the λ with P(X ≤ observed | λ) = 1 − CL
// (half the chi-square quantile at CL with 2·observed + 2 degrees of freedom). Exact up to ten
// million events; past that the Wilson-Hilferty approximation (relative error below 10^-9), so a
// peer's counter of 10^18 costs microseconds, not minutes. Throws std::invalid_argument for confidence outside (0, 1).
double poisson_upper_limit(std::uint64_t observed, double confidence);

// The Poisson lower limit on the mean, given `observed` events: the λ with P(X ≥ observed | λ) =
// 1 − CL (0 for no event). Throws std::invalid_argument for confidence outside (0, 1).
double poisson_lower_limit(std::uint64_t observed, double confidence);

// Total bits to compare before BER ≤ target_ber can be claimed at `confidence`, assuming no errors
// beyond errors_so_far. Throws std::invalid_argument for target_ber outside (0, 1] or a bad confidence.
double bits_needed(double target_ber, double confidence, std::uint64_t errors_so_far = 0);

// Seconds still to run at bits_per_second to reach bits_needed: 0 when bits_so_far is already enough,
// +infinity when more are needed and the rate is 0. Throws std::invalid_argument for a negative or NaN
// rate, besides bits_needed's cases.
double seconds_needed(double target_ber, double confidence, std::uint64_t bits_so_far, double bits_per_second,
                      std::uint64_t errors_so_far = 0);

}  // namespace tusk
