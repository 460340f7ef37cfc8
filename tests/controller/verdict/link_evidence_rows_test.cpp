// The per-link rows of a test: one for each cable any evidence points at, the flows', probes',
// switch counters' and host optics' word on it side by side, whichever way each names the cable,
// and what to do first: the failing optic's end where one failed, else the counters' or the
// suspect's first step.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "controller/verdict/link_evidence_rows.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;

LinkSuspect suspect_on(const std::string& key, Confidence confidence) {
  LinkSuspect suspect;
  suspect.key = key;
  suspect.name = key;
  suspect.kind = FaultKind::Loss;
  suspect.rate = 0.0207;
  suspect.rate_low = 0.0161;
  suspect.rate_high = 0.0262;
  suspect.failing = {0, 1, 2};
  suspect.passing = {3};
  suspect.confidence = confidence;
  suspect.next_steps = {"Read the port counters at both ends."};
  return suspect;
}

LinkCounters counted_cable(const std::string& a, const std::string& b, std::uint64_t discards_at_b) {
  LinkCounters link;
  link.a_end = {a.substr(0, a.find(':')), a.substr(a.find(':') + 1)};
  link.b_end = {b.substr(0, b.find(':')), b.substr(b.find(':') + 1)};
  link.cable = "C-7";
  link.name = a + " <-> " + b + ", cable C-7";
  for (CountedDirection* d : {&link.a_to_b, &link.b_to_a}) {
    d->sender_read = d->receiver_read = true;
    d->sent = d->received = 17'554;
  }
  link.a_to_b.key = a + " -> " + b;
  link.b_to_a.key = b + " -> " + a;
  link.a_to_b.in_discards = discards_at_b;
  link.a_to_b.received -= discards_at_b;
  return link;
}

PortOpticsOutcome dark_lane_port() {
  PortOpticsOutcome port;
  port.agent = "h1";
  port.port = "p0";
  port.netdev = "eth1";
  port.end = "h1:eth1";
  port.far_end = "l1:p1";
  port.cable = "C-1";
  OpticsFinding finding;
  finding.port = "h1 eth1 (p0)";
  finding.lane = 3;
  finding.what = OpticsMeasure::rx_power_dbm;
  finding.measured = -9.8;
  finding.limit = -8;
  finding.severity = OpticsSeverity::failure;
  finding.limit_source = OpticsLimitSource::profile;
  finding.text = "lane 3 RX power -9.80 dBm below -8.00 dBm";
  port.verdict.findings.push_back(finding);
  return port;
}

TEST(LinkEvidenceRows, ASuspectAndItsCountersMeetOnOneRowWhicheverWayTheyNameTheCable) {
  Localisation localisation;
  localisation.suspects.push_back(suspect_on("s2:l1 -> l1:s2", Confidence::High));
  SwitchCounterEvidence counters;
  counters.links.push_back(counted_cable("l1:s2", "s2:l1", 0));
  counters.links.push_back(counted_cable("s2:l1", "l1:s2", 0));  // the same cable written the other way
  counters.links.back().b_to_a.in_discards = 347;
  counters.links.back().b_to_a.received -= 347;
  counters.links.push_back(counted_cable("l2:s1", "s1:l2", 0));  // clean, and no suspect: no row
  const auto rows = link_evidence_rows(localisation, counters, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].link, "l1:s2 <-> s2:l1, cable C-7");
  EXPECT_EQ(rows[0].flows, "loss 2.07 % (1.61 % to 2.62 %), 3 of 4 flows through it failing");
  EXPECT_THAT(rows[0].counters,
              HasSubstr("l1:s2 -> s2:l1: 0 in errors, 347 in discards, 0 of 17554 sent never counted in"));
  EXPECT_TRUE(rows[0].failing);
  EXPECT_EQ(rows[0].next_step, "Read the port counters at both ends.") << "the suspect's own first step";
  EXPECT_THAT(rows[0].optics, IsEmpty());
}

TEST(LinkEvidenceRows, LossOnlyTheCountersSawIsARowWithTheirFirstStep) {
  SwitchCounterEvidence counters;
  counters.links.push_back(counted_cable("l1:s2", "s2:l1", 400));
  const auto rows = link_evidence_rows({}, counters, {});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(rows[0].failing);
  EXPECT_THAT(rows[0].flows, IsEmpty());
  EXPECT_THAT(rows[0].next_step, HasSubstr("s2:l1 discarded 400 frames on arrival"));
}

TEST(LinkEvidenceRows, AFailingOpticNamesTheEndToCleanFirst) {
  Localisation localisation;
  localisation.suspects.push_back(suspect_on("l1:p1 -> h1:eth1", Confidence::Medium));
  const auto rows = link_evidence_rows(localisation, {}, {dark_lane_port()});
  ASSERT_EQ(rows.size(), 1u) << "the host cable's suspect and its optic are one row";
  EXPECT_THAT(rows[0].optics, HasSubstr("h1 eth1 (p0): lane 3 RX power -9.80 dBm below -8.00 dBm"));
  EXPECT_THAT(rows[0].next_step, HasSubstr("Clean the fibre and the optic at h1:eth1"));
  EXPECT_THAT(rows[0].next_step, HasSubstr("lane 3"));
  EXPECT_THAT(rows[0].next_step, HasSubstr("swap the optic at l1:p1"));
}

TEST(LinkEvidenceRows, AnOpticTheFileDoesNotPlaceIsARowOfItsOwnAndNothingPointsAtACleanLink) {
  PortOpticsOutcome unplaced = dark_lane_port();
  unplaced.end.clear();
  unplaced.far_end.clear();
  PortOpticsOutcome clean = dark_lane_port();
  clean.verdict.findings.clear();
  const auto rows = link_evidence_rows({}, {}, {unplaced, clean});
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].link, "h1 eth1 (p0)");
  EXPECT_TRUE(rows[0].failing);
  EXPECT_TRUE(link_evidence_rows({}, {}, {}).empty());
}

}  // namespace
}  // namespace tusk
