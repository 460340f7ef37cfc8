// Links that add delay: each flow's latency is its host pair's base plus the delay each link of its
// path adds, and a link that queues (a congested or pausing port, a retiming optic) shows as its
// flows' latency risen together above their siblings' (the flows between the same two hosts that
// ECMP put on other paths). The fit is least squares with every delay non-negative (coordinate
// descent: each step sets one unknown to its best value given the rest), the bases one per host
// pair, the links taken in one at a time (the one that alone explains most) and then each tested
// by the fit without it. A link every sibling of its flows crosses (a host's own cable) is one with the base: no
// pair of flows tells it apart, so it is not fitted. Links crossed by the same flows are one
// unknown, tied. Noise is read from the residuals (their median absolute deviation, robust to a
// flow the model does not fit), never below the latency histograms' resolution.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tusk {

struct FlowDelay {
  std::vector<std::uint32_t> links;  // the distinct links the flow crossed
  std::uint32_t siblings = 0;        // its host pair: flows of one pair share one base
  double latency_ns = 0;             // its median latency
};

struct LinkDelay {
  std::vector<std::uint32_t> links;  // crossed by exactly the same flows: one unknown, tied
  double added_ns = 0;               // what it adds to each flow through it
  double low_ns = 0, high_ns = 0;    // the 95 % interval
  double z = 0;                      // added_ns in standard errors
  std::uint32_t flows = 0;           // through it
  std::uint32_t siblings = 0;        // of those flows' host pairs, not through it
};

struct DelayFit {
  std::vector<LinkDelay> delays;  // those named, most added first
  double noise_ns = 0;            // one flow's latency's scatter about the model
  // False when the fit stopped at its work budget or at kMaxDelaysNamed: more links may add delay.
  bool complete = true;
};

// The most links one fit names for delay: more is a fabric whose every queue is full.
inline constexpr std::size_t kMaxDelaysNamed = 256;

// How many standard errors a delay must be to be named (as kMinEvidence's 25 is 5² for rates),
// and how far above `min_added_ns` its lower end must be, with 99.9 % one-sided confidence.
inline constexpr double kMinDelayZ = 5;
// The latency histograms' resolution (common/latency_histogram.hpp: a percentile is within 1/128 of
// the true value): a scatter below it is not one.
inline constexpr double kLatencyResolution = 1.0 / 128;

// Flow visits the fit may make (each base or delay update visits the flows it touches): about a
// second of one core. A fabric whose every link adds delay, or a hostile agent's latencies, spend
// it; what is left untested is judged by its standard error alone.
inline constexpr std::uint64_t kDelayWorkBudget = 400'000'000;

DelayFit estimate_link_delays(const std::vector<FlowDelay>& flows, std::size_t link_count, double min_added_ns);

}  // namespace tusk
