// What a sender tells the acceptor in its RC connect request's private data, and what the
// acceptor answers with: the RDMA engine's wire between two agents' data planes (56 bytes at most,
// as RC private data is). The acceptor checks the request against its plan
// (refuse_connect_request) before it pins anything.
#pragma once

#include <cstdint>

namespace tusk::rdma {

struct ConnectRequestData {
  std::uint32_t flow_id;
  char sender[48];              // the sending agent's name, NUL-terminated
  std::uint16_t rail_plus_one;  // 0: no rails
};

struct AcceptData {
  std::uint64_t address;
  std::uint32_t key;
  std::uint32_t slots;
  std::uint32_t message_size;
};

static_assert(sizeof(ConnectRequestData) <= 56 && sizeof(AcceptData) <= 56, "RC private data is 56 bytes");

}  // namespace tusk::rdma
