// A forged RC connection request to a Soft-RoCE VM's RDMA engine: the request a sender makes
// (agent/rdma/connect_data.hpp), in the name and from the address of our choosing. The lab tests
// use it to show on real verbs that an engine refuses a name its plan has no sender of, and a real
// sender's name from another address, before it pins any memory.
//
//   tusk-lab-rdma-connect NAME PEER_IP[:CM_PORT] [FLOW_ID]
// Prints "established" and exits 0, or "rejected (status N)" / what failed and exits 1.
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/rdma/connect_data.hpp"
#include "agent/rdma/rdma_plan.hpp"
#include "agent/rdma/verbs_owners.hpp"

namespace {

using namespace tusk::rdma;

// The next event on `channel`, which must be `expected`; prints what came instead.
CmEvent expect_event(rdma_event_channel* channel, rdma_cm_event_type expected) {
  CmEvent event = get_cm_event(channel);
  if (event->event != expected) {
    if (event->event == RDMA_CM_EVENT_REJECTED) {
      std::printf("rejected (status %d)\n", event->status);
    } else {
      std::printf("%s, not %s\n", rdma_event_str(event->event), rdma_event_str(expected));
    }
    return nullptr;
  }
  return event;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 && argc != 4) {
    std::fprintf(stderr, "usage: %s NAME PEER_IP[:CM_PORT] [FLOW_ID]\n", argv[0]);
    return 2;
  }
  std::string peer = argv[2];
  unsigned port = kDefaultCmPort;
  if (const auto colon = peer.find(':'); colon != std::string::npos) {
    port = static_cast<unsigned>(std::atoi(peer.c_str() + colon + 1));
    peer.resize(colon);
  }
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  if (inet_pton(AF_INET, peer.c_str(), &address.sin_addr) != 1) {
    std::fprintf(stderr, "'%s' is not an IPv4 address\n", peer.c_str());
    return 2;
  }
  try {
    EventChannel channel = create_event_channel();
    CmId id = create_cm_id(channel.get(), nullptr, RDMA_PS_TCP);
    if (rdma_resolve_addr(id.get(), nullptr, reinterpret_cast<sockaddr*>(&address), 2000) != 0 ||
        !expect_event(channel.get(), RDMA_CM_EVENT_ADDR_RESOLVED)) {
      std::printf("cannot resolve %s\n", peer.c_str());
      return 1;
    }
    if (rdma_resolve_route(id.get(), 2000) != 0 || !expect_event(channel.get(), RDMA_CM_EVENT_ROUTE_RESOLVED)) {
      std::printf("no route to %s\n", peer.c_str());
      return 1;
    }
    ibv_qp_init_attr attributes{};
    attributes.qp_type = IBV_QPT_RC;
    attributes.cap.max_send_wr = attributes.cap.max_recv_wr = 1;
    attributes.cap.max_send_sge = attributes.cap.max_recv_sge = 1;
    if (rdma_create_qp(id.get(), nullptr, &attributes) != 0) {
      std::printf("rdma_create_qp: %s\n", std::strerror(errno));
      return 1;
    }
    QueuePair qp(id.get());
    ConnectRequestData request{};
    request.flow_id = argc == 4 ? static_cast<std::uint32_t>(std::atoi(argv[3])) : 0;
    std::strncpy(request.sender, argv[1], sizeof(request.sender) - 1);
    rdma_conn_param parameters{};
    parameters.private_data = &request;
    parameters.private_data_len = sizeof request;
    parameters.retry_count = 7;
    parameters.rnr_retry_count = 7;
    if (rdma_connect(id.get(), &parameters) != 0) {
      std::printf("rdma_connect: %s\n", std::strerror(errno));
      return 1;
    }
    if (!expect_event(channel.get(), RDMA_CM_EVENT_ESTABLISHED)) return 1;
    std::printf("established\n");
    rdma_disconnect(id.get());
    return 0;
  } catch (const std::exception& e) {
    std::printf("%s\n", e.what());
    return 1;
  }
}
