// Fleet-relative outliers: a stream far below (or, for loss, above) the median of the streams that
// should behave like it is named; clean classes, faster streams, small classes and streams of
// another class are not.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "controller/verdict/stream_outliers.hpp"

namespace tusk {
namespace {

using ::testing::HasSubstr;

StreamVerdict rx(const std::string& receiver, const std::string& sender, double throughput_bps, double loss_ratio = 0,
                 const std::string& nic = "") {
  StreamVerdict verdict;
  verdict.agent = receiver;
  verdict.stream.set_stream_id("rx:" + sender + "/1");
  verdict.stream.set_peer(sender);
  verdict.stream.set_kind("rx");
  verdict.stream.set_nic(nic);
  verdict.metrics["throughput_bps"] = throughput_bps;
  verdict.metrics["loss_ratio"] = loss_ratio;
  return verdict;
}

// Four hosts in a mesh: 12 receiving streams at about 3 Mbit/s each, with the run-to-run noise of
// a lab (a few per mille).
std::vector<StreamVerdict> mesh(double noise, std::uint32_t seed = 7) {
  std::mt19937 random(seed);
  std::normal_distribution<double> jitter(1.0, noise);
  std::vector<StreamVerdict> streams;
  const std::vector<std::string> hosts{"h1", "h2", "h3", "h4"};
  for (const auto& receiver : hosts) {
    for (const auto& sender : hosts) {
      if (sender != receiver) streams.push_back(rx(receiver, sender, 3e6 * jitter(random)));
    }
  }
  return streams;
}

TEST(StreamOutliers, FlowsShapedTo70PercentOfTheirSiblingsAreFlaggedAndNoOther) {
  auto streams = mesh(0.003);
  for (auto& verdict : streams) {
    if (verdict.agent == "h3") {  // every flow into h3 held to 70 %, losing the rest
      verdict.metrics["throughput_bps"] *= 0.7;
      verdict.metrics["loss_ratio"] = 0.3;
    }
  }
  const auto outliers = find_stream_outliers(streams, kDefaultOutlierK);
  ASSERT_EQ(outliers.size(), 6u);  // three flows, each on throughput and on loss
  for (const auto& outlier : outliers) {
    EXPECT_EQ(streams[outlier.stream].agent, "h3");
    EXPECT_EQ(outlier.class_size, 12u);
    EXPECT_GT(outlier.deviations, kDefaultOutlierK);
  }
  const auto throughput = std::find_if(outliers.begin(), outliers.end(),
                                       [](const StreamOutlier& o) { return o.metric == "throughput_bps"; });
  ASSERT_NE(throughput, outliers.end());
  EXPECT_NEAR(throughput->value / throughput->median, 0.7, 0.01);
  EXPECT_THAT(
      outlier_text(*throughput, streams, kDefaultOutlierK),
      ::testing::AllOf(HasSubstr("outlier: "), HasSubstr("h3"), HasSubstr("throughput_bps"),
                       HasSubstr("below the median"), HasSubstr("of its 11 siblings (rx)"), HasSubstr("beyond k 5")));
}

TEST(StreamOutliers, CleanStreamsWithALabsNoiseAreNotFlagged) {
  for (std::uint32_t seed = 1; seed <= 50; ++seed) {
    EXPECT_TRUE(find_stream_outliers(mesh(0.003, seed), kDefaultOutlierK).empty()) << "seed " << seed;
  }
}

TEST(StreamOutliers, AFasterStreamOrAFewLostFramesAreNotOutliers) {
  auto streams = mesh(0.001);
  streams[0].metrics["throughput_bps"] *= 1.5;  // above its siblings: nothing wrong with the link
  streams[1].metrics["loss_ratio"] = 1e-5;      // for max_lost_frames to judge, not the fleet
  EXPECT_TRUE(find_stream_outliers(streams, kDefaultOutlierK).empty());
}

TEST(StreamOutliers, StreamsOfAnotherNicFamilyOrStepAreAnotherClass) {
  std::vector<StreamVerdict> streams;
  for (int i = 0; i < 4; ++i)
    streams.push_back(rx("a" + std::to_string(i), "x", 100e9, 0, "mlx5_" + std::to_string(i) + "/1"));
  for (int i = 0; i < 4; ++i) streams.push_back(rx("b" + std::to_string(i), "x", 25e9, 0, "rxe0/1"));
  EXPECT_TRUE(find_stream_outliers(streams, kDefaultOutlierK).empty());
  streams[7].metrics["throughput_bps"] = 10e9;  // one rxe stream far below the other rxe ones
  const auto outliers = find_stream_outliers(streams, kDefaultOutlierK);
  ASSERT_EQ(outliers.size(), 1u);
  EXPECT_EQ(outliers[0].stream, 7u);
  EXPECT_EQ(outliers[0].class_name, "rx, rxe");

  auto stepped = mesh(0.001);
  for (std::size_t i = 0; i < stepped.size(); ++i) {
    stepped[i].step = i < 6 ? 1 : 2;
    if (i >= 6) stepped[i].metrics["throughput_bps"] *= 0.5;  // a step at half the rate, all alike
  }
  EXPECT_TRUE(find_stream_outliers(stepped, kDefaultOutlierK).empty());
}

TEST(StreamOutliers, AClassTooSmallForAMedianAndInformationalStreamsAreLeftOut) {
  std::vector<StreamVerdict> streams{rx("a", "b", 3e6), rx("b", "a", 3e6), rx("c", "a", 1e6)};
  EXPECT_TRUE(find_stream_outliers(streams, kDefaultOutlierK).empty());
  auto many = mesh(0.001);
  many[0].stream.set_kind("tx");  // what a sender counted: shown, never judged
  many[0].metrics["throughput_bps"] = 1;
  EXPECT_TRUE(find_stream_outliers(many, kDefaultOutlierK).empty());
}

TEST(StreamOutliers, KSetsHowFarIsTooFar) {
  auto streams = mesh(0.001);
  streams[4].metrics["throughput_bps"] *= 0.92;  // 8 % below: 8 spreads of the 1 % floor
  EXPECT_EQ(find_stream_outliers(streams, 5).size(), 1u);
  EXPECT_TRUE(find_stream_outliers(streams, 10).empty());
}

}  // namespace
}  // namespace tusk
