#include "controller/verdict/probe_hops.hpp"

#include <algorithm>
#include <stdexcept>

#include "common/wire_bounds.hpp"

namespace tusk {

std::size_t ProbeHops::KeyHash::operator()(const Key& key) const {
  std::uint64_t x = (std::uint64_t{key.parent} << 32 | key.link) * 0x9e3779b97f4a7c15ULL;
  x ^= (x >> 29) + std::uint64_t{key.sender} * 0xbf58476d1ce4e5b9ULL;
  return static_cast<std::size_t>(x ^ (x >> 32));
}

std::uint32_t ProbeHops::hop(std::uint32_t parent, std::uint32_t link, std::uint32_t sender) {
  if (parent != ProbeHop::kFirst && parent >= hops_.size()) throw std::logic_error("a probe hop before its parent");
  // A child's sender is its parent's: only the first hops need it in their key.
  const Key key{parent, link, parent == ProbeHop::kFirst ? sender : 0};
  const auto [it, added] = index_.try_emplace(key, static_cast<std::uint32_t>(hops_.size()));
  if (added) {
    ProbeHop made;
    made.parent = parent;
    made.link = link;
    made.sender = parent == ProbeHop::kFirst ? sender : hops_[parent].sender;
    hops_.push_back(made);
  }
  return it->second;
}

void ProbeHops::add(std::uint32_t hop, std::uint64_t probes, std::uint64_t answers, std::uint64_t damaged) {
  ProbeHop& at = hops_.at(hop);
  probes = std::min(probes, wire::kMaxCount);
  answers = std::min(answers, probes);
  damaged = std::min(damaged, answers);
  at.probes = std::min(at.probes + probes, wire::kMaxCount);
  at.answers = std::min(at.answers + answers, at.probes);
  at.damaged = std::min(at.damaged + damaged, at.answers);
}

void ProbeHops::append(const ProbeHops& other, const std::vector<std::uint32_t>& link_of,
                       const std::vector<std::uint32_t>& agent_of) {
  std::vector<std::uint32_t> mine(other.hops_.size());
  for (std::size_t h = 0; h < other.hops_.size(); ++h) {
    const ProbeHop& theirs = other.hops_[h];
    const std::uint32_t parent = theirs.parent == ProbeHop::kFirst ? ProbeHop::kFirst : mine.at(theirs.parent);
    mine[h] = hop(parent, link_of.at(theirs.link), agent_of.at(theirs.sender));
    add(mine[h], theirs.probes, theirs.answers, theirs.damaged);
  }
}

std::size_t ProbeHops::bytes() const {
  // The index's nodes: a key, a value and a next pointer each, besides its buckets.
  return hops_.capacity() * sizeof(ProbeHop) + index_.size() * (sizeof(Key) + 2 * sizeof(void*)) +
         index_.bucket_count() * sizeof(void*);
}

}  // namespace tusk
