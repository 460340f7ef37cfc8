// Every string an agent sends, made safe once, where its frame arrives (AgentRegistry), before any
// part of the controller reads it: cut on a character to its bound and printable() (one line of
// valid UTF-8 that moves no cursor). The summary, the log, inventory, report.json, junit.xml, the
// series file and CSV then hold an agent's words only as this made them; nothing downstream needs
// to escape them again, and a field added to the protocol is covered without a line here.
#pragma once

#include <cstdint>

#include <google/protobuf/message.h>

namespace tusk {

// A counter or gauge name: longer than any engine writes.
inline constexpr std::size_t kMaxPeerNameBytes = 256;

// How many of one peer's texts had to be changed; kept per agent, shown in its report entry.
struct PeerTextTally {
  std::uint64_t cut = 0;      // longer than their bound (wire::kMaxPeerMessageBytes, kMaxPeerNameBytes)
  std::uint64_t escaped = 0;  // bytes printable() had to write out (control characters, ill-formed UTF-8)

  PeerTextTally& operator+=(const PeerTextTally& other) {
    cut += other.cut;
    escaped += other.escaped;
    return *this;
  }
  bool any() const { return cut + escaped > 0; }
};

// Rewrites every string field of `message`, at every depth, in place: a text longer than
// wire::kMaxPeerMessageBytes is cut on a character and marked "...", a stream's counter and gauge
// names at kMaxPeerNameBytes; then each is made printable(). Returns what it changed.
PeerTextTally make_peer_texts_safe(google::protobuf::Message& message);

}  // namespace tusk
