// The localiser's parts, shared by the files that make one localisation: flow_table.cpp (the flows
// and their links gathered), link_localisation.cpp (the links' evidence), localiser_suspects.cpp (the rates fitted,
// suspects named and ranked) and localiser_explain.cpp (what each suspect's text says). Not for other users: localise()
// (link_localisation.hpp) is the way in.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/wire_bounds.hpp"
#include "controller/verdict/flow_table.hpp"
#include "controller/verdict/flow_windows.hpp"
#include "controller/verdict/link_localisation.hpp"
#include "controller/verdict/link_rates.hpp"
#include "controller/verdict/probe_twins.hpp"
#include "controller/verdict/switch_counters.hpp"

namespace tusk::localiser {

// How sure a link must be over the noise floor to be named (one-sided): a night judges hundreds of
// links, and at 97.5 % (the 95 % interval's lower end) a healthy link whose flows met a few faults
// by chance was named in one localisation of forty on a sparse fabric with background noise
// (bench/localisation_sim).
inline constexpr double kFloorConfidence = 0.999;

using wire::kMaxCount;

// A link the flows voting for links crossed, with its probes' evidence over all of them.
struct LinkData {
  ProbeEvidence probes;
  std::uint64_t moved = 0;  // probes past it that another address answered (a route withdrawn)
};

// One link's windows in which a fit of that window alone found it above the floor, for one kind.
struct WindowMarks {
  std::uint32_t first = 0, last = 0, count = 0;
  std::uint64_t span_ms = 0;
  double met = 0, trials = 0, events = 0, evidence = 0;  // summed over those windows
  std::vector<std::uint32_t> group;                      // the links tied with it in its first one
  std::vector<std::uint32_t> flows;                      // every flow through it
  std::set<std::uint32_t> explains;                      // the failing flows it explained in any
};

// The cable a directed link is one direction of: its two ends, in one order.
std::string cable_of(const std::string& key);

NamedLink link_between(const FabricTopology* topology, const std::string& from, const std::string& to);

// One localisation, step by step: the receivers that dropped frames themselves, the links' probe
// evidence compared, then for each kind of fault the links' rates fitted to what the flows
// measured (link_rates.hpp), and a suspect for every link whose rate is significantly above zero
// and explains a failing flow. Links are FlowTable's ids throughout.
class Localiser {
 public:
  Localiser(std::shared_ptr<const FlowTable> flows, const FabricTopology* topology,
            const SwitchCounterEvidence* counters, const NoiseFloor& floor, const FlowWindows* windows);

  Localisation run();

 private:
  const std::string& key_of(std::uint32_t link) const;

  // Receivers that dropped frames themselves: their flows' loss is theirs, not a link's.
  void name_slow_receivers();
  // Links that add delay, from the flows' latencies against their siblings' (localiser_delays.cpp).
  void name_delays();
  std::vector<std::string> delay_texts() const;

  // Each link's probe evidence, finished against the hop before, the hop past and its far end's
  // other links.
  void gather_links();
  void compare_far_ends();

  // A cable that went down shows in both directions' flows: those over it die or move away. Where
  // a router drops what it has no route for, probes to it die too, so the loss seems to start at
  // the router, a hop before the cable that failed; the flows that moved name the cable itself.
  void count_moved_cables();

  std::uint64_t moved_over(const std::string& key) const;

  // What the switches counted on the link `key`, when both its direction's ends or one were read.
  const CountedDirection* counted_on(const std::string& key) const;
  bool counts_loss(const std::string& key) const;
  // The switches read this link's receiving end (or both ends) and counted no loss on it.
  bool counts_clean(const std::string& key) const;

  bool cable_moved(const std::string& key) const;

  // What flow f counted of `kind`, as the link-rate fit reads it: the frames that could have met it
  // and those that did; a flow judged only pass or fail is one trial, and an event when it failed
  // on what no count of it shows (latency, a QP's slowness, a model's verdict); a flow whose counts
  // show events is none of that kind's. Nothing for a flow that votes for no link.
  std::optional<FlowEvents> observed(std::size_t f, FaultKind kind) const;
  std::vector<std::uint32_t> distinct_links(std::size_t f) const;
  // The links the fits read for flow f: its distinct links and, where its trace stopped before its
  // receiver, the unknown rest of its path, one unknown per link the trace stopped past
  // (link_count() + tail_of_link_): a failing flow whose trace a policer cut short may have met
  // its fault past where the trace stopped, and must not be explained by its known links alone.
  std::vector<std::uint32_t> fitted_links(std::size_t f) const;
  std::size_t fitted_link_count() const { return table_.link_count() + tails_; }
  // Drops the unknown rests from a fitted rate's links; false when nothing known is left.
  bool keep_known_links(LinkRate& rate) const;

  // Localisation in time (localiser_windows.cpp): the links of `kind` that a fit of each window's
  // counts alone finds above the floor, by link id, with the windows they were found in.
  std::map<std::uint32_t, WindowMarks> fit_windows(FaultKind kind) const;
  // A link found in windows that the whole test's counts dilute (under the floor, or not kept):
  // named from the windows it was found in, at their rate.
  void name_in_time(std::vector<std::uint32_t> group, const WindowMarks& marks, FaultKind kind);
  SuspectWindows windows_of(const WindowMarks& marks) const;
  static std::string windows_text(const SuspectWindows& windows);
  // Says when `named` (a LinkSuspect, or a HostSuspect for a host's own link) was at fault.
  template <typename Named>
  void add_windows(Named& named, const WindowMarks& marks) const {
    named.windows = windows_of(marks);
    named.evidence += windows_text(*named.windows);
  }
  // The marks of the group's first link that has any, or nullptr.
  static const WindowMarks* marks_of(const std::vector<std::uint32_t>& group,
                                     const std::map<std::uint32_t, WindowMarks>& marks);

  // Fits the links' rates of `kind` and names those significantly above zero that explain a
  // failing flow: a link, or a host when the link is where every flow through it starts or ends.
  void name_suspects(FaultKind kind);

  // One link, one suspect: a link significant for several kinds is named for the kind that makes
  // its case, with the others beside it.
  void fold_kinds_per_link();

  // A rate of loss or damage not above the noise floor with kFloorConfidence: noise, not a fault.
  bool under_floor(const LinkRate& rate, FaultKind kind, double confidence = kFloorConfidence) const;
  void add_noise(const std::vector<std::uint32_t>& group, const LinkRate& rate, FaultKind kind);
  // "noise: 2 lost frames on 2 links under the noise floor (...)", or "".
  std::string noise_text() const;

  // A link where every flow through it starts (or ends) at one host is that host's own link:
  // its NIC, optic or cable, named at the host.
  bool name_host_end(std::uint32_t link, const LinkRate& rate, FaultKind kind);

  static std::string what_it_does(double rate, FaultKind kind);

  static std::string interval_text(const LinkRate& rate, FaultKind kind);

  std::string explained_text(const LinkRate& rate) const;

  // The links the same flows cross (in the order of `some_flow`, one of them), the likeliest
  // first: a cable that moved routes, then the switches' counters, then the probes' likelihood of
  // loss and damage with routers' policing in the model (probe_twins.hpp: its verdict returned).
  TwinPlacement order_twins(std::vector<std::uint32_t>& group, std::size_t some_flow) const;

  // The suspect the group's first link is, with what tells it from the others and why.
  LinkSuspect suspect_of(const std::vector<std::uint32_t>& group, const LinkRate& rate, FaultKind kind,
                         const TwinPlacement& placed) const;
  // "; l2 answered 48 % of l1h1's probes, ...", or "".
  std::string policers_text(const std::vector<ProbePolicer>& policers) const;
  // The group's first link is told from the others (order_twins put it first): by a cable that
  // moved routes, by the switches' counters, or by the probes.
  bool moved_decides_twins(const std::vector<std::uint32_t>& group) const;
  bool counters_decide_twins(const std::vector<std::uint32_t>& group) const;
  bool told_apart(const std::vector<std::uint32_t>& group, const TwinPlacement& placed) const;

  static std::string counter_text(const CountedDirection& counted, bool confirmed);

  // Every flow through each suspect's link, failing and passing: one pass over the flows.
  void list_suspects_flows();

  // Named before unnamed; links that count frames by their rate, then those judged pass or fail
  // by the flows they explain.
  void rank_suspects();

  void conclude();

  std::shared_ptr<const FlowTable> flows_;
  const FlowTable& table_;
  const FabricTopology* topology_;
  const SwitchCounterEvidence* counters_;
  const FlowWindows* windows_;
  Localisation out_;
  std::vector<LinkData> links_;                // by FlowTable link id
  std::vector<std::uint32_t> router_of_link_;  // its far end, into routers_
  std::vector<std::string> routers_;
  std::vector<std::uint32_t> tail_of_link_;  // by FlowTable link id (fitted_links)
  std::uint32_t tails_ = 0;
  std::vector<std::uint32_t> suspect_link_;                                        // out_.suspects[i]'s link
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> moved_by_cable_;  // moved, probes
};

}  // namespace tusk::localiser
