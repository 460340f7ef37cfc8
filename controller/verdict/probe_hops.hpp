// What each sender's path-trace probes saw, hop by hop, on every path they took: a tree per sender
// whose nodes are path prefixes (the links crossed so far), each with the probes that expired at its
// last hop and the answers that came back. Two flows of one sender that share a prefix share its
// node, so the tree grows with the paths a fabric has, not with flows or a schedule's steps. Probe
// tomography reads it (probe_twins.hpp): a prefix says which links a probe crossed before it
// expired, and whom it asked for an answer.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

namespace tusk {

struct ProbeHop {
  static constexpr std::uint32_t kFirst = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t parent = kFirst;  // the hop before on the same path; kFirst: the sender's first hop
  std::uint32_t link = 0;         // FlowTable's link into this hop
  std::uint32_t sender = 0;       // FlowTable::agent
  std::uint64_t probes = 0, answers = 0, damaged = 0;  // damaged: answers whose quote shows a flipped bit
};

class ProbeHops {
 public:
  // The hop `link` leads to after `parent` on `sender`'s paths, made when new (counting nothing).
  // A parent always comes before its children.
  std::uint32_t hop(std::uint32_t parent, std::uint32_t link, std::uint32_t sender);
  // Adds what the probes of one flow saw there: counts from the network, bounded; answers never
  // more than probes, damaged never more than answers.
  void add(std::uint32_t hop, std::uint64_t probes, std::uint64_t answers, std::uint64_t damaged = 0);
  // Another table's hops, their links and senders renumbered by `link_of` and `agent_of`.
  void append(const ProbeHops& other, const std::vector<std::uint32_t>& link_of,
              const std::vector<std::uint32_t>& agent_of);

  std::size_t size() const { return hops_.size(); }
  bool empty() const { return hops_.empty(); }
  const ProbeHop& operator[](std::size_t h) const { return hops_[h]; }
  std::size_t bytes() const;

 private:
  struct Key {
    std::uint32_t parent, link, sender;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& key) const;
  };
  std::vector<ProbeHop> hops_;
  std::unordered_map<Key, std::uint32_t, KeyHash> index_;
};

}  // namespace tusk
