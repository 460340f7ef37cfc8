// Whether a later run of a fabric is worse than an earlier one, stream by stream and link by link:
// what `tusk-controller compare` prints and a pipeline's exit code rests on. Streams are matched
// by test, agent, stream id and peer (a routed flow's stream id names its flow); a change counts as
// worse only beyond a threshold, so run-to-run noise is not a regression and an improvement never
// is. Pure functions; any thread may call them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "controller/history/history_rows.hpp"

namespace tusk {

// How much worse a number must get to count. The defaults are the CLI's; every one can be overridden.
struct WorseThresholds {
  // The BER upper bound rose by at least this factor, with bit errors in the later run. (A bound that
  // rose with no error seen only says fewer bits were compared.) Errors where there were none always count.
  double ber_bound_factor = 10;
  // The loss ratio rose by more than this, absolutely, and to more than loss_ratio_factor times its value.
  double loss_ratio_absolute = 1e-6;
  double loss_ratio_factor = 2;
  // Retransmits grew to at least this many times as many, and by at least retransmits_absolute.
  double retransmits_factor = 2;
  double retransmits_absolute = 10;
  // Throughput fell by at least this share of its earlier value (0.05: 5 %).
  double throughput_drop = 0.05;
  // The p99 latency rose by at least this share of its earlier value (0.2: 20 %).
  double latency_p99_rise = 0.20;
  // Always worse, whatever the numbers: a stream that passed and now fails, one that is missing from
  // the later run, completion errors where there were none (or retransmits_factor times as many), a
  // fabric link localisation names now and did not before.
};

// One way one stream or link got worse.
struct Regression {
  std::string test;
  std::string agent;      // "" for a fabric link
  std::string stream_id;  // "" for a fabric link
  std::string peer;
  std::string link;  // the stream's hosts ("lab-a->lab-b"), or the fabric link's name
  std::string flow;  // a routed stream's 5-tuple
  // passed, missing, bit_errors, ber_upper_bound, loss_ratio, retransmits, throughput_bps,
  // latency_p99_ns, completion_errors, or suspect (a fabric link localisation newly blames)
  std::string metric;
  std::optional<double> before, after;
  std::string text;  // one line: "BER bound 4.30e-10 -> 2.10e-05 (x48837, 1234 bit errors)"

  // What got worse: "cable lab-b rx:lab-a/1 (lab-a->lab-b)", or "leaf-spine link l1:s2 -> s2:l1".
  std::string subject() const;
};

struct Comparison {
  std::vector<Regression> regressions;   // in the earlier run's order of streams, then the later run's links
  std::size_t compared_streams = 0;      // streams in both runs
  std::vector<std::string> new_streams;  // only in the later run: not worse, a reader may still ask
  bool worse() const { return !regressions.empty(); }
};

// `before` and `after` are the two runs' rows (RunHistory::load_run or rows_of_report).
Comparison compare_runs(const RunRows& before, const RunRows& after, const WorseThresholds& thresholds = {});

}  // namespace tusk
