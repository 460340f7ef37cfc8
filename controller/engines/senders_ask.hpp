// What a receiver's senders ask of it, from the test's plans: each sender's rate is its agent's,
// shared by the peers it sends to, so a mesh's receiver gets one sender's rate in all and an
// incast's gets every sender's (issue 61's check load, for any engine).
#pragma once

#include <algorithm>
#include <map>
#include <string>

#include "common/check_share.hpp"
#include "tusk.pb.h"

namespace tusk {

// Bits per second `endpoints` (the agents that send to this one) ask of it, with whence; a sender
// whose plan is not in `test_plans` asks `own_rate`, this plan's, whole. 0 when any is unpaced.
template <typename RateOf>
std::pair<double, std::string> senders_ask(const google::protobuf::RepeatedPtrField<proto::PeerEndpoint>& endpoints,
                                           double own_rate, const std::map<std::string, const proto::Plan*>& test_plans,
                                           RateOf rate_of) {
  double asked = 0;
  for (const auto& endpoint : endpoints) {
    const auto sender = test_plans.find(endpoint.agent_name());
    const double rate = sender != test_plans.end() ? rate_of(*sender->second) : own_rate;
    if (!(rate > 0)) return {0, ""};
    const int peers = sender != test_plans.end() ? std::max(1, sender->second->peers_size()) : 1;
    asked += rate / peers;
  }
  const int count = endpoints.size();
  return {asked, fmt::format("{} sender{} asking {:g} Gb/s in all", count, count == 1 ? "" : "s", asked / 1e9)};
}

}  // namespace tusk
