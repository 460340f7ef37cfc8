// How an RDMA flow is held to its rate: by the NIC (a per-QP rate limit, ibv_modify_qp_rate_limit,
// where the device's packet pacing covers RC QPs and the rate), or by the datapath (posting only
// what the rate allows so far). The choice is a plain function of the plan's `pacing`, the QP's
// share of the rate and the device's capabilities, so it is tested without a NIC; the engine reads
// the capabilities and applies the limit.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <string>

namespace tusk::rdma {

// ibv_packet_pacing_caps, in kbit/s; all zero for a device without packet pacing (rxe, most).
struct PacingCaps {
  std::uint32_t min_kbps = 0;
  std::uint32_t max_kbps = 0;
  bool rc = false;  // supported_qpts includes RC
};

struct PacingChoice {
  bool hardware = false;
  std::uint32_t kbps = 0;  // the per-QP limit to set, when hardware
  std::string refusal;     // pacing: hardware and the NIC cannot: why (the flow does not start)
  std::string reason;      // a sentence for the report: what paces the flow, and why
};

// mode: "auto" (or ""), "hardware" or "software"; qp_bps: the QP's share of the rate (0: none);
// bursts: the test sends in on/off bursts, which only the datapath can shape.
PacingChoice choose_pacing(const std::string& mode, double qp_bps, bool bursts, const PacingCaps& caps,
                           const std::string& device);

// The device's packet pacing, from ibv_query_device_ex; none when it cannot be read.
PacingCaps query_pacing_caps(ibv_context* context);

}  // namespace tusk::rdma
