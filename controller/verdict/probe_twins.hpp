// Which of the links that the same flows cross ("twins": in a two-tier fabric a leaf's uplink and
// the spine's downlink to the other leaf) a fault is on, from the probes as evidence with a
// likelihood of their own, routers' ICMP policing part of the model.
//
// A probe that expires at a hop asks that hop's router for an answer, which comes back with
// probability a × e^-(the hazards of the links it crossed). a is the share of one sender's probes
// that one router answers: ICMP policing per destination (a token bucket per sender, as Linux's
// icmp_ratelimit and switches' CoPP keep), a busy control plane, loss on the way back; it is shared
// by all that sender's probes to that router, whichever link they came in by, and it is at most the
// sender's full share (that of the router answering it best: what the sender's own side loses, it
// loses at every hop). Loss on a twin shows at every hop past it and only on the probes that cross
// it. Policing lowers answers and never raises them, so it can hide where a fault is but never make
// a healthy link look lossy.
//
// Each twin's hypothesis puts the group's fault on that twin alone, at the loss hazard and damaged
// share the probes fit best: not the frames' (a full queue drops large frames and lets a small
// probe through; a bit error rate damages a short probe less than a long frame). Damaged
// answers weigh too: each hop entering a twin is damaged at its path's share before the twins, and
// the fault's share more where the hypothesis puts the fault on its way (policing drops answers,
// it damages none). A router answers a sender at the sender's full share unless a lower share
// gains the likelihood kPolicingEvidence: a policer must earn its place as a link must in the
// flows' fit, so a deficit that loss on a twin explains is not put on a policer instead (it costs
// nothing at a router seen policing another sender). Where the fabric's other router-sender pairs
// answer under half their senders' full shares at the median, policing rules the answers and the
// probes place no loss: a token bucket answers a sender's flows by when their probes come, not
// alike, so no share per router and sender holds; damage they still place. The twin whose hypothesis is likelier than
// every other's by kTwinEvidence is where the fault is; else the probes cannot tell, and the twins stay tied.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "controller/verdict/probe_hops.hpp"

namespace tusk {

// 2 log LR a router-sender pair's lower answer share must gain to be believed: a policer.
inline constexpr double kPolicingEvidence = 12;
// 2 log LR by which one twin's hypothesis must beat each other's to place the fault (3 standard
// errors).
inline constexpr double kTwinEvidence = 9;
// Twins one placement weighs, the first in path order (a group longer is a chain of links no probe
// reaches past).
inline constexpr std::size_t kMaxTwinsPlaced = 16;

// A router that answered a sender's probes under the sender's full share, under the placed hypothesis.
struct ProbePolicer {
  std::uint32_t router = 0, sender = 0;  // router: the far end's id given; sender: FlowTable::agent
  double answered = 1;                   // its share of the sender's probes it answers
};

struct TwinPlacement {
  std::vector<double> score;  // by twin: 2 × the log likelihood of its hypothesis, less its policers'
  std::size_t best = 0;
  bool decided = false;  // the probes place the fault on twins[best]
  bool any_probes = false;
  // Policing rules the answers: the other router-sender pairs answer under half, at the median.
  bool policing_common = false;
  std::size_t pairs_judged = 0, pairs_policing = 0;  // the other pairs judged, and how many police
  std::vector<ProbePolicer> policers;                // under the best hypothesis
};

// `router_of_link`: for each FlowTable link, an id of the router at its far end (one id per device).
TwinPlacement place_on_twins(const ProbeHops& hops, std::span<const std::uint32_t> router_of_link,
                             std::span<const std::uint32_t> twins);

}  // namespace tusk
