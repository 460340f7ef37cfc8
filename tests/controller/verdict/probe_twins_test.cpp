// Placing a fault among twin links from the probes, routers' policing in the model.
#include "controller/verdict/probe_twins.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "controller/verdict/probe_hops.hpp"

namespace tusk {
namespace {

// One sender on leaf 1 of two leaves and two spines: links 0 (its host link, into l1), 1 (l1 -> s1),
// 2 (s1 -> l2), 3 (l1 -> s2), 4 (s2 -> l2), 5 (l2 -> the receiver). Routers: l1 0, s1 1, l2 2,
// s2 3, the receiver 4. Links 1 and 2 are the twins of the flows over s1.
const std::vector<std::uint32_t> kRouterOfLink{0, 1, 2, 3, 2, 4};
constexpr std::uint64_t kProbes = 2000;

struct Shape {
  double loss_up = 0, loss_down = 0;  // on links 1 and 2
  double s1_answers = 1;              // s1's share of the sender's probes it answers
  double damage_up = 0, damage_down = 0;
};

// The probes' answers, as their expected counts, over both spines.
ProbeHops probe(const Shape& shape) {
  ProbeHops hops;
  const auto answered = [](double share) { return static_cast<std::uint64_t>(std::llround(kProbes * share)); };
  const std::uint32_t leaf = hops.hop(ProbeHop::kFirst, 0, 0);
  hops.add(leaf, kProbes, kProbes);
  const auto damaged = [](std::uint64_t answers, double share) {
    return static_cast<std::uint64_t>(std::llround(static_cast<double>(answers) * share));
  };
  const std::uint32_t s1 = hops.hop(leaf, 1, 0);
  const std::uint64_t at_s1 = answered((1 - shape.loss_up) * shape.s1_answers);
  hops.add(s1, kProbes, at_s1, damaged(at_s1, shape.damage_up));
  const std::uint32_t far_by_s1 = hops.hop(s1, 2, 0);
  const std::uint64_t past = answered((1 - shape.loss_up) * (1 - shape.loss_down));
  const double intact = (1 - shape.damage_up) * (1 - shape.damage_down);
  hops.add(far_by_s1, kProbes, past, damaged(past, 1 - intact));
  hops.add(hops.hop(far_by_s1, 5, 0), kProbes, past, damaged(past, 1 - intact));
  const std::uint32_t s2 = hops.hop(leaf, 3, 0);
  hops.add(s2, kProbes, kProbes);
  const std::uint32_t far_by_s2 = hops.hop(s2, 4, 0);
  hops.add(far_by_s2, kProbes, kProbes);
  hops.add(hops.hop(far_by_s2, 5, 0), kProbes, kProbes);
  return hops;
}

const std::vector<std::uint32_t> kTwins{1, 2};

TEST(ProbeTwins, LossOnEitherTwinIsPlacedThereWhenEveryRouterAnswersFully) {
  const TwinPlacement up = place_on_twins(probe({0.03, 0, 1}), kRouterOfLink, kTwins);
  EXPECT_TRUE(up.decided);
  EXPECT_EQ(up.best, 0u);
  EXPECT_TRUE(up.policers.empty());
  const TwinPlacement down = place_on_twins(probe({0, 0.03, 1}), kRouterOfLink, kTwins);
  EXPECT_TRUE(down.decided);
  EXPECT_EQ(down.best, 1u);
}

// s1 answers half the sender's probes: the deficit at s1 is its policing or loss on the uplink, and
// the probes cannot say which; the twins stay tied wherever the loss is, and s1 is said to police.
TEST(ProbeTwins, APolicerAtTheHopThatWouldTellLeavesTheTwinsTied) {
  for (const double loss_up : {0.0, 0.03}) {
    const TwinPlacement placed = place_on_twins(probe({loss_up, 0.03 - loss_up, 0.5}), kRouterOfLink, kTwins);
    EXPECT_FALSE(placed.decided) << loss_up;
    ASSERT_EQ(placed.policers.size(), 1u) << loss_up;
    EXPECT_EQ(placed.policers[0].router, 1u);
    EXPECT_EQ(placed.policers[0].sender, 0u);
    // s1's share is 0.5 under the downlink's hypothesis and 0.5 / 0.97 under the uplink's.
    EXPECT_NEAR(placed.policers[0].answered, 0.5, 0.03);
  }
}

// A policer that answers fewer probes than the loss past it would need can still place the fault:
// the loss is not on the uplink, whose hypothesis needs s1 to answer more than all.
TEST(ProbeTwins, ALossTheUplinkCannotHaveIsPlacedPastItWhateverThePolicing) {
  const TwinPlacement placed = place_on_twins(probe({0, 0.2, 0.9}), kRouterOfLink, kTwins);
  EXPECT_TRUE(placed.decided);
  EXPECT_EQ(placed.best, 1u);
}

// Damage on either twin under a policing spine: policing drops answers and damages none, so the
// damaged answers place it.
TEST(ProbeTwins, DamageIsPlacedByTheDamagedAnswersWhateverThePolicing) {
  Shape up;
  up.s1_answers = 0.5;
  up.damage_up = 0.01;
  const TwinPlacement on_up = place_on_twins(probe(up), kRouterOfLink, kTwins);
  EXPECT_TRUE(on_up.decided);
  EXPECT_EQ(on_up.best, 0u);
  Shape down = up;
  down.damage_up = 0;
  down.damage_down = 0.01;
  const TwinPlacement on_down = place_on_twins(probe(down), kRouterOfLink, kTwins);
  EXPECT_TRUE(on_down.decided);
  EXPECT_EQ(on_down.best, 1u);
}

// Another sender whose probes reach routers around the twins, each router answering it `share`
// of what it asks (its own leaf, router 0, answers fully).
void add_policed_sender(ProbeHops& hops, std::uint32_t sender, double share) {
  const auto answered = static_cast<std::uint64_t>(std::llround(kProbes * share));
  const std::uint32_t leaf = hops.hop(ProbeHop::kFirst, 0, sender);
  hops.add(leaf, kProbes, kProbes);
  const std::uint32_t s2 = hops.hop(leaf, 3, sender);
  hops.add(s2, kProbes, answered);
  const std::uint32_t far = hops.hop(s2, 4, sender);
  hops.add(far, kProbes, answered);
  hops.add(hops.hop(far, 5, sender), kProbes, answered);
}

// Where most router-sender pairs outside the twins answer under half their full share, policing
// rules the answers: the probes place no loss, however clearly they seem to, and damage still.
TEST(ProbeTwins, WherePolicingIsCommonTheProbesPlaceNoLossButStillPlaceDamage) {
  ProbeHops lossy = probe({0.03, 0, 1});
  add_policed_sender(lossy, 1, 0.2);
  add_policed_sender(lossy, 2, 0.2);
  const TwinPlacement placed = place_on_twins(lossy, kRouterOfLink, kTwins);
  EXPECT_TRUE(placed.policing_common);
  EXPECT_EQ(placed.pairs_judged, 10u);  // sender 0's l1 and s2; each other sender's four routers
  EXPECT_EQ(placed.pairs_policing, 6u);
  EXPECT_FALSE(placed.decided);
  Shape damaged;
  damaged.damage_up = 0.01;
  ProbeHops corrupt = probe(damaged);
  add_policed_sender(corrupt, 1, 0.2);
  add_policed_sender(corrupt, 2, 0.2);
  const TwinPlacement on_up = place_on_twins(corrupt, kRouterOfLink, kTwins);
  EXPECT_TRUE(on_up.policing_common);
  EXPECT_TRUE(on_up.decided);
  EXPECT_EQ(on_up.best, 0u);
  // One policed sender of three: the median pair answers fully, and the loss is placed.
  ProbeHops few = probe({0.03, 0, 1});
  add_policed_sender(few, 1, 0.2);
  const TwinPlacement mostly_full = place_on_twins(few, kRouterOfLink, kTwins);
  EXPECT_FALSE(mostly_full.policing_common);
  EXPECT_TRUE(mostly_full.decided);
  EXPECT_EQ(mostly_full.best, 0u);
}

// Loss on the uplink with s1 answering fully is placed there because the downlink's hypothesis
// needs s1 to police this sender, at a cost. Where s1 is seen policing another sender, that
// policing is no coincidence and costs nothing: the twins stay tied.
TEST(ProbeTwins, ARouterSeenPolicingAnotherSenderMayPoliceThisOneForFree) {
  // Links 6 (l2 -> s1) and 7 (a host link into l2) for a sender on leaf 2.
  const std::vector<std::uint32_t> router_of_link{0, 1, 2, 3, 2, 4, 1, 2};
  ProbeHops hops = probe({0.03, 0, 1});
  EXPECT_TRUE(place_on_twins(hops, router_of_link, kTwins).decided);
  const std::uint32_t leaf2 = hops.hop(ProbeHop::kFirst, 7, 1);
  hops.add(leaf2, kProbes, kProbes);
  hops.add(hops.hop(leaf2, 6, 1), kProbes, kProbes / 2);
  const TwinPlacement placed = place_on_twins(hops, router_of_link, kTwins);
  EXPECT_FALSE(placed.policing_common);
  EXPECT_EQ(placed.pairs_policing, 1u);
  EXPECT_FALSE(placed.decided);
}

TEST(ProbeTwins, NoProbesPlaceNothing) {
  const TwinPlacement placed = place_on_twins(ProbeHops{}, kRouterOfLink, kTwins);
  EXPECT_FALSE(placed.any_probes);
  EXPECT_FALSE(placed.decided);
}

TEST(ProbeHops, CountsFromTheNetworkAreBoundedAndAnswersNeverExceedProbes) {
  ProbeHops hops;
  const std::uint32_t first = hops.hop(ProbeHop::kFirst, 7, 3);
  EXPECT_EQ(hops.hop(ProbeHop::kFirst, 7, 3), first);
  EXPECT_NE(hops.hop(ProbeHop::kFirst, 7, 4), first);
  const std::uint32_t next = hops.hop(first, 8, 99);
  EXPECT_EQ(hops[next].sender, 3u) << "a hop's sender is its path's";
  hops.add(next, ~std::uint64_t{0}, ~std::uint64_t{0});
  hops.add(next, ~std::uint64_t{0}, ~std::uint64_t{0});
  EXPECT_LE(hops[next].probes, std::uint64_t{1} << 62);
  EXPECT_LE(hops[next].answers, hops[next].probes);
  hops.add(first, 10, 50);
  EXPECT_EQ(hops[first].answers, 10u);
  EXPECT_THROW(hops.hop(1000, 1, 1), std::logic_error);
}

}  // namespace
}  // namespace tusk
