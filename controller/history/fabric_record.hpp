// The fabric's record across runs (issue 62): for each link and host, the runs that exercised it,
// those that blamed it (with the fault's kind, rate and confidence), when it was first and last
// seen, and its state, with the runs that state rests on:
//   clean            exercised, never blamed
//   suspect          blamed by the last run that exercised it, or clean fewer than `clean_to_repair`
//                    runs since its last blame
//   repaired         blamed, then clean in `clean_to_repair` runs or more since
//   repeat offender  blamed in `repeat_blames` of its last `repeat_window` runs whatever the last
//                    one said, or blamed again after it had been repaired (until it is repaired again)
// Pure: the rows come from the history (RunHistory::links_since, hosts_since).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "controller/history/history_store.hpp"

namespace tusk {

struct FabricSettings {
  int repeat_blames = 2;
  int repeat_window = 5;
  int clean_to_repair = 2;
};

// One run's word on one link or host.
struct FabricRun {
  std::string run_id;
  std::optional<std::int64_t> started_ns;
  bool blamed = false;
  // A link blamed: its fault as localisation named it; a host: its failing streams of its streams.
  std::string kind;
  std::optional<double> rate;
  std::string confidence;
  int failing = 0;
  int of = 0;
};

struct FabricEntry {
  std::string key;              // a link's key, a host's agent name
  std::string name;             // a link's name with its cable where the topology names one; a host's name
  std::vector<FabricRun> runs;  // oldest first
  int blames = 0;
  std::string state;
  std::string why;                    // the state in words
  std::vector<std::string> rests_on;  // the runs the state rests on
};

struct FabricRecord {
  std::vector<std::string> runs;  // every run read, oldest first
  std::vector<FabricEntry> links;
  std::vector<FabricEntry> hosts;
};

FabricRecord fabric_record(const std::vector<LinkTrendRow>& links, const std::vector<HostRunRow>& hosts,
                           const FabricSettings& settings = {});

// How bad a state is, for ordering: repeat offender first, clean last.
int state_rank(const std::string& state);

}  // namespace tusk
