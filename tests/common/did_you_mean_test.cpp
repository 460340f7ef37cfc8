#include "common/did_you_mean.hpp"

#include <gtest/gtest.h>

namespace tusk {
namespace {

const std::vector<std::string_view> kTestKeys{"name",          "engine",     "duration",   "rate",    "message_size",
                                              "message_sizes", "thresholds", "frame_size", "topology"};

TEST(EditDistance, CountsEachKindOfEditOnce) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("rate", "rate"), 0u);
  EXPECT_EQ(edit_distance("", "rate"), 4u);
  EXPECT_EQ(edit_distance("rate", "rat"), 1u);    // deletion
  EXPECT_EQ(edit_distance("rate", "rates"), 1u);  // insertion
  EXPECT_EQ(edit_distance("rate", "rake"), 1u);   // substitution
  EXPECT_EQ(edit_distance("rate", "rtae"), 1u);   // adjacent swap
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
}

TEST(EditDistance, IgnoresCase) {
  EXPECT_EQ(edit_distance("Engine", "engine"), 0u);
}

TEST(ClosestMatch, FindsCommonTypos) {
  EXPECT_EQ(closest_match("mesage_size", kTestKeys), "message_size");
  EXPECT_EQ(closest_match("duraton", kTestKeys), "duration");
  EXPECT_EQ(closest_match("engin", kTestKeys), "engine");
  EXPECT_EQ(closest_match("treshold", kTestKeys), "thresholds");
  EXPECT_EQ(closest_match("topolgoy", kTestKeys), "topology");
  EXPECT_EQ(closest_match("Rate", kTestKeys), "rate");
}

TEST(ClosestMatch, PrefersTheNearestCandidate) {
  EXPECT_EQ(closest_match("message_sizes", kTestKeys), "message_sizes");
  EXPECT_EQ(closest_match("mesage_sizes", kTestKeys), "message_sizes");
}

TEST(ClosestMatch, EarlierCandidateWinsATie) {
  EXPECT_EQ(closest_match("ab", {"ax", "ay"}), "ax");
}

TEST(ClosestMatch, SuggestsNothingForUnrelatedWords) {
  EXPECT_EQ(closest_match("zzzz", kTestKeys), std::nullopt);
  EXPECT_EQ(closest_match("vlan", kTestKeys), std::nullopt);
  EXPECT_EQ(closest_match("bandwidth", kTestKeys), std::nullopt);
  EXPECT_EQ(closest_match("", kTestKeys), std::nullopt);
  EXPECT_EQ(closest_match("rate", {}), std::nullopt);
}

TEST(ClosestMatch, ShortWordsAllowOneEdit) {
  EXPECT_EQ(closest_match("rat", kTestKeys), "rate");
  EXPECT_EQ(closest_match("ra", kTestKeys), std::nullopt);
}

}  // namespace
}  // namespace tusk
