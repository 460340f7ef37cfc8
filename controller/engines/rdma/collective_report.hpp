// What a training-step replay achieved, in the terms of nccl-tests and of the model: per rank the
// bytes it sent per step against the model's, its time per step; the slowest rank (the straggler
// that holds every other one); algorithm and bus bandwidth; and how far each link fell below the
// best one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/outcome/run_outcome.hpp"

namespace tusk {

// A rank is an agent, or on rails one of its NICs (GPU i's traffic goes through NIC i).
struct RankResult {
  std::string agent;
  std::string nic;                  // on rails: its NIC port ("mlx5_1/1"); empty otherwise
  double bytes_per_step = 0;        // measured: sent over all its flows / steps done
  double model_bytes_per_step = 0;  // what the collective's algorithm puts on the wire
  std::uint64_t steps_done = 0;     // the fewest over its flows
  double step_time_mean_s = 0;      // the longest mean over its flows: a rank waits for its last
  double step_time_max_s = 0;
};

struct LinkResult {
  std::string from, to;
  std::string nic;  // on rails: the sender's NIC port
  double bytes_per_step = 0;
  double rate_bps = 0;            // while communicating: bytes per step over mean step time
  double below_best_percent = 0;  // 0 for the fastest link
};

struct CollectiveResult {
  std::string collective;
  std::size_t ranks = 0;             // in one ring: the agents
  std::uint32_t rails = 0;           // rings side by side, one per rail (0: no rails)
  std::uint64_t bytes_per_step = 0;  // S, scaled
  std::uint32_t steps = 0;
  std::vector<RankResult> per_rank;
  std::vector<LinkResult> links;
  std::string slowest_rank;      // the agent, and on rails its NIC: "vm2 rxe1/1"
  double time_per_step_s = 0;    // the slowest rank's mean
  double algbw_bytes_per_s = 0;  // S / time per step
  double busbw_bytes_per_s = 0;  // algbw * 2(n-1)/n (all_reduce) or (n-1)/n
};

// Nothing when the test is not a collective replay or no rank finished a step.
std::optional<CollectiveResult> collective_result(const TestOutcome& test);

}  // namespace tusk
