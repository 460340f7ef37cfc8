// What the RDMA engine's set-up, datapath and sampling files share; nothing outside them uses it.
#pragma once

#include <string>

namespace tusk::rdma::detail {

// The counter a completion status is counted under, e.g. "wc_transport_retries_exhausted".
std::string status_counter_name(int status);

}  // namespace tusk::rdma::detail
