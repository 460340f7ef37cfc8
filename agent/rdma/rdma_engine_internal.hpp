// What the RDMA engine's set-up, datapath and sampling files share; nothing outside them uses it.
#pragma once

#include <sys/socket.h>

#include <string>

namespace tusk::rdma {

struct Connection;

namespace detail {

// The counter a completion status is counted under, e.g. "wc_transport_retries_exhausted".
std::string status_counter_name(int status);

// How long rdma_cm may take to resolve a connection's address and route: short for a successor,
// whose link has just come back.
int resolve_timeout_ms(const Connection& connection);

// A flow's QP as every message about it names it: "flow to PEER QP N (DEVICE qpn Q)".
std::string flow_name(const Connection& connection);

// An address as the plan writes it: IPv4 dotted (also one an IPv6 socket shows v4-mapped).
std::string address_text(const sockaddr* address);

}  // namespace detail
}  // namespace tusk::rdma
