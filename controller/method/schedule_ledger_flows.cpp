// A schedule's flow table in its ledger and back: every field, so a resumed schedule's table is
// the one its controller held (its clean flows' sums and signatures included), and every index
// checked on the way back in, so a damaged ledger is an error, never a wild read.
#include <fmt/format.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "controller/method/schedule_ledger.hpp"
#include "controller/verdict/flow_table.hpp"
#include "schedule_ledger.pb.h"

namespace tusk {

namespace {

// FlowRecord's fields, in order, little-endian as this machine writes them.
constexpr std::size_t kPackedFlowBytes = 4 * 8 + 7 * 4 + 2;

template <typename T>
void put(std::string& out, T value) {
  char bytes[sizeof(T)];
  std::memcpy(bytes, &value, sizeof(T));
  out.append(bytes, sizeof(T));
}

template <typename T>
T take(const char*& in) {
  T value;
  std::memcpy(&value, in, sizeof(T));
  in += sizeof(T);
  return value;
}

void pack(const FlowRecord& flow, std::string& out) {
  for (const std::uint64_t v : {flow.loss_trials, flow.loss_events, flow.damage_trials, flow.damage_events}) {
    put(out, v);
  }
  for (const std::uint32_t v :
       {flow.rx_stream, flow.tx_stream, flow.sender, flow.receiver, flow.links_at, flow.faults, flow.step}) {
    put(out, v);
  }
  put(out, flow.link_count);
  put(out, flow.flags);
}

FlowRecord unpack(const char* in) {
  FlowRecord flow;
  for (std::uint64_t* v : {&flow.loss_trials, &flow.loss_events, &flow.damage_trials, &flow.damage_events}) {
    *v = take<std::uint64_t>(in);
  }
  for (std::uint32_t* v :
       {&flow.rx_stream, &flow.tx_stream, &flow.sender, &flow.receiver, &flow.links_at, &flow.faults, &flow.step}) {
    *v = take<std::uint32_t>(in);
  }
  flow.link_count = take<std::uint8_t>(in);
  flow.flags = take<std::uint8_t>(in);
  return flow;
}

std::uint64_t* probe_counts(ProbeEvidence& p, std::size_t i) {
  std::uint64_t* counts[] = {&p.probes,
                             &p.answers,
                             &p.damaged,
                             &p.probes_before,
                             &p.answers_before,
                             &p.damaged_before,
                             &p.probes_after,
                             &p.answers_after,
                             &p.probes_elsewhere,
                             &p.answers_elsewhere,
                             &p.probes_elsewhere_before,
                             &p.answers_elsewhere_before};
  return i < std::size(counts) ? counts[i] : nullptr;
}

}  // namespace

struct FlowTableLedger {
  static void save(const FlowTable& table, ledger::FlowTable& out, const FabricTopology* topology) {
    std::string& flows = *out.mutable_flows();
    flows.reserve(table.flows_.size() * kPackedFlowBytes);
    for (const FlowRecord& flow : table.flows_) pack(flow, flows);
    out.mutable_path_links()->Add(table.path_links_.begin(), table.path_links_.end());
    for (const auto& agent : table.agents_) out.add_agents(agent);
    for (const FlowLink& link : table.links_) {
      ledger::FlowLink& saved = *out.add_links();
      saved.set_key(link.named.key);
      saved.set_name(link.named.name);
      std::int64_t cable = -1;
      if (topology && link.named.link) cable = link.named.link - topology->links().data();
      saved.set_topology_link(cable);
      saved.set_reversed(link.named.reversed);
      saved.set_near_end(link.near_end);
      saved.set_far_end(link.far_end);
      ProbeEvidence probes = link.probes;
      for (std::size_t i = 0; std::uint64_t* count = probe_counts(probes, i); ++i) saved.add_probes(*count);
      saved.set_first_hop(link.probes.first_hop);
      saved.set_moved(link.moved);
      for (const CleanFlows& clean : link.clean) {
        saved.add_clean_trials(clean.trials);
        saved.add_clean_flows(clean.flows);
        saved.add_clean_signature(clean.signature);
      }
      saved.set_clean_first(link.clean_first);
      saved.set_clean_last(link.clean_last);
      saved.set_clean_sender(link.clean_sender);
      saved.set_clean_receiver(link.clean_receiver);
    }
    for (const auto& set : table.fault_sets_) {
      auto& saved = *out.add_fault_sets();
      for (const auto& fault : set) saved.add_faults(fault);
    }
    for (const auto& [agent, tally] : table.receivers_) {
      auto& saved = *out.add_receivers();
      saved.set_agent(agent);
      saved.set_flows(tally.flows);
      saved.set_host_drops(tally.host_drops);
    }
    for (std::size_t h = 0; h < table.probe_hops_.size(); ++h) {
      const ProbeHop& hop = table.probe_hops_[h];
      auto& saved = *out.add_probe_hops();
      saved.set_parent(hop.parent == ProbeHop::kFirst ? 0 : hop.parent + 1);
      saved.set_link(hop.link);
      saved.set_sender(hop.sender);
      saved.set_probes(hop.probes);
      saved.set_answers(hop.answers);
      saved.set_damaged(hop.damaged);
    }
    out.set_untraced_failing(table.untraced_failing_);
    out.set_clean_flows(table.clean_flows_);
    out.set_clean_partial(table.clean_partial_);
  }

  static std::shared_ptr<FlowTable> load(const ledger::FlowTable& in, const FabricTopology* topology) {
    auto table = std::make_shared<FlowTable>();
    FlowTable& t = *table;
    if (in.flows().size() % kPackedFlowBytes != 0) throw std::runtime_error("flows: not whole records");
    for (const auto& agent : in.agents()) t.agent_id(agent);
    if (t.agents_.size() != static_cast<std::size_t>(in.agents_size())) throw std::runtime_error("agents: repeated");
    for (const auto& saved : in.links()) {
      NamedLink named;
      named.key = saved.key();
      named.name = saved.name();
      named.reversed = saved.reversed();
      if (saved.topology_link() >= 0 && topology &&
          static_cast<std::size_t>(saved.topology_link()) < topology->links().size()) {
        named.link = &topology->links()[static_cast<std::size_t>(saved.topology_link())];
      }
      const std::uint32_t id = t.link_id(named, saved.near_end(), saved.far_end());
      if (id + 1 != t.links_.size()) throw std::runtime_error(fmt::format("links: '{}' repeated", saved.key()));
      FlowLink& link = t.links_.back();
      for (std::size_t i = 0; i < static_cast<std::size_t>(saved.probes_size()); ++i) {
        if (std::uint64_t* count = probe_counts(link.probes, i)) *count = saved.probes(static_cast<int>(i));
      }
      link.probes.first_hop = saved.first_hop();
      link.moved = saved.moved();
      for (std::size_t k = 0; k < link.clean.size() && static_cast<int>(k) < saved.clean_flows_size(); ++k) {
        const int i = static_cast<int>(k);
        if (i >= saved.clean_trials_size() || i >= saved.clean_signature_size()) break;
        link.clean[k] = {saved.clean_trials(i), saved.clean_flows(i), saved.clean_signature(i)};
      }
      link.clean_first = saved.clean_first();
      link.clean_last = saved.clean_last();
      link.clean_sender = saved.clean_sender();
      link.clean_receiver = saved.clean_receiver();
    }
    for (int s = 1; s < in.fault_sets_size(); ++s) {  // set 0, none, every table has
      const auto& faults = in.fault_sets(s).faults();
      t.fault_set_id({faults.begin(), faults.end()});
    }
    t.path_links_.assign(in.path_links().begin(), in.path_links().end());
    for (const std::uint32_t link : t.path_links_) {
      if (link >= t.links_.size()) throw std::runtime_error(fmt::format("path_links: no link {}", link));
    }
    const std::size_t count = in.flows().size() / kPackedFlowBytes;
    t.flows_.reserve(count);
    for (std::size_t f = 0; f < count; ++f) {
      const FlowRecord flow = unpack(in.flows().data() + f * kPackedFlowBytes);
      if (flow.sender >= t.agents_.size() || flow.receiver >= t.agents_.size() || flow.faults >= t.fault_sets_.size() ||
          std::size_t{flow.links_at} + flow.link_count > t.path_links_.size()) {
        throw std::runtime_error(fmt::format("flow {}: an index out of its tables", f));
      }
      t.flows_.push_back(flow);
    }
    for (const auto& saved : in.receivers()) {
      if (saved.agent() >= t.agents_.size()) throw std::runtime_error("receivers: no such agent");
      t.receivers_[saved.agent()] = {saved.flows(), saved.host_drops()};
    }
    std::vector<std::uint32_t> hop_of;  // a saved hop's index in the table
    for (const auto& saved : in.probe_hops()) {
      if (saved.parent() > hop_of.size() || saved.link() >= t.links_.size() || saved.sender() >= t.agents_.size()) {
        throw std::runtime_error(fmt::format("probe hop {}: an index out of its tables", hop_of.size()));
      }
      const std::uint32_t parent = saved.parent() == 0 ? ProbeHop::kFirst : hop_of[saved.parent() - 1];
      hop_of.push_back(t.probe_hops_.hop(parent, saved.link(), saved.sender()));
      t.probe_hops_.add(hop_of.back(), saved.probes(), saved.answers(), saved.damaged());
    }
    t.untraced_failing_ = in.untraced_failing();
    t.clean_flows_ = in.clean_flows();
    t.clean_partial_ = in.clean_partial();
    return table;
  }
};

void save_flow_table(const FlowTable& table, ledger::FlowTable& out, const FabricTopology* topology) {
  FlowTableLedger::save(table, out, topology);
}

std::shared_ptr<FlowTable> load_flow_table(const ledger::FlowTable& in, const FabricTopology* topology) {
  return FlowTableLedger::load(in, topology);
}

}  // namespace tusk
