// A modelled two-tier leaf-spine fabric, addressed and named as the fabric lab is
// (tests/lab/fabric-lab.sh): leaves l1..lN, spines s1..sM, hosts l<i>h<k> on port "port" of their
// leaf's "h<k>", and the topology file that names every link and cable. Localisation's unit tests
// and the localisation simulator (bench/localisation_sim.cpp) model runs on it.
#pragma once

#include <fmt/format.h>

#include <string>
#include <vector>

#include "controller/topology/fabric_topology.hpp"

namespace tusk::testing {

struct LeafSpineShape {
  int leaves = 2, spines = 2, hosts = 2, flows = 8;  // hosts per leaf; flows per ordered host pair
};

inline std::string host_address(int leaf, int host) {
  return fmt::format("192.168.{}.{}", 100 + leaf, 10 + host);
}
inline std::string gateway(int leaf) {
  return fmt::format("192.168.{}.1", 100 + leaf);
}
inline std::string leaf_end(int leaf, int spine) {
  return fmt::format("172.16.{}.{}", leaf, 2 * spine);
}
inline std::string spine_end(int leaf, int spine) {
  return fmt::format("172.16.{}.{}", leaf, 2 * spine + 1);
}

// Directed links by the topology's keys.
inline std::string uplink(int leaf, int spine) {
  return fmt::format("l{0}:s{1} -> s{1}:l{0}", leaf, spine);
}
inline std::string downlink(int leaf, int spine) {
  return fmt::format("s{1}:l{0} -> l{0}:s{1}", leaf, spine);
}
inline std::string host_to_leaf(int leaf, int host) {
  return fmt::format("l{0}h{1}:port -> l{0}:h{1}", leaf, host);
}
inline std::string leaf_to_host(int leaf, int host) {
  return fmt::format("l{0}:h{1} -> l{0}h{1}:port", leaf, host);
}

// The spine a flow's source port hashes to (the same for a flow's frames and its probes).
inline int hashed_spine(const LeafSpineShape& shape, int src_leaf, int src_host, int dst_leaf, int port) {
  return 1 + static_cast<int>((static_cast<unsigned>(port) * 2654435761u + static_cast<unsigned>(src_leaf) * 7 +
                               static_cast<unsigned>(dst_leaf) * 13 + static_cast<unsigned>(src_host)) %
                              static_cast<unsigned>(shape.spines));
}

struct ModelHost {
  std::string agent;  // l<leaf>h<host>
  int leaf = 0, host = 0;
};

inline std::vector<ModelHost> model_hosts(const LeafSpineShape& shape) {
  std::vector<ModelHost> hosts;
  for (int i = 1; i <= shape.leaves; ++i) {
    for (int h = 1; h <= shape.hosts; ++h) hosts.push_back({fmt::format("l{}h{}", i, h), i, h});
  }
  return hosts;
}

// A flow's way from `src` to `dst` through the spine its source port hashes to: the directed links
// it crosses in order, and who answers a probe of each TTL (1 from the first).
struct ModelPath {
  int spine = 0;
  std::vector<std::string> links, answers;
};

inline ModelPath model_path(const LeafSpineShape& shape, const ModelHost& src, const ModelHost& dst, int port) {
  ModelPath path;
  path.spine = hashed_spine(shape, src.leaf, src.host, dst.leaf, port);
  path.links.push_back(host_to_leaf(src.leaf, src.host));
  path.answers.push_back(gateway(src.leaf));
  if (src.leaf != dst.leaf) {
    path.links.push_back(uplink(src.leaf, path.spine));
    path.answers.push_back(spine_end(src.leaf, path.spine));
    path.links.push_back(downlink(dst.leaf, path.spine));
    path.answers.push_back(gateway(dst.leaf));
  }
  path.links.push_back(leaf_to_host(dst.leaf, dst.host));
  path.answers.push_back(host_address(dst.leaf, dst.host));
  return path;
}

// The fabric lab's topology file, as fabric-lab.sh topology-file writes it.
inline FabricTopology lab_topology(const LeafSpineShape& shape) {
  std::string yaml = "devices:\n";
  for (int j = 1; j <= shape.spines; ++j) {
    yaml += fmt::format("  s{}:\n    interfaces:\n", j);
    for (int i = 1; i <= shape.leaves; ++i) yaml += fmt::format("      l{}: {}\n", i, spine_end(i, j));
  }
  for (int i = 1; i <= shape.leaves; ++i) {
    yaml += fmt::format("  l{}:\n    interfaces:\n      hosts: {}\n", i, gateway(i));
    for (int j = 1; j <= shape.spines; ++j) yaml += fmt::format("      s{}: {}\n", j, leaf_end(i, j));
    for (int h = 1; h <= shape.hosts; ++h) yaml += fmt::format("      h{}: ~\n", h);
    for (int h = 1; h <= shape.hosts; ++h) {
      yaml += fmt::format("  l{}h{}:\n    interfaces:\n      port: {}\n", i, h, host_address(i, h));
    }
  }
  yaml += "links:\n";
  for (int i = 1; i <= shape.leaves; ++i) {
    for (int j = 1; j <= shape.spines; ++j) {
      yaml += fmt::format("  - ends: l{0}:s{1} <-> s{1}:l{0}\n    cable: C-l{0}-s{1}\n", i, j);
    }
    for (int h = 1; h <= shape.hosts; ++h) yaml += fmt::format("  - l{0}h{1}:port <-> l{0}:h{1}\n", i, h);
  }
  return load_topology_text(yaml, "lab.yaml");
}

}  // namespace tusk::testing
