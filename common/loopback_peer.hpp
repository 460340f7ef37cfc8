// The peer a DPDK loopback test's streams name, on the wire: the sender's stream names its peer
// this, and its receiver names its own frames' sender this, so the controller's verdict pairs the
// two (and blames the host's own port, cable or plug when they fail).
#pragma once

#include <string_view>

namespace tusk::wire {

inline constexpr std::string_view kLoopbackPeer = "self";

}  // namespace tusk::wire
