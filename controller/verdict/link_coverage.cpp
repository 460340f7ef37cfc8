#include "controller/verdict/link_coverage.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <vector>

#include "controller/verdict/flow_table.hpp"

namespace tusk {
namespace {

std::string direction_name(const TopologyLink& link, bool reversed) {
  const LinkEnd& out = reversed ? link.b : link.a;
  const LinkEnd& in = reversed ? link.a : link.b;
  return link.cable.empty() ? fmt::format("{} -> {}", out.text(), in.text())
                            : fmt::format("{} -> {}, cable {}", out.text(), in.text(), link.cable);
}

}  // namespace

double LinkCoverage::share() const {
  return links == 0 ? 0 : static_cast<double>(forward + backward) / static_cast<double>(2 * links);
}

std::string LinkCoverage::text() const {
  std::string line = fmt::format(
      "link coverage {:.4g}%: {} of {} links crossed both ways ({} one way a -> b, {} b -> a); flows per "
      "direction min {}, median {:g}",
      share() * 100, both_ways, links, forward, backward, flows_min, flows_median);
  if (!never.empty()) {
    const std::size_t shown = std::min<std::size_t>(never.size(), 8);
    line +=
        fmt::format("; never crossed: {}{}", fmt::join(never.begin(), never.begin() + static_cast<long>(shown), "; "),
                    never.size() > shown ? fmt::format(" and {} more", never.size() - shown) : "");
  }
  if (partial_paths > 0) {
    line += fmt::format(" ({} of {} traces missed a hop: links past it are not counted)", partial_paths, flows);
  }
  return line;
}

std::optional<LinkCoverage> link_coverage(const Localisation& localisation, const FabricTopology* topology) {
  if (!topology || topology->links().empty() || !localisation.flows ||
      (localisation.flows->empty() && localisation.flows->clean_flows() == 0)) {
    return std::nullopt;
  }
  const FlowTable& table = *localisation.flows;
  std::vector<std::size_t> flows_by_link(table.link_count());
  LinkCoverage coverage;
  for (std::size_t f = 0; f < table.size(); ++f) {
    ++coverage.flows;
    if (!table[f].has(FlowRecord::kReached)) ++coverage.partial_paths;
    for (const std::uint32_t link : table.links_of(f)) ++flows_by_link[link];
  }
  // And the clean flows a schedule summed rather than kept.
  coverage.flows += table.clean_flows();
  coverage.partial_paths += table.clean_partial_paths();
  std::map<std::string, std::size_t> flows_by_key;
  for (std::uint32_t link = 0; link < table.link_count(); ++link) {
    flows_by_key[table.link(link).named.key] += flows_by_link[link] + table.link(link).clean_flows();
  }
  const auto& links = topology->links();
  coverage.links = links.size();
  std::vector<std::size_t> per_direction;
  per_direction.reserve(2 * links.size());
  for (const auto& link : links) {
    bool crossed[2] = {false, false};
    for (const bool reversed : {false, true}) {
      const std::string key = reversed ? fmt::format("{} -> {}", link.b.text(), link.a.text())
                                       : fmt::format("{} -> {}", link.a.text(), link.b.text());
      const auto found = flows_by_key.find(key);
      const std::size_t flows = found == flows_by_key.end() ? 0 : found->second;
      per_direction.push_back(flows);
      crossed[reversed] = flows > 0;
      if (flows == 0) coverage.never.push_back(direction_name(link, reversed));
    }
    coverage.forward += crossed[0];
    coverage.backward += crossed[1];
    coverage.both_ways += crossed[0] && crossed[1];
  }
  std::sort(per_direction.begin(), per_direction.end());
  coverage.flows_min = per_direction.front();
  const std::size_t n = per_direction.size();
  coverage.flows_median = n % 2 == 1 ? static_cast<double>(per_direction[n / 2])
                                     : (static_cast<double>(per_direction[n / 2 - 1]) + per_direction[n / 2]) / 2;
  return coverage;
}

std::optional<std::string> coverage_problem(const std::optional<LinkCoverage>& coverage, double min_share) {
  if (!coverage) {
    return fmt::format(
        "min_link_coverage {:.4g}%: coverage is unknown: it needs the topology file (run --topology) and flows "
        "whose paths were traced",
        min_share * 100);
  }
  if (coverage->share() + 1e-12 >= min_share) return std::nullopt;
  return fmt::format("{}, below min_link_coverage {:.4g}%", coverage->text(), min_share * 100);
}

}  // namespace tusk
