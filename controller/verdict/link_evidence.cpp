#include "controller/verdict/link_evidence.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/units.hpp"

namespace tusk {
namespace {

// How many standard errors the share x2/n2 lies above x1/n1 (a two-proportion z-test).
double two_proportion_z(std::uint64_t n1, std::uint64_t x1, std::uint64_t n2, std::uint64_t x2) {
  if (n2 == 0) return 0;
  const double p2 = static_cast<double>(x2) / static_cast<double>(n2);
  if (n1 == 0) {  // against a perfect "before": how many standard errors p2 is above 0
    if (x2 == 0) return 0;
    return p2 / std::sqrt(std::max(p2 * (1 - p2), 1e-12) / static_cast<double>(n2));
  }
  const double p1 = static_cast<double>(x1) / static_cast<double>(n1);
  const double pooled = static_cast<double>(x1 + x2) / static_cast<double>(n1 + n2);
  const double error =
      std::sqrt(pooled * (1 - pooled) * (1.0 / static_cast<double>(n1) + 1.0 / static_cast<double>(n2)));
  return error > 0 ? (p2 - p1) / error : 0;
}

double share(std::uint64_t part, std::uint64_t whole) {
  return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0;
}

// How many standard errors the deficit x2/n2 - x1/n1 (unanswered here against a hop before) lies
// above the deficit y2/m2 - y1/m1 of other probes.
double deficit_difference_z(std::uint64_t n1, std::uint64_t x1, std::uint64_t n2, std::uint64_t x2, std::uint64_t m1,
                            std::uint64_t y1, std::uint64_t m2, std::uint64_t y2) {
  if (n2 == 0 || m2 == 0) return 0;
  const auto variance = [](std::uint64_t n, std::uint64_t x) {
    if (n == 0) return 0.0;
    const double p = share(x, n);
    return p * (1 - p) / static_cast<double>(n);
  };
  const double difference = (share(x2, n2) - share(x1, n1)) - (share(y2, m2) - share(y1, m1));
  const double error = std::sqrt(variance(n1, x1) + variance(n2, x2) + variance(m1, y1) + variance(m2, y2));
  return error > 0 ? difference / error : 0;
}

std::uint64_t unanswered(std::uint64_t probes, std::uint64_t answers) {
  return probes - std::min(answers, probes);
}

}  // namespace

double ProbeEvidence::lost_share_after() const {
  return probes_after ? 1.0 - share(answers_after, probes_after) : 0;
}

bool ProbeEvidence::loss_is_the_links() const {
  if (!last_answered()) return persist_z >= 2;
  return probes_elsewhere > 0 && elsewhere_z >= 2;
}

double ProbeEvidence::lost_share_before() const {
  if (first_hop || probes_before == 0) return 0;
  return 1.0 - static_cast<double>(answers_before) / static_cast<double>(probes_before);
}

double ProbeEvidence::damaged_share_before() const {
  if (first_hop || answers_before == 0) return 0;
  return static_cast<double>(damaged_before) / static_cast<double>(answers_before);
}

void finish_probe_evidence(ProbeEvidence& p) {
  const std::uint64_t before_probes = p.first_hop ? 0 : p.probes_before;
  p.loss_z = two_proportion_z(before_probes, before_probes - std::min(p.answers_before, before_probes), p.probes,
                              p.probes - std::min(p.answers, p.probes));
  p.persist_z = two_proportion_z(before_probes, before_probes - std::min(p.answers_before, before_probes),
                                 p.probes_after, unanswered(p.probes_after, p.answers_after));
  p.elsewhere_z = deficit_difference_z(before_probes, unanswered(before_probes, p.answers_before), p.probes,
                                       unanswered(p.probes, p.answers), p.probes_elsewhere_before,
                                       unanswered(p.probes_elsewhere_before, p.answers_elsewhere_before),
                                       p.probes_elsewhere, unanswered(p.probes_elsewhere, p.answers_elsewhere));
  const std::uint64_t before_answers = p.first_hop ? 0 : p.answers_before;
  p.damage_z = two_proportion_z(before_answers, p.first_hop ? 0 : p.damaged_before, p.answers, p.damaged);
}

std::string probe_text(const ProbeEvidence& p) {
  if (p.probes == 0) return "no probes";
  std::string text =
      fmt::format("{} of {} probes unanswered here ({}) vs {} a hop before", p.probes - p.answers, p.probes,
                  units::format_percent(p.lost_share()), units::format_percent(p.lost_share_before()));
  if (p.loss_z >= 3 && !p.loss_is_the_links()) {
    if (!p.last_answered()) {
      text += fmt::format(" and {} a hop past it: its router answers fewer probes itself (the frames are not lost)",
                          units::format_percent(p.lost_share_after()));
    } else if (p.probes_elsewhere > 0) {
      text += " and as few to the flows that reach it by its other links: its router answers fewer probes itself";
    } else {
      text +=
          "; no hop past it answers and no other flow reaches it: a router that answers fewer probes looks the same";
    }
  }
  if (p.damaged > 0 || p.damaged_before > 0) {
    text += fmt::format(", {} arrived damaged ({}) vs {}", p.damaged, units::format_percent(p.damaged_share()),
                        units::format_percent(p.damaged_share_before()));
  }
  return text;
}

std::vector<std::string> counter_steps(const CountedDirection& counted, bool confirmed, const std::string& out_end,
                                       const std::string& in_end) {
  std::vector<std::string> steps;
  if (!confirmed) {
    steps.push_back(fmt::format(
        "The switches at its ends counted no loss on it ({} in errors, {} in discards at {}): the frames may be "
        "lost inside a switch past its ingress counters, or on another link the same flows cross; read the drop "
        "counters of {}'s switch and of the next hop.",
        counted.in_errors, counted.in_discards, in_end, in_end));
    return steps;
  }
  if (counted.in_errors > 0) {
    steps.push_back(fmt::format(
        "{} counted {} frames with receive errors (CRC/FCS): the light or signal arriving there is bad. Read the "
        "optics' receive power at {} and transmit power at {} (and FEC counters per lane), then clean or replace "
        "the optic whose power is low.",
        in_end, counted.in_errors, in_end, out_end));
  }
  if (counted.in_discards > 0) {
    steps.push_back(fmt::format(
        "{} discarded {} frames on arrival: damaged frames its MAC dropped, or its ingress buffers or a policy; "
        "read the port's discard reasons, and treat it as a bad cable or optic when no congestion or policy "
        "explains it.",
        in_end, counted.in_discards));
  }
  if (counted.vanished() > 0) {
    steps.push_back(fmt::format(
        "{} of the {} frames {} sent were never counted at {}: they vanish on the cable; reseat or replace the "
        "cable and its connectors.",
        counted.vanished(), counted.sent, out_end, in_end));
  }
  return steps;
}

std::vector<std::string> next_steps(const LinkSuspect& suspect, const NamedLink& named) {
  std::vector<std::string> steps;
  std::string out_end = "the sending end", in_end = "the receiving end";
  if (named.link) {
    out_end = (named.reversed ? named.link->b : named.link->a).text();
    in_end = (named.reversed ? named.link->a : named.link->b).text();
  }
  const bool damage = std::any_of(suspect.faults.begin(), suspect.faults.end(), [](const std::string& m) {
    return m == "ber" || m == "bit_errors" || m == "errored_frames";
  });
  const bool flaps = std::any_of(suspect.faults.begin(), suspect.faults.end(),
                                 [](const std::string& m) { return m == "link_flaps" || m == "traffic_gaps"; });
  if (suspect.counted && suspect.counted->receiver_read) {
    for (auto& step : counter_steps(*suspect.counted, suspect.confirmed_by_counters, out_end, in_end)) {
      steps.push_back(std::move(step));
    }
  } else {
    steps.push_back(
        fmt::format("Read the port counters at both ends: {} transmit (discards, errors) and {} receive "
                    "(CRC/FCS and symbol errors, FEC corrected and uncorrectable{}).",
                    out_end, in_end, damage ? "; rising FEC or CRC counts mean a bad optic or cable" : ""));
  }
  if (flaps) {
    steps.push_back(
        fmt::format("Look for link down/up events on {} and {} in both switches' logs at the times of the "
                    "traffic gaps (and BFD or BGP sessions that flapped with them).",
                    out_end, in_end));
  }
  const std::string cable = named.link && !named.link->cable.empty() ? " " + named.link->cable : "";
  steps.push_back(fmt::format("Inspect and clean the optics at both ends and reseat the cable{}{}.", cable,
                              named.link && named.link->optics.size() == 2
                                  ? fmt::format(" (optics {} and {})", named.link->optics[0], named.link->optics[1])
                                  : ""));
  steps.push_back(
      fmt::format("Swap the optic at {} for a known-good one and test again: if the fault follows the "
                  "optic to its new port, replace the optic; if it stays, replace the cable{}.",
                  in_end, cable));
  steps.push_back(
      fmt::format("Test only the flows through it again: tusk-controller run <profile> --only-through '{}' "
                  "--from <this report.json>.",
                  suspect.key));
  return steps;
}

}  // namespace tusk
