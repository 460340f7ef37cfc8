// The delay fit: each flow's latency is its host pair's base plus what its links add; a link that
// adds delay is named with it, and nothing is named for what no pair of flows tells apart.
#include "controller/verdict/link_delays.hpp"

#include <gtest/gtest.h>

#include <limits>
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

}  // namespace
}  // namespace tusk
