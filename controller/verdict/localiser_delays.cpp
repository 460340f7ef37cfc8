// Links that add delay: the flows' median latencies fitted as each host pair's base plus what each
// link of the path adds (link_delays.hpp), and a suspect of its own for each link that adds more
// than the floor's delay with 99.9 % confidence.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <map>

#include "common/units.hpp"
#include "controller/verdict/link_delays.hpp"
#include "controller/verdict/localiser.hpp"

namespace tusk::localiser {
namespace {

std::string delay_text(double ns) {
  return units::format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(ns))));
}

}  // namespace

void Localiser::name_delays() {
  std::vector<FlowDelay> flows;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> pairs;
  for (std::size_t f = 0; f < table_.size(); ++f) {
    const FlowRecord& flow = table_[f];
    if (flow.latency_ns < 0 || flow.link_count == 0) continue;
    const auto pair = pairs.try_emplace({flow.sender, flow.receiver}, static_cast<std::uint32_t>(pairs.size()));
    const auto links = table_.links_of(f);
    flows.push_back({{links.begin(), links.end()}, pair.first->second, static_cast<double>(flow.latency_ns)});
  }
  if (flows.size() < 2) return;
  const DelayFit fit = estimate_link_delays(flows, table_.link_count(), out_.floor.delay_ns);
  out_.delays_complete = fit.complete;
  for (const LinkDelay& delay : fit.delays) {
    DelaySuspect suspect;
    suspect.key = key_of(delay.links.front());
    suspect.name = table_.link(delay.links.front()).named.name;
    for (std::size_t i = 1; i < delay.links.size(); ++i) suspect.tied.push_back(key_of(delay.links[i]));
    suspect.added_ns = delay.added_ns;
    suspect.low_ns = delay.low_ns;
    suspect.high_ns = delay.high_ns;
    suspect.z = delay.z;
    suspect.flows = delay.flows;
    suspect.siblings = delay.siblings;
    suspect.evidence = fmt::format(
        "adds {} to the median latency of the {} flow{} through it (95 %: {} to {}) against {} sibling{} between the "
        "same hosts on other paths ({:.0f} standard errors of their scatter, {}){}",
        delay_text(delay.added_ns), delay.flows, delay.flows == 1 ? "" : "s", delay_text(delay.low_ns),
        delay_text(delay.high_ns), delay.siblings, delay.siblings == 1 ? "" : "s", delay.z, delay_text(fit.noise_ns),
        suspect.tied.empty() ? "" : fmt::format("; the same flows cross {}", fmt::join(suspect.tied, ", ")));
    out_.delays.push_back(std::move(suspect));
  }
}

std::vector<std::string> Localiser::delay_texts() const {
  std::vector<std::string> texts;
  for (const DelaySuspect& delay : out_.delays) {
    texts.push_back(fmt::format("link {} adds {} to its flows' latency", delay.name, delay_text(delay.added_ns)));
  }
  if (!out_.delays_complete) {
    texts.push_back(fmt::format("the latency fit stopped after naming {} link{} (its work budget): more may add delay",
                                out_.delays.size(), out_.delays.size() == 1 ? "" : "s"));
  }
  return texts;
}

}  // namespace tusk::localiser
