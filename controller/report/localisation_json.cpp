// report.json's localisation of a test: the flows as the localiser traced them, the suspects with
// their evidence, and the host problems.
#include "controller/report/localisation_json.hpp"

#include <cmath>
#include <cstdint>
#include <utility>

#include "controller/report/report_json_parts.hpp"
#include "controller/verdict/flow_table.hpp"
#include "controller/verdict/link_localisation.hpp"

namespace tusk {
using json = nlohmann::ordered_json;

namespace {

// One flow of the localisation: its ends, verdict, path and (where its streams are kept) each hop
// its trace probed.
json traced_flow_json(const TestOutcome& test, const FlowTable& table, std::size_t f) {
  const TracedFlowPath flow = table.traced(f);
  const StreamVerdict* rx = flow.rx_stream ? &test.streams.at(*flow.rx_stream) : nullptr;
  json path = json::array();
  if (flow.tx_stream) {
    const auto& hops = test.streams.at(*flow.tx_stream).stream.path();
    for (int at = 0; at < hops.size(); ++at) {
      const proto::TraceHop& hop = hops.Get(at);
      json entry{{"ttl", hop.ttl()},
                 {"address", hop.address()},
                 {"probes", hop.probes()},
                 {"answers", hop.answers()},
                 {"damaged", hop.damaged()},
                 {"unreachable", hop.unreachable()},
                 {"destination", hop.destination()}};
      if (!hop.other_address().empty()) {
        entry["other_address"] = hop.other_address();
        entry["other_answers"] = hop.other_answers();
      }
      if (static_cast<std::size_t>(at) + 1 < flow.node_names.size()) entry["name"] = flow.node_names[at + 1];
      path.push_back(std::move(entry));
    }
  }
  const std::uint32_t step = table[f].step;
  return {{"sender", flow.sender},
          {"receiver", flow.receiver},
          {"step", step > 0 ? json(step) : json(nullptr)},
          {"stream", rx ? json(rx->stream.stream_id()) : json(nullptr)},
          {"flow", rx ? json(flow_text(rx->stream)) : json(nullptr)},
          {"passed", !flow.failing},
          {"faults", flow.faults},
          {"host_side", flow.host_side},
          {"path_complete", flow.reached},
          {"nodes", flow.node_names},
          {"links", flow.links},
          {"path", path}};
}

// The windows a suspect was at fault in (localisation in time), or null.
json windows_json(const std::optional<SuspectWindows>& windows) {
  if (!windows) return nullptr;
  return {{"first", windows->first},
          {"last", windows->last},
          {"count", windows->count},
          {"of", windows->of},
          {"first_start_ms", windows->first_start_ms},
          {"last_end_ms", windows->last_end_ms},
          {"share", windows->share},
          {"steady", windows->steady()}};
}

// The links under the noise floor, with their events and rates.
json noise_json(const Localisation& found) {
  json noise = json::array();
  for (const NoiseLink& link : found.noise) {
    noise.push_back({{"link", link.key},
                     {"name", link.name},
                     {"tied_with", link.tied},
                     {"kind", to_string(link.kind)},
                     {"events", link.events},
                     {"rate", link.rate},
                     {"rate_interval", json::array({link.rate_low, link.rate_high})}});
  }
  return noise;
}

// The links that add delay, the most first.
json delays_json(const Localisation& found) {
  json delays = json::array();
  for (const DelaySuspect& delay : found.delays) {
    delays.push_back({{"link", delay.key},
                      {"name", delay.name},
                      {"tied_with", delay.tied},
                      {"kind", "latency"},
                      {"added_delay_ns", delay.added_ns},
                      {"added_delay_interval_ns", json::array({delay.low_ns, delay.high_ns})},
                      {"standard_errors", delay.z},
                      {"flows", delay.flows},
                      {"siblings", delay.siblings},
                      {"evidence", delay.evidence}});
  }
  return delays;
}

}  // namespace

// The routed flows with their traced paths, the suspects and the host problems (link_localisation).
json localisation_json(const TestOutcome& test) {
  const Localisation& found = test.localisation;
  const FlowTable& table = *found.flows;
  // A flow by its judged stream; one whose stream the schedule no longer keeps (a passing stream of
  // a finished step) by its step and ends.
  const auto flow_id = [&](std::size_t f) -> json {
    const FlowRecord& flow = table[f];
    if (flow.rx_stream != kNoStream) return stream_ref(test.streams.at(flow.rx_stream));
    return {{"step", flow.step}, {"sender", table.agent(flow.sender)}, {"receiver", table.agent(flow.receiver)}};
  };
  json flows = json::array();
  for (std::size_t f = 0; f < table.size(); ++f) flows.push_back(traced_flow_json(test, table, f));
  const auto flow_ids = [&](const std::vector<std::size_t>& indexes) {
    json list = json::array();
    for (const std::size_t f : indexes) list.push_back(flow_id(f));
    return list;
  };
  json suspects = json::array();
  for (const auto& suspect : found.suspects) {
    const ProbeEvidence& p = suspect.probes;
    json also = json::array();
    for (const OtherFault& other : suspect.also) {
      const bool counted = other.kind != FaultKind::Failure;
      also.push_back({{"kind", to_string(other.kind)},
                      {"rate", counted ? json(other.rate) : json(nullptr)},
                      {"rate_interval", counted ? json::array({other.rate_low, other.rate_high}) : json(nullptr)},
                      {"explains", other.explains},
                      {"confidence", to_string(other.confidence)}});
    }
    suspects.push_back(
        {{"link", suspect.key},
         {"name", suspect.name},
         {"confidence", to_string(suspect.confidence)},
         {"votes", suspect.votes},
         {"kind", to_string(suspect.kind)},
         {"rate", suspect.kind == FaultKind::Failure ? json(nullptr) : json(suspect.rate)},
         {"rate_interval",
          suspect.kind == FaultKind::Failure ? json(nullptr) : json::array({suspect.rate_low, suspect.rate_high})},
         {"also", std::move(also)},
         {"windows", windows_json(suspect.windows)},
         {"likelihood_ratio", std::isfinite(suspect.likelihood_ratio)
                                  ? json(suspect.likelihood_ratio)
                                  : json("infinite: nothing else explains its flows")},
         {"explains", flow_ids(suspect.explains)},
         {"faults", suspect.faults},
         {"failing_flows", flow_ids(suspect.failing)},
         {"passing_flows", flow_ids(suspect.passing)},
         {"passing_flows_summed", suspect.passing_summed},
         {"probes",
          {{"probes", p.probes},
           {"answers", p.answers},
           {"damaged", p.damaged},
           {"lost_share", p.lost_share()},
           {"lost_share_hop_before", p.lost_share_before()},
           {"damaged_share", p.damaged_share()},
           {"damaged_share_hop_before", p.damaged_share_before()},
           {"lost_share_hop_after", p.last_answered() ? json(nullptr) : json(p.lost_share_after())},
           {"lost_share_elsewhere", p.probes_elsewhere ? json(1.0 - static_cast<double>(p.answers_elsewhere) /
                                                                        static_cast<double>(p.probes_elsewhere))
                                                       : json(nullptr)},
           {"loss_z", p.loss_z},
           {"persist_z", p.persist_z},
           {"elsewhere_z", p.elsewhere_z},
           {"loss_is_the_links", p.loss_is_the_links()},
           {"damage_z", p.damage_z}}},
         {"cleared_by_probes", suspect.cleared},
         {"tied_with", suspect.tied},
         {"lossier_past_it", suspect.lossier_past_it},
         {"switch_counters", suspect.counted ? json{{"confirmed", suspect.confirmed_by_counters},
                                                    {"in_errors", suspect.counted->in_errors},
                                                    {"in_discards", suspect.counted->in_discards},
                                                    {"vanished", suspect.counted->vanished()},
                                                    {"receiver_read", suspect.counted->receiver_read}}
                                             : json(nullptr)},
         {"evidence", suspect.evidence},
         {"next_steps", suspect.next_steps}});
  }
  json hosts = json::array();
  for (const auto& host : found.hosts) {
    hosts.push_back({{"agent", host.agent},
                     {"problem", host.problem},
                     {"windows", windows_json(host.windows)},
                     {"evidence", host.evidence},
                     {"next_steps", host.next_steps}});
  }
  // A schedule's clean flows were summed per link as each step ended: counted here, not listed.
  json out{
      {"conclusion", found.conclusion},
      {"suspects", suspects},
      {"hosts", hosts},
      {"noise_floor", {{"loss", found.floor.loss}, {"damage", found.floor.damage}, {"delay_ns", found.floor.delay_ns}}},
      {"delays", delays_json(found)},
      {"delays_complete", found.delays_complete},
      {"noise", noise_json(found)},
      {"noise_text", found.noise_text.empty() ? json(nullptr) : json(found.noise_text)},
      {"flows", flows},
      {"clean_flows_summed", table.clean_flows()}};
  if (table.clean_flows() > 0) {
    json by_link = json::object();
    for (std::uint32_t link = 0; link < table.link_count(); ++link) {
      if (const auto clean = table.link(link).clean_flows(); clean > 0) by_link[table.link(link).named.key] = clean;
    }
    out["clean_flows_by_link"] = std::move(by_link);
  }
  if (const LinkSuspect* top = found.top()) out["top_suspect"] = top->name;
  return out;
}

}  // namespace tusk
