#include "agent/rdma/pacing.hpp"

#include <fmt/format.h>

#include <cmath>

#include "common/units.hpp"

namespace tusk::rdma {

PacingChoice choose_pacing(const std::string& mode, double qp_bps, bool bursts, const PacingCaps& caps,
                           const std::string& device) {
  PacingChoice choice;
  if (qp_bps <= 0) {
    choice.reason = "no rate: each QP sends as fast as it can";
    return choice;
  }
  const std::string rate = units::format_bit_rate(qp_bps);
  if (mode == "software") {
    choice.reason = fmt::format("{} per QP, paced by the agent (pacing: software)", rate);
    return choice;
  }
  // What stops the NIC from doing it, if anything.
  const double kbps = std::ceil(qp_bps / 1e3);
  std::string cannot;
  if (bursts) {
    cannot = "the test sends in bursts, which a NIC's rate limit cannot shape";
  } else if (caps.max_kbps == 0) {
    cannot = fmt::format("{} has no per-QP rate limit (packet pacing)", device);
  } else if (!caps.rc) {
    cannot = fmt::format("{}'s packet pacing does not cover RC QPs", device);
  } else if (kbps < caps.min_kbps || kbps > caps.max_kbps) {
    cannot =
        fmt::format("{} paces a QP between {} and {}, not at {}", device, units::format_bit_rate(caps.min_kbps * 1e3),
                    units::format_bit_rate(caps.max_kbps * 1e3), rate);
  }
  if (cannot.empty()) {
    choice.hardware = true;
    choice.kbps = static_cast<std::uint32_t>(kbps);
    choice.reason = fmt::format("{} per QP, paced by {} (a per-QP rate limit)", rate, device);
  } else if (mode == "hardware") {
    choice.refusal = fmt::format("pacing: hardware, but {}; use pacing: auto or software", cannot);
  } else {
    choice.reason = fmt::format("{} per QP, paced by the agent: {}", rate, cannot);
  }
  return choice;
}

PacingCaps query_pacing_caps(ibv_context* context) {
  PacingCaps caps;
  ibv_device_attr_ex attributes{};
  if (context == nullptr || ibv_query_device_ex(context, nullptr, &attributes) != 0) return caps;
  caps.min_kbps = attributes.packet_pacing_caps.qp_rate_limit_min;
  caps.max_kbps = attributes.packet_pacing_caps.qp_rate_limit_max;
  caps.rc = (attributes.packet_pacing_caps.supported_qpts & (1u << IBV_QPT_RC)) != 0;
  return caps;
}

}  // namespace tusk::rdma
