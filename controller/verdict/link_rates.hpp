// Link rates from flow rates (network tomography). Each flow crossed some links and, of its trials
// (frames sent, frames received, or 1 for a flow judged only pass or fail), saw some events (lost
// frames, damaged frames, a failure). A link's rate is the share of what crosses it that it loses
// or damages, and each trial meets each link's fault on its own: a flow through two links of 1 %
// loses 1.99 %, not 2 %. The fit is over each link's hazard h = -ln(1 - rate), which add along a
// path: a flow's trials meet an event with probability 1 - e^-(sum of its links' h). The sum of the
// rates would do for a few events; over a night's frames its error of rate² is thousands of
// events, which the fit would explain with links that have no fault.
//
// Why a likelihood and not least squares on the logs: a flow that saw no event is the strongest
// evidence there is (100,000 clean frames put a link under 3e-5), and least squares needs a
// variance for it that its zero count does not give; the Poisson likelihood weighs a clean flow by
// its trials and a lossy one by its events, with no tuning. The fit is maximum likelihood by EM
// (as emission tomography does: multiplicative updates that keep every rate non-negative and
// never lower the likelihood: each frame meets a Poisson number of faults on each link, and is an
// event when it meets one or more), over only the links some flow with events crossed: a link crossed
// only by clean flows is 0 without a question. Then the fewest links that explain the events:
// each link the fit kept is dropped, the rest refitted, and it stays only when the likelihood
// falls by more than kMinEvidence; a link that adds nothing to the others' explanation (a host's
// cable shared by two faults' flows) is dropped, a link whose events nothing else explains stays.
// Links crossed by exactly the same flows are one unknown: the flows cannot tell them apart.
#pragma once

#include <cstdint>
#include <vector>

namespace tusk {

// Twice the log likelihood ratio a link must add to the fit to be kept: about five standard
// errors, so that among thousands of clean links a chance excess is not named.
inline constexpr double kMinEvidence = 25;

struct FlowEvents {
  std::vector<std::uint32_t> links;  // the distinct links the flow crossed
  std::uint64_t trials = 0;
  std::uint64_t events = 0;
};

// Flows that saw no event, given per link rather than one by one (a schedule's clean flows, kept as
// sums when their step ended): a clean flow adds only its trials to the fit (the likelihood's
// -trials × rate), so per link their trials, how many there were, and a signature of which (the sum
// of a 64-bit hash of each flow's identity: links crossed by the same clean flows have the same one)
// are all the fit needs.
struct CleanFlows {
  double trials = 0;
  std::uint64_t flows = 0;
  std::uint64_t signature = 0;
};

struct LinkRate {
  std::vector<std::uint32_t> links;  // crossed by exactly the same flows: one unknown, tied
  double rate = 0;                   // events per trial
  double low = 0, high = 0;          // its 95 % interval
  std::uint64_t met = 0;             // the faults its trials met: its hazard times its trials, rounded
  double trials = 0;                 // of every flow through it
  double events = 0;                 // the flows' events the fit gives it
  double evidence = 0;               // 2 × log likelihood ratio against the best fit without it
  // Its evidence is with every other rate held, not refitted: the fit ran out of its work budget
  // (a fabric whose every link is faulty) before it was tested. Kept more readily, never less.
  bool held = false;
  std::vector<std::uint32_t> flows;  // every flow through it, but those given as CleanFlows
  std::uint64_t clean_flows = 0;     // those given as CleanFlows: counted, not listed
  std::uint64_t all_flows() const { return flows.size() + clean_flows; }
  // Flows with events that the fit gives it a part of: the flows it explains (a lesser fault on
  // a flow's path explains part of its events, a greater one the rest).
  std::vector<std::uint32_t> explains;
};

// The rate the link is above with `confidence` (one-sided): the lower end of its interval.
double rate_lower_bound(const LinkRate& rate, double confidence);
// Its rate and 95 % interval from `met` and `trials` (a fit's, or several windows' summed).
void set_rate_from_met(LinkRate& rate);

// Updates of one flow's or one link's part of the fit it may make: about 2 s of one core.
inline constexpr std::uint64_t kLinkRateWorkBudget = 600'000'000;

// The links (groups of tied links) whose rate is significantly above zero, highest rate first.
// Every other link is cleared. `link_count` bounds the links' indexes. A fabric whose every link
// is faulty reaches `work_budget`; the links not yet tested are then judged with every other
// rate held (LinkRate::held), which keeps a link more readily, never less.
std::vector<LinkRate> estimate_link_rates(const std::vector<FlowEvents>& flows, std::size_t link_count,
                                          std::uint64_t work_budget = kLinkRateWorkBudget);
// The same, with more clean flows given per link (`clean`, indexed by link; shorter: none).
std::vector<LinkRate> estimate_link_rates(const std::vector<FlowEvents>& flows, std::size_t link_count,
                                          const std::vector<CleanFlows>& clean,
                                          std::uint64_t work_budget = kLinkRateWorkBudget);

}  // namespace tusk
