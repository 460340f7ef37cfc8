// Link rates from flow rates, on small hand-made fabrics whose answer is known: what each link
// loses is recovered with an interval that holds it, clean flows clear what they cross, links
// crossed by the same flows stay one unknown, and the fewest links that explain the events win.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "controller/verdict/link_rates.hpp"

namespace tusk {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// A flow of `trials` frames over `links`, with the events a set of link rates gives it exactly.
FlowEvents flow(std::vector<std::uint32_t> links, const std::vector<double>& rates, std::uint64_t trials = 100'000) {
  double delivered = 1;
  for (const auto link : links) delivered *= 1 - rates.at(link);
  FlowEvents f;
  f.links = std::move(links);
  f.trials = trials;
  f.events = static_cast<std::uint64_t>(std::llround(static_cast<double>(trials) * (1 - delivered)));
  return f;
}

// Three senders' cables (0-2) into two switches' links (3, 4) to one receiver's cable (5): each
// sender reaches the receiver over both switch links.
std::vector<FlowEvents> star(const std::vector<double>& rates) {
  std::vector<FlowEvents> flows;
  for (std::uint32_t sender = 0; sender < 3; ++sender) {
    for (const std::uint32_t middle : {3u, 4u}) flows.push_back(flow({sender, middle, 5}, rates));
  }
  return flows;
}

TEST(LinkRates, OneLossyLinkIsFoundWithItsRateInsideItsInterval) {
  const std::vector<double> rates{0, 0, 0, 0.02, 0, 0};
  const auto found = estimate_link_rates(star(rates), rates.size());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found[0].links, ElementsAre(3u));
  EXPECT_NEAR(found[0].rate, 0.02, 0.0005);
  EXPECT_LT(found[0].low, 0.02);
  EXPECT_GT(found[0].high, 0.0199);
  EXPECT_THAT(found[0].explains, UnorderedElementsAre(0u, 2u, 4u));
  EXPECT_FALSE(found[0].held);
}

// A night's counts: 10^7 frames a flow, through two faults of 4 % and 3 % and past them. A frame
// crosses the second fault only when the first let it through, so the flow through both loses
// 6.88 %, not 7 %: fitted as a sum of rates, the 12,000 frames between the two put both rates low
// (3.95 % and 2.97 %), far outside intervals that 400,000 events make narrow. Exactly two links,
// at their rates, each inside its interval.
TEST(LinkRates, ANightsCountsThroughTwoFaultsNameOnlyThoseTwo) {
  const std::vector<double> rates{0.04, 0.03, 0, 0, 0};
  constexpr std::uint64_t kNight = 10'000'000;
  const std::vector<FlowEvents> flows{flow({0, 2}, rates, kNight), flow({1, 3}, rates, kNight),
                                      flow({0, 1}, rates, kNight), flow({0, 1, 4}, rates, kNight),
                                      flow({2}, rates, kNight),    flow({3}, rates, kNight)};
  const auto found = estimate_link_rates(flows, rates.size());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_THAT(found[0].links, ElementsAre(0u));
  EXPECT_NEAR(found[0].rate, 0.04, 1e-5);
  EXPECT_THAT(found[1].links, ElementsAre(1u));
  EXPECT_NEAR(found[1].rate, 0.03, 1e-5);
  for (std::size_t k = 0; k < found.size(); ++k) {
    EXPECT_LT(found[k].low, rates[k]);
    EXPECT_GT(found[k].high, rates[k]);
  }
}

// The case in small: two faults whose flows share a sender's cable, which also carries a
// clean flow: both faults are named, the cable is not.
TEST(LinkRates, ACableSharedByTwoFaultsAndACleanFlowIsCleared) {
  std::vector<double> rates{0, 0, 0, 0.02, 0, 0, 0.01, 0};
  std::vector<FlowEvents> flows = star(rates);
  flows.push_back(flow({0, 6}, rates));  // sender 0's cable, then a damaged link elsewhere
  flows.push_back(flow({1, 6}, rates));
  flows.push_back(flow({0, 7}, rates));  // and a clean flow through sender 0's cable
  const auto found = estimate_link_rates(flows, rates.size());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_THAT(found[0].links, ElementsAre(3u));
  EXPECT_THAT(found[1].links, ElementsAre(6u));
  EXPECT_NEAR(found[1].rate, 0.01, 0.0005);
}

TEST(LinkRates, LinksCrossedByTheSameFlowsAreOneUnknown) {
  const std::vector<double> rates{0, 0.03, 0, 0};
  std::vector<FlowEvents> flows;
  for (int k = 0; k < 4; ++k) flows.push_back(flow({0, 1, 2}, rates));  // 1 and 2: the same flows
  for (int k = 0; k < 4; ++k) flows.push_back(flow({0, 3}, rates));
  const auto found = estimate_link_rates(flows, rates.size());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found[0].links, ElementsAre(1u, 2u));
}

// Every flow of a receiver loses the same: its one cable explains it better than the switch
// links its flows crossed, which each carry some of them.
TEST(LinkRates, OfTwoExplanationsAsGoodTheOneLinkThroughMoreFlowsStays) {
  const std::vector<double> rates{0, 0, 0, 0, 0, 0.01};
  const auto found = estimate_link_rates(star(rates), rates.size());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found[0].links, ElementsAre(5u));
}

TEST(LinkRates, CleanFlowsNameNothing) {
  const std::vector<double> rates(6, 0.0);
  EXPECT_TRUE(estimate_link_rates(star(rates), rates.size()).empty());
  EXPECT_TRUE(estimate_link_rates({}, 0).empty());
}

// A flow through a lossy link and a link of its own that lost a few frames more than the lossy
// link's rate gives: that excess is chance, not a second fault (significance, not any excess);
// where nothing else crosses a flow with events, a link of its own must explain them.
TEST(LinkRates, AChanceExcessBesideAFaultIsNotASecondFault) {
  const std::vector<double> rates{0, 0.01, 0, 0};
  std::vector<FlowEvents> flows;
  for (int k = 0; k < 10; ++k) flows.push_back(flow({0, 1}, rates));
  flows.push_back(flow({2, 1}, rates));
  flows.back().events += 3;  // 1,003 of 100,000 where the link's 1 % gives 1,000
  flows.push_back(flow({3}, rates));
  flows.back().events = 1;  // nothing else crossed this flow
  const auto found = estimate_link_rates(flows, rates.size());
  ASSERT_EQ(found.size(), 2u);
  EXPECT_THAT(found[0].links, ElementsAre(1u));
  EXPECT_THAT(found[1].links, ElementsAre(3u));
  EXPECT_TRUE(std::isinf(found[1].evidence));
}

// Counts from a peer bounded by nothing: more events than trials, links out of range, zero
// trials. The fit neither crashes nor makes a rate that is not a number.
TEST(LinkRates, HostileCountsGiveFiniteRates) {
  std::vector<FlowEvents> flows{{{0, 1}, 10, 1'000'000},
                                {{1, 99}, 0, 5},
                                {{0}, std::numeric_limits<std::uint64_t>::max() / 4, 3},
                                {{2, 2, 2}, 1000, 10}};
  for (const auto& rate : estimate_link_rates(flows, 3)) {
    EXPECT_TRUE(std::isfinite(rate.rate));
    EXPECT_GE(rate.rate, 0);
    EXPECT_LE(rate.low, rate.high);
  }
}

// Out of work (a fabric whose every link is faulty, here a budget of a few steps): the links not
// yet tested are judged with the other rates held, and every faulty one is still named.
TEST(LinkRates, OutOfWorkTheUntestedLinksAreJudgedHeldAndNoneIsLost) {
  const std::vector<double> rates{0.01, 0.02, 0.03, 0.01, 0.02, 0.005};
  const auto flows = star(rates);
  const auto unbounded = estimate_link_rates(flows, rates.size());
  const auto bounded = estimate_link_rates(flows, rates.size(), 200);
  ASSERT_FALSE(bounded.empty());
  EXPECT_GE(bounded.size(), unbounded.size());
  EXPECT_TRUE(std::any_of(bounded.begin(), bounded.end(), [](const LinkRate& r) { return r.held; }));
}

}  // namespace
}  // namespace tusk
