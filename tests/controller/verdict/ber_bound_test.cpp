#include "controller/verdict/ber_bound.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>

namespace tusk {
namespace {

using ::testing::HasSubstr;

// Reference values: −ln(1 − CL) by hand; the rest are half chi-square quantiles, cross-checked with
// mpmath (30 digits) solving Q(k + 1, λ) = 1 − CL.
constexpr double kZeroAt95 = 2.995732273553991;  // −ln 0.05
constexpr double kZeroAt99 = 4.605170185988091;  // −ln 0.01
constexpr double kOneAt95 = 4.743864518390577;
constexpr double kTenAt95 = 16.962219235721900;  // χ²(0.95, 22) / 2 = 33.924 / 2
constexpr double kThousandAt99 = 1076.0696074383078;
constexpr double kMillionAt95 = 1001646.4227676168;
constexpr double kMillionAt50 = 1000000.6666666864;
constexpr double kFiveAt10 = 3.1518980297921616;

// ---- estimate_ber ------------------------------------------------------------------------------

TEST(BerBound, ZeroErrorsAt95PercentIsThreeOverN) {
  const BerEstimate e = estimate_ber(0, 1'000'000'000'000ull, 0.95);
  EXPECT_EQ(e.measured, 0.0);
  EXPECT_NEAR(e.upper_bound, 2.995732e-12, 1e-18);
  EXPECT_DOUBLE_EQ(e.upper_bound, kZeroAt95 / 1e12);
  EXPECT_EQ(e.confidence, 0.95);
  EXPECT_EQ(e.bits, 1'000'000'000'000ull);
  EXPECT_EQ(e.errors, 0u);
  EXPECT_TRUE(e.has_data());
}

TEST(BerBound, ZeroErrorsAt99Percent) {
  const BerEstimate e = estimate_ber(0, 1'000'000'000ull, 0.99);
  EXPECT_DOUBLE_EQ(e.upper_bound, kZeroAt99 / 1e9);
  EXPECT_NEAR(e.upper_bound * 1e9, 4.605, 1e-3);
}

TEST(BerBound, OneErrorAt95Percent) {
  const BerEstimate e = estimate_ber(1, 1'000'000'000'000ull, 0.95);
  EXPECT_DOUBLE_EQ(e.measured, 1e-12);
  EXPECT_NEAR(e.upper_bound * 1e12, 4.7439, 1e-4);
  EXPECT_NEAR(e.upper_bound * 1e12, kOneAt95, 1e-10);
}

TEST(BerBound, TenErrorsAt95Percent) {
  // 16.962, not 17.962: χ²(0.95, 22 dof) = 33.924.
  const BerEstimate e = estimate_ber(10, 1'000'000'000'000ull, 0.95);
  EXPECT_DOUBLE_EQ(e.measured, 1e-11);
  EXPECT_NEAR(e.upper_bound * 1e12, 16.962, 1e-3);
  EXPECT_NEAR(e.upper_bound * 1e12, kTenAt95, 1e-9);
}

TEST(BerBound, UpperBoundIsNeverBelowTheMeasuredRate) {
  for (std::uint64_t errors : {0ull, 1ull, 2ull, 10ull, 100ull, 12345ull}) {
    const BerEstimate e = estimate_ber(errors, 1'000'000'000ull, 0.95);
    EXPECT_GT(e.upper_bound, e.measured) << errors << " errors";
  }
}

TEST(BerBound, NoBitsComparedIsNoData) {
  const BerEstimate e = estimate_ber(0, 0, 0.95);
  EXPECT_FALSE(e.has_data());
  EXPECT_TRUE(std::isnan(e.measured));
  EXPECT_TRUE(std::isinf(e.upper_bound));
  EXPECT_EQ(e.bits, 0u);
  EXPECT_EQ(e.confidence, 0.95);
}

TEST(BerBound, BoundIsCappedAtOneForTinySamples) {
  EXPECT_EQ(estimate_ber(0, 1, 0.95).upper_bound, 1.0);
  EXPECT_EQ(estimate_ber(1, 2, 0.95).upper_bound, 1.0);
  EXPECT_EQ(estimate_ber(5, 5, 0.95).measured, 1.0);
}

TEST(BerBound, RejectsBadInput) {
  for (double cl : {0.0, 1.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    EXPECT_THROW(estimate_ber(0, 1000, cl), std::invalid_argument) << cl;
  }
  try {
    estimate_ber(0, 1000, 1.0);
    FAIL() << "confidence 1 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("confidence 1 is not inside (0, 1)"));
  }
  try {
    estimate_ber(11, 10, 0.95);
    FAIL() << "more errors than bits accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_THAT(e.what(), HasSubstr("11 bit errors in only 10 bits compared"));
  }
}

// ---- poisson_upper_limit -----------------------------------------------------------------------

TEST(BerBound, PoissonUpperLimitMatchesReferenceValues) {
  EXPECT_DOUBLE_EQ(poisson_upper_limit(0, 0.95), kZeroAt95);
  EXPECT_NEAR(poisson_upper_limit(1, 0.95), kOneAt95, 1e-10);
  EXPECT_NEAR(poisson_upper_limit(10, 0.95), kTenAt95, 1e-9);
  EXPECT_NEAR(poisson_upper_limit(5, 0.10), kFiveAt10, 1e-9);  // a confidence below 50 %
  EXPECT_NEAR(poisson_upper_limit(1000, 0.99), kThousandAt99, 1e-8);
}

// One-sided lower limits: half the chi-square quantile at 1 - CL with 2k degrees of freedom.
TEST(BerBound, PoissonLowerLimitMatchesReferenceValuesAndBoundsTheMeasuredRateFromBelow) {
  EXPECT_EQ(poisson_lower_limit(0, 0.95), 0.0);
  EXPECT_NEAR(poisson_lower_limit(1, 0.95), 0.051293, 1e-6);
  EXPECT_NEAR(poisson_lower_limit(10, 0.95), 5.425406, 1e-5);
  EXPECT_NEAR(poisson_lower_limit(1, 0.99), 0.010050, 1e-6);
  const BerEstimate estimate = estimate_ber(5825, 8'000'000'000, 0.95);
  EXPECT_LT(estimate.lower_bound, estimate.measured);
  EXPECT_GT(estimate.lower_bound, 0.95 * estimate.measured);
  EXPECT_EQ(estimate_ber(0, 8'000'000'000, 0.95).lower_bound, 0.0);
}

TEST(BerBound, PoissonUpperLimitIsStableForMillionsOfErrors) {
  EXPECT_NEAR(poisson_upper_limit(1'000'000, 0.95), kMillionAt95, 1e-5);
  EXPECT_NEAR(poisson_upper_limit(1'000'000, 0.50), kMillionAt50, 1e-5);
}

// Past ten million events the limits are approximated: they join the exact ones without a step,
// and a peer's counter of 2^62 gives k ± z sqrt(k) at once instead of minutes of series.
TEST(BerBound, PoissonLimitsOfMoreThanTenMillionEventsJoinTheExactOnesAndStayFast) {
  constexpr std::uint64_t kExact = 10'000'000;
  const double step_up = poisson_upper_limit(kExact + 1, 0.95) - poisson_upper_limit(kExact, 0.95);
  EXPECT_NEAR(step_up, 1.0, 0.01);
  const double step_down = poisson_lower_limit(kExact + 1, 0.95) - poisson_lower_limit(kExact, 0.95);
  EXPECT_NEAR(step_down, 1.0, 0.01);
  const double k = 0x1p62;
  const auto huge = static_cast<std::uint64_t>(k);
  EXPECT_NEAR(poisson_upper_limit(huge, 0.95), k + 1.6449 * std::sqrt(k), 1e-4 * std::sqrt(k));
  EXPECT_NEAR(poisson_lower_limit(huge, 0.95), k - 1.6449 * std::sqrt(k), 1e-4 * std::sqrt(k));
}

TEST(BerBound, PoissonUpperLimitGrowsWithErrorsAndConfidence) {
  double previous = 0;
  for (std::uint64_t k = 0; k <= 200; ++k) {
    const double limit = poisson_upper_limit(k, 0.95);
    EXPECT_GT(limit, previous) << k;
    EXPECT_GT(limit, static_cast<double>(k)) << k;
    previous = limit;
  }
  EXPECT_LT(poisson_upper_limit(3, 0.90), poisson_upper_limit(3, 0.95));
  EXPECT_LT(poisson_upper_limit(3, 0.95), poisson_upper_limit(3, 0.999999));
}

// ---- bits_needed and seconds_needed ------------------------------------------------------------

TEST(BerBound, BitsNeededForTargetWithNoErrors) {
  EXPECT_NEAR(bits_needed(1e-12, 0.95), 2.9957e12, 1e8);
  EXPECT_DOUBLE_EQ(bits_needed(1e-12, 0.95), kZeroAt95 * 1e12);
  EXPECT_DOUBLE_EQ(bits_needed(1e-15, 0.99), kZeroAt99 * 1e15);
}

TEST(BerBound, BitsNeededGrowsWithErrorsSoFar) {
  EXPECT_NEAR(bits_needed(1e-12, 0.95, 1), kOneAt95 * 1e12, 1e3);
  EXPECT_NEAR(bits_needed(1e-12, 0.95, 10), kTenAt95 * 1e12, 1e4);
}

TEST(BerBound, BitsNeededAgreesWithEstimate) {
  // Comparing exactly bits_needed bits with no errors gives a bound of exactly the target.
  const double bits = bits_needed(1e-9, 0.95);
  const BerEstimate e = estimate_ber(0, static_cast<std::uint64_t>(std::ceil(bits)), 0.95);
  EXPECT_LE(e.upper_bound, 1e-9);
  EXPECT_NEAR(e.upper_bound, 1e-9, 1e-18);
}

TEST(BerBound, BitsNeededRejectsBadTargets) {
  for (double target :
       {0.0, -1e-12, 1.5, std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity()}) {
    EXPECT_THROW(bits_needed(target, 0.95), std::invalid_argument) << target;
  }
  EXPECT_THROW(bits_needed(1e-12, 1.0), std::invalid_argument);
}

TEST(BerBound, SecondsNeededAtTenGigabit) {
  EXPECT_NEAR(seconds_needed(1e-12, 0.95, 0, 10e9), 299.57, 0.01);
  EXPECT_DOUBLE_EQ(seconds_needed(1e-12, 0.95, 0, 10e9), kZeroAt95 * 100.0);
}

TEST(BerBound, SecondsNeededCountsOnlyTheRemainder) {
  // Half-way there: half the time left.
  const auto half = static_cast<std::uint64_t>(kZeroAt95 * 1e12 / 2);
  EXPECT_NEAR(seconds_needed(1e-12, 0.95, half, 10e9), 149.79, 0.01);
}

TEST(BerBound, SecondsNeededIsZeroWhenAlreadyEnough) {
  EXPECT_EQ(seconds_needed(1e-12, 0.95, 3'000'000'000'000ull, 10e9), 0.0);
  EXPECT_EQ(seconds_needed(1e-12, 0.95, 3'000'000'000'000ull, 0.0), 0.0);  // stopped, but done
}

TEST(BerBound, SecondsNeededIsInfiniteWhenStopped) {
  EXPECT_TRUE(std::isinf(seconds_needed(1e-12, 0.95, 0, 0.0)));
}

TEST(BerBound, SecondsNeededAccountsForErrorsSoFar) {
  // One error at 10 Gbit/s: 4.744e12 bits in all, 474.39 s from scratch.
  EXPECT_NEAR(seconds_needed(1e-12, 0.95, 0, 10e9, 1), 474.39, 0.01);
}

TEST(BerBound, SecondsNeededRejectsBadRates) {
  EXPECT_THROW(seconds_needed(1e-12, 0.95, 0, -1.0), std::invalid_argument);
  EXPECT_THROW(seconds_needed(1e-12, 0.95, 0, std::numeric_limits<double>::quiet_NaN()), std::invalid_argument);
}

}  // namespace
}  // namespace tusk
