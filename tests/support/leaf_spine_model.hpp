// A modelled leaf-spine fabric, addressed and named as the fabric lab is (tests/lab/fabric-lab.sh):
// leaves l1..lN, spines s1..sM, hosts l<i>h<k> on port "port" of their leaf's "h<k>", and the
// topology file that names every link and cable. With pods and cores it has three tiers: each pod
// has its own leaves and spines (numbered on across pods: pod 2's first leaf is l<N+1>), every
// spine is cabled to every core c1..cK, and a flow between pods climbs to a core and down into the
// other pod. Localisation's unit tests and the localisation simulator (bench/localisation_sim.cpp)
// model runs on it.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <vector>

#include "controller/topology/fabric_topology.hpp"
#include "tusk.pb.h"

namespace tusk::testing {

struct LeafSpineShape {
  int leaves = 2, spines = 2, hosts = 2, flows = 8;  // leaves and spines per pod; hosts per leaf; flows per host pair
  int pods = 1, cores = 0;                           // cores: 0 for two tiers
  int pod_of_leaf(int leaf) const { return (leaf - 1) / leaves + 1; }
  int all_leaves() const { return leaves * pods; }
  int all_spines() const { return spines * pods; }
};

// Leaves 1..155 as the fabric lab numbers them; past that (a pod's rail leaves), 10.<leaf / 256>.<leaf % 256>.
inline std::string leaf_subnet(int leaf) {
  return leaf <= 155 ? fmt::format("192.168.{}", 100 + leaf) : fmt::format("10.{}.{}", leaf / 256, leaf % 256);
}
inline std::string host_address(int leaf, int host) {
  return fmt::format("{}.{}", leaf_subnet(leaf), 10 + host);
}
inline std::string gateway(int leaf) {
  return leaf_subnet(leaf) + ".1";
}
// A leaf's cables to the spines (to 127): 172.16.<leaf>.x for the lab's leaves, 172.20.. on past
// leaf 255 (172.17 is the spines' to the cores).
inline std::string uplink_subnet(int leaf) {
  return fmt::format("172.{}.{}", leaf < 256 ? 16 : 19 + leaf / 256, leaf % 256);
}
inline std::string leaf_end(int leaf, int spine) {
  return fmt::format("{}.{}", uplink_subnet(leaf), 2 * spine);
}
inline std::string spine_end(int leaf, int spine) {
  return fmt::format("{}.{}", uplink_subnet(leaf), 2 * spine + 1);
}

// A spine's and a core's ends of the cable between them.
inline std::string spine_up_end(int spine, int core) {
  return fmt::format("172.17.{}.{}", spine, 2 * core);
}
inline std::string core_end(int spine, int core) {
  return fmt::format("172.17.{}.{}", spine, 2 * core + 1);
}

// Directed links by the topology's keys.
inline std::string uplink(int leaf, int spine) {
  return fmt::format("l{0}:s{1} -> s{1}:l{0}", leaf, spine);
}
inline std::string downlink(int leaf, int spine) {
  return fmt::format("s{1}:l{0} -> l{0}:s{1}", leaf, spine);
}
inline std::string spine_to_core(int spine, int core) {
  return fmt::format("s{0}:c{1} -> c{1}:s{0}", spine, core);
}
inline std::string core_to_spine(int spine, int core) {
  return fmt::format("c{1}:s{0} -> s{0}:c{1}", spine, core);
}
inline std::string host_to_leaf(int leaf, int host) {
  return fmt::format("l{0}h{1}:port -> l{0}:h{1}", leaf, host);
}
inline std::string leaf_to_host(int leaf, int host) {
  return fmt::format("l{0}:h{1} -> l{0}h{1}:port", leaf, host);
}

// The spine of its pod (1..spines) a flow's source port hashes to at its leaf (the same for a
// flow's frames and its probes).
inline int hashed_spine(const LeafSpineShape& shape, int src_leaf, int src_host, int dst_leaf, int port) {
  return 1 + static_cast<int>((static_cast<unsigned>(port) * 2654435761u + static_cast<unsigned>(src_leaf) * 7 +
                               static_cast<unsigned>(dst_leaf) * 13 + static_cast<unsigned>(src_host)) %
                              static_cast<unsigned>(shape.spines));
}

// A hash of the flow for the choices above the first spine (its core, the spine it comes down in
// the other pod), independent of the first: one of `choices`, from 1. `tier` tells the choices apart.
inline int hashed_above(int choices, int src_leaf, int src_host, int dst_leaf, int port, int tier) {
  std::uint64_t x = static_cast<std::uint64_t>(port) ^ (static_cast<std::uint64_t>(src_leaf) << 16) ^
                    (static_cast<std::uint64_t>(dst_leaf) << 28) ^ (static_cast<std::uint64_t>(src_host) << 40) ^
                    (static_cast<std::uint64_t>(tier) << 52);
  x += 0x9e3779b97f4a7c15u;  // splitmix64's finaliser
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9u;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebu;
  x ^= x >> 31;
  return 1 + static_cast<int>(x % static_cast<std::uint64_t>(choices));
}

struct ModelHost {
  std::string agent;  // l<leaf>h<host>
  int leaf = 0, host = 0;
};

inline std::vector<ModelHost> model_hosts(const LeafSpineShape& shape) {
  std::vector<ModelHost> hosts;
  for (int i = 1; i <= shape.all_leaves(); ++i) {
    for (int h = 1; h <= shape.hosts; ++h) hosts.push_back({fmt::format("l{}h{}", i, h), i, h});
  }
  return hosts;
}

// Both directions of `agent`'s cable to its leaf: what a fault named at that host covers. None
// for an agent the fabric does not have.
inline std::vector<std::string> host_cable(const LeafSpineShape& shape, const std::string& agent) {
  for (const auto& host : model_hosts(shape)) {
    if (host.agent == agent) return {host_to_leaf(host.leaf, host.host), leaf_to_host(host.leaf, host.host)};
  }
  return {};
}

// A flow's way from `src` to `dst` through the spine its source port hashes to (and, between
// pods, a core and a spine of the other pod): the directed links it crosses in order, and who
// answers a probe of each TTL (1 from the first).
struct ModelPath {
  int spine = 0;  // the first spine it crosses (numbered across pods), 0 for none
  std::vector<std::string> links, answers;
};

inline ModelPath model_path(const LeafSpineShape& shape, const ModelHost& src, const ModelHost& dst, int port) {
  ModelPath path;
  path.links.push_back(host_to_leaf(src.leaf, src.host));
  path.answers.push_back(gateway(src.leaf));
  if (src.leaf != dst.leaf) {
    const int src_pod = shape.pod_of_leaf(src.leaf), dst_pod = shape.pod_of_leaf(dst.leaf);
    path.spine = (src_pod - 1) * shape.spines + hashed_spine(shape, src.leaf, src.host, dst.leaf, port);
    path.links.push_back(uplink(src.leaf, path.spine));
    path.answers.push_back(spine_end(src.leaf, path.spine));
    int down_spine = path.spine;
    if (src_pod != dst_pod) {
      const int core = hashed_above(shape.cores, src.leaf, src.host, dst.leaf, port, 1);
      down_spine = (dst_pod - 1) * shape.spines + hashed_above(shape.spines, src.leaf, src.host, dst.leaf, port, 2);
      path.links.push_back(spine_to_core(path.spine, core));
      path.answers.push_back(core_end(path.spine, core));
      path.links.push_back(core_to_spine(down_spine, core));
      path.answers.push_back(spine_up_end(down_spine, core));
    }
    path.links.push_back(downlink(dst.leaf, down_spine));
    path.answers.push_back(gateway(dst.leaf));
  }
  path.links.push_back(leaf_to_host(dst.leaf, dst.host));
  path.answers.push_back(host_address(dst.leaf, dst.host));
  return path;
}

// The two streams one modelled flow is reported as, before any count: the sender's (which carries
// the path trace) and the receiver's, both with the flow's 5-tuple, numbered `stream` (1-based)
// among the pair's flows.
struct ModelFlowStreams {
  proto::StreamCounters tx, rx;
};

inline ModelFlowStreams model_flow_streams(const ModelHost& src, const ModelHost& dst, int port, int stream) {
  ModelFlowStreams out;
  proto::StreamCounters& tx = out.tx;
  tx.set_kind("tx");
  tx.set_peer(dst.agent);
  tx.set_stream_id(fmt::format("tx:{}/{}", dst.agent, stream));
  tx.set_sender_stream_id(static_cast<std::uint32_t>(stream));
  auto& flow = *tx.mutable_flow();
  flow.set_src_address(host_address(src.leaf, src.host));
  flow.set_dst_address(host_address(dst.leaf, dst.host));
  flow.set_src_port(static_cast<std::uint32_t>(port));
  flow.set_dst_port(0x88B5);
  flow.set_protocol("udp");
  proto::StreamCounters& rx = out.rx;
  rx.set_kind("rx");
  rx.set_peer(src.agent);
  rx.set_stream_id(fmt::format("rx:{}/{}", src.agent, stream));
  rx.set_sender_stream_id(static_cast<std::uint32_t>(stream));
  *rx.mutable_flow() = flow;
  return out;
}

// Every directed link of the fabric, hosts' cables included.
inline std::vector<std::string> directed_links(const LeafSpineShape& shape) {
  std::vector<std::string> links;
  for (int i = 1; i <= shape.all_leaves(); ++i) {
    const int first_spine = (shape.pod_of_leaf(i) - 1) * shape.spines;
    for (int j = first_spine + 1; j <= first_spine + shape.spines; ++j) {
      links.push_back(uplink(i, j));
      links.push_back(downlink(i, j));
    }
    for (int h = 1; h <= shape.hosts; ++h) {
      links.push_back(host_to_leaf(i, h));
      links.push_back(leaf_to_host(i, h));
    }
  }
  for (int j = 1; j <= (shape.cores > 0 ? shape.all_spines() : 0); ++j) {
    for (int k = 1; k <= shape.cores; ++k) {
      links.push_back(spine_to_core(j, k));
      links.push_back(core_to_spine(j, k));
    }
  }
  return links;
}

// The fabric lab's topology file, as fabric-lab.sh topology-file writes it (with cores, a third tier).
inline FabricTopology lab_topology(const LeafSpineShape& shape) {
  std::string yaml = "devices:\n";
  for (int j = 1; j <= shape.all_spines(); ++j) {
    yaml += fmt::format("  s{}:\n    interfaces:\n", j);
    const int pod = (j - 1) / shape.spines + 1;
    for (int i = (pod - 1) * shape.leaves + 1; i <= pod * shape.leaves; ++i)
      yaml += fmt::format("      l{}: {}\n", i, spine_end(i, j));
    for (int k = 1; k <= shape.cores; ++k) yaml += fmt::format("      c{}: {}\n", k, spine_up_end(j, k));
  }
  for (int k = 1; k <= shape.cores; ++k) {
    yaml += fmt::format("  c{}:\n    interfaces:\n", k);
    for (int j = 1; j <= shape.all_spines(); ++j) yaml += fmt::format("      s{}: {}\n", j, core_end(j, k));
  }
  for (int i = 1; i <= shape.all_leaves(); ++i) {
    const int first_spine = (shape.pod_of_leaf(i) - 1) * shape.spines;
    yaml += fmt::format("  l{}:\n    interfaces:\n      hosts: {}\n", i, gateway(i));
    for (int j = first_spine + 1; j <= first_spine + shape.spines; ++j)
      yaml += fmt::format("      s{}: {}\n", j, leaf_end(i, j));
    for (int h = 1; h <= shape.hosts; ++h) yaml += fmt::format("      h{}: ~\n", h);
    for (int h = 1; h <= shape.hosts; ++h) {
      yaml += fmt::format("  l{}h{}:\n    interfaces:\n      port: {}\n", i, h, host_address(i, h));
    }
  }
  yaml += "links:\n";
  for (int i = 1; i <= shape.all_leaves(); ++i) {
    const int first_spine = (shape.pod_of_leaf(i) - 1) * shape.spines;
    for (int j = first_spine + 1; j <= first_spine + shape.spines; ++j) {
      yaml += fmt::format("  - ends: l{0}:s{1} <-> s{1}:l{0}\n    cable: C-l{0}-s{1}\n", i, j);
    }
    for (int h = 1; h <= shape.hosts; ++h) yaml += fmt::format("  - l{0}h{1}:port <-> l{0}:h{1}\n", i, h);
  }
  for (int j = 1; j <= (shape.cores > 0 ? shape.all_spines() : 0); ++j) {
    for (int k = 1; k <= shape.cores; ++k)
      yaml += fmt::format("  - ends: s{0}:c{1} <-> c{1}:s{0}\n    cable: C-s{0}-c{1}\n", j, k);
  }
  return load_topology_text(yaml, "lab.yaml");
}

}  // namespace tusk::testing
