// Frames a receiver cannot count as lost because nothing arrived after them: the tail of a stream
// whose link went down and stayed down, or a whole stream that never arrived. Only the sender's count
// shows them, so the controller pairs each sender's "tx" stream with its peer's "rx" stream.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "tusk.pb.h"

namespace tusk {

struct AgentStream {
  std::string agent;
  proto::StreamCounters stream;
};

// For each "tx" stream (agent A, peer B), finds B's "rx" stream from A and adds to it
// tail_lost_frames = sent - received - lost - gap_lost (what arrived nowhere), counted into
// lost_frames too. A "tx" stream whose peer is wire::kLoopbackPeer (a loopback test) is its own
// agent's "rx" stream from wire::kLoopbackPeer. Receivers are looked up only among `reporting`
// agents (a lost agent's streams are missing for another reason). Returns one line per sender whose
// receiver has no stream from it at all although frames were sent, and appends that receiver's
// stream of it: nothing received, every frame sent lost at the tail.
std::vector<std::string> account_unreceived_frames(std::vector<AgentStream>& streams,
                                                   const std::set<std::string>& reporting);

}  // namespace tusk
