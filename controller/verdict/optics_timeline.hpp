// One port's optics over a long test, interval by interval (profile `optics: interval`): what the
// readings as a test starts and ends cannot say, when a port began to err, and whether a burst hid
// in a whole test's average. Flat whatever the test's length: counts, and the first and the worst
// interval's finding, never every interval.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "controller/verdict/port_optics.hpp"

namespace tusk {

struct OpticsTimeline {
  std::string agent;
  std::string port;                 // as the agent's engine names it
  std::string netdev;               // the kernel's name
  std::string title;                // port_optics_title: the port as a technician finds it
  std::uint32_t intervals = 0;      // read
  std::uint32_t with_findings = 0;  // a warning or a failure in it
  std::uint32_t failing = 0;        // a failure in it
  // The first interval with a finding, the first failing one, and the end of the last with a
  // finding; on the agent's clock until judge_test puts them on the controller's.
  std::int64_t first_start_ns = 0;
  std::int64_t first_end_ns = 0;
  std::int64_t failing_start_ns = 0;
  std::int64_t failing_end_ns = 0;
  std::int64_t last_end_ns = 0;
  std::string first_text;  // the first such interval's most severe finding
  std::string worst_text;  // the first failing interval's, else the first's

  bool failed() const { return failing > 0; }
};

// Adds one interval's reading, judged (judge_port_optics), that ended at `end_ns` after
// `interval_ns`. That FEC could not be judged is the whole test's reading's to say, not each
// interval's.
void add_optics_interval(OpticsTimeline& timeline, const PortOpticsOutcome& judged, std::int64_t end_ns,
                         std::uint64_t interval_ns);

// Two timelines of one port (a method's steps) as one: counts added, the earlier first kept.
void merge_optics_timeline(OpticsTimeline& into, const OpticsTimeline& more);

// "lab-a lo (port0): findings in 3 of 10 intervals, the first 12:00:03 to 12:01:03 UTC: ..."
std::string optics_timeline_text(const OpticsTimeline& timeline);

// One line for the summary; empty when no interval was read.
std::string optics_timeline_summary(const std::vector<OpticsTimeline>& timelines);

}  // namespace tusk
