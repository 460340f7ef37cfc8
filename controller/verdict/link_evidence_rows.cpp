#include "controller/verdict/link_evidence_rows.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "common/units.hpp"
#include "controller/verdict/link_evidence.hpp"

namespace tusk {
namespace {

// A cable whichever way it is named: its two ends, the lesser first.
using CableEnds = std::pair<std::string, std::string>;

CableEnds cable_ends(const std::string& one, const std::string& other) {
  return one < other ? CableEnds{one, other} : CableEnds{other, one};
}

// A direction's ends from its key ("l1:s2 -> s2:l1"); none for one named otherwise.
std::optional<CableEnds> cable_ends_of_key(const std::string& key) {
  const auto arrow = key.find(" -> ");
  if (arrow == std::string::npos) return std::nullopt;
  return cable_ends(key.substr(0, arrow), key.substr(arrow + 4));
}

std::string flows_text(const LinkSuspect& suspect) {
  const std::size_t flows = suspect.failing.size() + suspect.passing.size();
  if (suspect.kind == FaultKind::Failure) {
    return fmt::format("{} of {} flows through it failing", suspect.failing.size(), flows);
  }
  return fmt::format("{} {} ({} to {}), {} of {} flows through it failing", to_string(suspect.kind),
                     units::format_percent(suspect.rate), units::format_percent(suspect.rate_low),
                     units::format_percent(suspect.rate_high), suspect.failing.size(), flows);
}

std::string optics_findings_text(const PortOpticsOutcome& port) {
  std::string text;
  for (const auto& finding : port.verdict.findings) {
    text += fmt::format("{}{}: {}", text.empty() ? "" : "; ", port_optics_title(port), finding.text);
  }
  return text;
}

// What the optics at a host end say to do first: a lane that receives too little light is cleaned
// at that end, then its optic swapped; anything else as its finding says.
std::string optics_step(const PortOpticsOutcome& port) {
  const OpticsFinding* first = nullptr;
  for (const auto& finding : port.verdict.findings) {
    if (finding.what == OpticsMeasure::rx_power_dbm && finding.measured && finding.limit &&
        *finding.measured < *finding.limit) {
      return fmt::format(
          "Clean the fibre and the optic at {} ({}), whose lane {} receives too little light; if it stays low, swap "
          "the optic at {}, whose transmitter feeds it, then the cable.",
          port.end.empty() ? port_optics_title(port) : port.end, port_optics_title(port),
          finding.lane ? std::to_string(*finding.lane) : std::string("?"),
          port.far_end.empty() ? std::string("the far end") : port.far_end);
    }
    if (!first || (finding.severity == OpticsSeverity::failure && first->severity != OpticsSeverity::failure)) {
      first = &finding;
    }
  }
  return first ? fmt::format("{}: {}", port_optics_title(port), first->text) : std::string();
}

class RowTable {
 public:
  LinkEvidenceRow& row(const std::optional<CableEnds>& cable, const std::string& name) {
    if (cable) {
      const auto [at, added] = by_cable_.try_emplace(*cable, rows_.size());
      if (!added) return rows_[at->second];
    }
    rows_.push_back({});
    rows_.back().link = name;
    return rows_.back();
  }
  bool has(const CableEnds& cable) const { return by_cable_.contains(cable); }
  std::vector<LinkEvidenceRow> take() { return std::move(rows_); }

 private:
  std::vector<LinkEvidenceRow> rows_;
  std::map<CableEnds, std::size_t> by_cable_;
};

void append(std::string& text, const std::string& more) {
  if (more.empty()) return;
  if (!text.empty()) text += "; ";
  text += more;
}

}  // namespace

std::vector<LinkEvidenceRow> link_evidence_rows(const Localisation& localisation, const SwitchCounterEvidence& counters,
                                                const std::vector<PortOpticsOutcome>& optics) {
  RowTable table;
  // The cables' own names, from the counters' cables (both ends and the cable's label).
  std::map<CableEnds, std::string> cable_names;
  for (const auto& link : counters.links)
    cable_names.try_emplace(cable_ends(link.a_end.text(), link.b_end.text()), link.name);
  const auto name_of = [&](const std::optional<CableEnds>& cable, const std::string& fallback) {
    if (!cable) return fallback;
    const auto named = cable_names.find(*cable);
    return named != cable_names.end() ? named->second : fallback;
  };

  for (const auto& suspect : localisation.suspects) {
    const auto cable = cable_ends_of_key(suspect.key);
    LinkEvidenceRow& row = table.row(cable, name_of(cable, suspect.name));
    append(row.flows, flows_text(suspect));
    append(row.probes, suspect.probes.probes > 0 ? probe_text(suspect.probes) : std::string());
    row.failing |= suspect.confidence != Confidence::Low;
    if (row.next_step.empty() && !suspect.next_steps.empty()) row.next_step = suspect.next_steps.front();
  }
  for (const auto& link : counters.links) {
    const auto cable = cable_ends(link.a_end.text(), link.b_end.text());
    const bool lossy = link.a_to_b.counts_loss() || link.b_to_a.counts_loss();
    if (!lossy && !table.has(cable)) continue;
    LinkEvidenceRow& row = table.row(cable, link.name);
    for (const CountedDirection* d : {&link.a_to_b, &link.b_to_a}) {
      if (!d->receiver_read || (!d->counts_loss() && d->lost() == 0)) continue;
      append(row.counters, fmt::format("{}: {}", d->key, d->counts_text()));
      if (!d->counts_loss()) continue;
      row.failing = true;
      if (row.next_step.empty()) {
        const auto arrow = d->key.find(" -> ");
        const auto steps = counter_steps(*d, true, d->key.substr(0, arrow),
                                         arrow == std::string::npos ? d->key : d->key.substr(arrow + 4));
        if (!steps.empty()) row.next_step = steps.front();
      }
    }
  }
  for (const auto& port : optics) {
    if (port.verdict.findings.empty()) continue;
    const std::optional<CableEnds> cable =
        port.end.empty() ? std::nullopt : std::optional<CableEnds>(cable_ends(port.end, port.far_end));
    const std::string placed =
        cable ? fmt::format("{} <-> {}{}{}", port.end, port.far_end, port.cable.empty() ? "" : ", cable ", port.cable)
              : port_optics_title(port);
    LinkEvidenceRow& row = table.row(cable, name_of(cable, placed));
    append(row.optics, optics_findings_text(port));
    row.failing |= port.verdict.failed();
    // A failing optic names the end to work on: it goes first; a warning only where nothing else spoke.
    if (const std::string step = optics_step(port); !step.empty() && (port.verdict.failed() || row.next_step.empty())) {
      row.next_step = step;
    }
  }
  return table.take();
}

}  // namespace tusk
