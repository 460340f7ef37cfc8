// The delay fit: each flow's latency is its host pair's base plus what its links add; a link that
// adds delay is named with it, and nothing is named for what no pair of flows tells apart.
#include "controller/verdict/link_delays.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

namespace tusk {
namespace {

// Two host pairs, each with `per_path` flows on each of two paths: pair p's flows cross its
// cable (link 10 + p), then link 0 or 1 (the two spines' uplinks), then link 2 or 3.
std::vector<FlowDelay> two_pairs(double added_on_link_0, int per_path = 4, double jitter_ns = 200) {
  std::vector<FlowDelay> flows;
  int k = 0;
  for (std::uint32_t pair = 0; pair < 2; ++pair) {
    for (std::uint32_t path = 0; path < 2; ++path) {
      for (int i = 0; i < per_path; ++i, ++k) {
        // A deterministic scatter of +-jitter about the base.
        const double scatter = jitter_ns * ((k * 7) % 5 - 2) / 2.0;
        const double base = 20'000 + 3'000 * pair;
        flows.push_back({{10 + pair, path, 2 + path}, pair, base + (path == 0 ? added_on_link_0 : 0) + scatter});
      }
    }
  }
  return flows;
}

TEST(LinkDelays, ALinkThatAddsDelayIsNamedWithWhatItAdds) {
  const DelayFit fit = estimate_link_delays(two_pairs(150'000), 12, 10'000);
  ASSERT_EQ(fit.delays.size(), 1u);
  // Links 0 and 2 are crossed by the same flows: one unknown, tied.
  EXPECT_EQ(fit.delays[0].links, (std::vector<std::uint32_t>{0, 2}));
  EXPECT_NEAR(fit.delays[0].added_ns, 150'000, 500);
  EXPECT_LT(fit.delays[0].low_ns, fit.delays[0].added_ns);
  EXPECT_GT(fit.delays[0].high_ns, fit.delays[0].added_ns);
  EXPECT_EQ(fit.delays[0].flows, 8u);
  EXPECT_EQ(fit.delays[0].siblings, 8u);
  EXPECT_GT(fit.delays[0].z, kMinDelayZ);
}

TEST(LinkDelays, NoDelayNamesNothingAndADelayUnderTheFloorIsNotNamed) {
  EXPECT_TRUE(estimate_link_delays(two_pairs(0), 12, 10'000).delays.empty());
  EXPECT_TRUE(estimate_link_delays(two_pairs(8'000), 12, 10'000).delays.empty());
  // The same 8 us is named with the floor at 0: it is well above the flows' scatter.
  EXPECT_EQ(estimate_link_delays(two_pairs(8'000), 12, 0).delays.size(), 1u);
}

// A host's cable is crossed by every flow of its pair: its delay is the pair's base, not a link's.
TEST(LinkDelays, ALinkEverySiblingCrossesIsNotNamed) {
  auto flows = two_pairs(0);
  for (auto& flow : flows) {
    if (flow.siblings == 0) flow.latency_ns += 500'000;  // pair 0's cable (link 10) adds 500 us
  }
  EXPECT_TRUE(estimate_link_delays(flows, 12, 10'000).delays.empty());
}

// A scatter as wide as the delay hides it: named only where the flows tell it apart.
TEST(LinkDelays, ADelayWithinTheFlowsScatterIsNotNamed) {
  EXPECT_TRUE(estimate_link_delays(two_pairs(20'000, 2, 40'000), 12, 0).delays.empty());
}

TEST(LinkDelays, HostileLatenciesAndLinksOutOfRangeAreIgnored) {
  auto flows = two_pairs(150'000);
  flows[0].latency_ns = -5;
  flows[1].latency_ns = std::numeric_limits<double>::quiet_NaN();
  flows[2].links.push_back(1'000'000);  // past link_count
  const DelayFit fit = estimate_link_delays(flows, 12, 10'000);
  ASSERT_EQ(fit.delays.size(), 1u);
  EXPECT_NEAR(fit.delays[0].added_ns, 150'000, 500);
}

// A fabric whose every link adds delay (or an agent's made-up latencies): 100,000 flows of four
// links over 4,096 links, each link adding 0-100 us. Before the work budget the fit ran past
// 300 s; now it stops at its budget or at kMaxDelaysNamed, says the fit is not complete, and the
// links it names are those that add most. (What it says they add is above what the least of
// them adds: every path has four links, so a delay all links share is the pairs' bases'.)
TEST(LinkDelays, AFabricWhoseEveryLinkAddsDelayStopsWithinItsBudgetAndSaysSo) {
  std::mt19937_64 rng(7);
  constexpr std::uint32_t kLinks = 4096;
  std::vector<double> per_link(kLinks);
  for (auto& added : per_link) added = static_cast<double>(rng() % 100'000);
  std::vector<FlowDelay> flows;
  for (std::uint32_t f = 0; f < 100'000; ++f) {
    FlowDelay flow;
    flow.latency_ns = 10'000;
    for (int k = 0; k < 4; ++k) {
      flow.links.push_back(static_cast<std::uint32_t>(rng() % kLinks));
      flow.latency_ns += per_link[flow.links.back()];
    }
    flow.siblings = f / 8;
    flows.push_back(flow);
  }
  const DelayFit fit = estimate_link_delays(flows, kLinks, 10'000);
  EXPECT_FALSE(fit.complete);
  EXPECT_GT(fit.delays.size(), 10u);
  EXPECT_LE(fit.delays.size(), kMaxDelaysNamed);
  std::size_t among_the_largest = 0;
  for (const auto& delay : fit.delays) among_the_largest += per_link[delay.links.front()] >= 50'000;
  EXPECT_GE(among_the_largest, fit.delays.size() * 9 / 10);
}

}  // namespace
}  // namespace tusk
