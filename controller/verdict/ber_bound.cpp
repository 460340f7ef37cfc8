#include "controller/verdict/ber_bound.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace tusk {
namespace {

void check_confidence(double confidence) {
  if (!(confidence > 0.0 && confidence < 1.0)) {  // written this way so NaN fails too
    throw std::invalid_argument(fmt::format("confidence {} is not inside (0, 1)", confidence));
  }
}

constexpr double kEpsilon = 1e-15;
// Both expansions below converge in O(sqrt(a)) terms near x ≈ a; this cap is far above that for
// the millions of errors we care about and only guards against a runaway loop.
constexpr int kMaxTerms = 10'000'000;

// e^-x x^a / Γ(a), in log space so that a of a million neither overflows nor underflows on the way.
double log_prefactor(double a, double x) {
  return a * std::log(x) - x - std::lgamma(a);
}

// Regularized lower incomplete gamma P(a, x) by its power series; used for x < a + 1.
double gamma_p_series(double a, double x) {
  double term = 1.0 / a;
  double sum = term;
  double ap = a;
  for (int n = 0; n < kMaxTerms; ++n) {
    ap += 1.0;
    term *= x / ap;
    sum += term;
    if (std::fabs(term) < std::fabs(sum) * kEpsilon) break;
  }
  return sum * std::exp(log_prefactor(a, x));
}

// Regularized upper incomplete gamma Q(a, x) by its continued fraction (modified Lentz); used for
// x ≥ a + 1, where the series would converge slowly and 1 − P would lose the small tail.
double gamma_q_continued_fraction(double a, double x) {
  constexpr double kTiny = 1e-300;
  double b = x + 1.0 - a;
  double c = 1.0 / kTiny;
  double d = 1.0 / b;
  double h = d;
  for (int i = 1; i < kMaxTerms; ++i) {
    const double an = -i * (i - a);
    b += 2.0;
    d = an * d + b;
    if (std::fabs(d) < kTiny) d = kTiny;
    c = b + an / c;
    if (std::fabs(c) < kTiny) c = kTiny;
    d = 1.0 / d;
    const double delta = d * c;
    h *= delta;
    if (std::fabs(delta - 1.0) < kEpsilon) break;
  }
  return std::exp(log_prefactor(a, x)) * h;
}

// P(X ≤ k | λ) for Poisson X equals Q(k + 1, λ).
double poisson_cdf(std::uint64_t k, double lambda) {
  if (lambda <= 0.0) return 1.0;
  const double a = static_cast<double>(k) + 1.0;
  return lambda < a + 1.0 ? 1.0 - gamma_p_series(a, lambda) : gamma_q_continued_fraction(a, lambda);
}

// Above this many events the exact expansions take ~sqrt(k) terms for each of the search's 200
// steps (a peer's counter may claim 10^18: minutes), so the limits come from the Wilson-Hilferty
// form of the chi-square quantile, whose relative error there is below 10^-9.
constexpr std::uint64_t kExactUpTo = 10'000'000;

// z with P(Z <= z) = p for a standard normal Z, by bisection on erfc (p inside (0, 1)).
double normal_quantile(double p) {
  double lo = -40.0, hi = 40.0;
  for (int i = 0; i < 200; ++i) {
    const double mid = 0.5 * (lo + hi);
    (0.5 * std::erfc(-mid / std::sqrt(2.0)) < p ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// Half the chi-square quantile at probability p with `dof` degrees of freedom (Wilson-Hilferty).
double half_chi_square_quantile(double dof, double p) {
  const double c = 2.0 / (9.0 * dof);
  const double root = 1.0 - c + normal_quantile(p) * std::sqrt(c);
  return 0.5 * dof * root * root * root;
}

}  // namespace

double poisson_upper_limit(std::uint64_t observed, double confidence) {
  check_confidence(confidence);
  const double alpha = 1.0 - confidence;
  // Closed form, exact: P(X = 0 | λ) = e^-λ.
  if (observed == 0) return -std::log1p(-confidence);
  if (observed > kExactUpTo) return half_chi_square_quantile(2.0 * static_cast<double>(observed) + 2.0, confidence);

  // The CDF falls as λ grows. Bracket the root, starting a few standard deviations above k.
  const double k = static_cast<double>(observed);
  double lo = 0.0;
  double hi = k + 1.0 + 10.0 * std::sqrt(k + 1.0) + 10.0;
  while (poisson_cdf(observed, hi) > alpha) {
    lo = hi;
    hi *= 2.0;
  }
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (poisson_cdf(observed, mid) > alpha) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

double poisson_lower_limit(std::uint64_t observed, double confidence) {
  check_confidence(confidence);
  if (observed == 0) return 0.0;
  if (observed > kExactUpTo) return half_chi_square_quantile(2.0 * static_cast<double>(observed), 1.0 - confidence);
  // P(X ≥ k | λ) = 1 − P(X ≤ k − 1 | λ) rises with λ; the root lies below k.
  const std::uint64_t below = observed - 1;
  double lo = 0.0;
  double hi = static_cast<double>(observed);
  for (int i = 0; i < 200 && hi - lo > 1e-14 * hi; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (1.0 - poisson_cdf(below, mid) < 1.0 - confidence) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return 0.5 * (lo + hi);
}

BerEstimate estimate_ber(std::uint64_t bit_errors, std::uint64_t bits_compared, double confidence) {
  check_confidence(confidence);
  if (bit_errors > bits_compared) {
    throw std::invalid_argument(fmt::format("{} bit errors in only {} bits compared", bit_errors, bits_compared));
  }
  BerEstimate e;
  e.confidence = confidence;
  e.bits = bits_compared;
  e.errors = bit_errors;
  if (bits_compared == 0) {
    e.measured = std::numeric_limits<double>::quiet_NaN();
    e.upper_bound = std::numeric_limits<double>::infinity();
    return e;
  }
  const double n = static_cast<double>(bits_compared);
  e.measured = static_cast<double>(bit_errors) / n;
  e.upper_bound = std::min(1.0, poisson_upper_limit(bit_errors, confidence) / n);
  e.lower_bound = std::min(e.measured, poisson_lower_limit(bit_errors, confidence) / n);
  return e;
}

double bits_needed(double target_ber, double confidence, std::uint64_t errors_so_far) {
  if (!(target_ber > 0.0 && target_ber <= 1.0)) {
    throw std::invalid_argument(fmt::format("target BER {} is not inside (0, 1]", target_ber));
  }
  return poisson_upper_limit(errors_so_far, confidence) / target_ber;
}

double seconds_needed(double target_ber, double confidence, std::uint64_t bits_so_far, double bits_per_second,
                      std::uint64_t errors_so_far) {
  if (!(bits_per_second >= 0.0)) {
    throw std::invalid_argument(fmt::format("bit rate {} bit/s must be 0 or more", bits_per_second));
  }
  const double remaining = bits_needed(target_ber, confidence, errors_so_far) - static_cast<double>(bits_so_far);
  if (remaining <= 0.0) return 0.0;
  if (bits_per_second == 0.0) return std::numeric_limits<double>::infinity();
  return remaining / bits_per_second;
}

}  // namespace tusk
