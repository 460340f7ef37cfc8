// What the DPDK engine sends under a plan, worked out from the plan's sizes and rate alone: the
// TX thread paces by it and the agent holds it to the safety cap, so the two cannot disagree.
#pragma once

#include "common/rates.hpp"
#include "tusk.pb.h"

namespace tusk::dpdk {

// The frame rate the port sends (0: line rate), its mean bit rate and what a cap holds it to.
OfferedRate send_rate(const proto::DpdkTest& test);

// The bit rate a safety cap holds a dpdk plan to (the catalog's CappedBitRate), once the plan
// passed check_dpdk_plan (EngineError otherwise).
double capped_bit_rate(const proto::Plan& plan);

}  // namespace tusk::dpdk
