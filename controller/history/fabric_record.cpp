#include "controller/history/fabric_record.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace tusk {
namespace {

// The state of one entry from its runs, oldest first.
void judge(FabricEntry& entry, const FabricSettings& settings) {
  const auto& runs = entry.runs;
  entry.blames = static_cast<int>(std::count_if(runs.begin(), runs.end(), [](const FabricRun& r) { return r.blamed; }));
  if (entry.blames == 0) {
    entry.state = "clean";
    entry.why = fmt::format("exercised by {} run{}, blamed by none", runs.size(), runs.size() == 1 ? "" : "s");
    if (!runs.empty()) entry.rests_on = {runs.back().run_id};
    return;
  }
  // Its last `repeat_window` runs.
  const std::size_t window = std::min<std::size_t>(runs.size(), static_cast<std::size_t>(settings.repeat_window));
  std::vector<std::string> blamed_in_window;
  for (std::size_t i = runs.size() - window; i < runs.size(); ++i) {
    if (runs[i].blamed) blamed_in_window.push_back(runs[i].run_id);
  }
  // A blame that came after a repair (clean_to_repair clean runs or more after an earlier blame).
  std::optional<std::size_t> returned_fault;
  std::optional<std::size_t> last_blame;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (!runs[i].blamed) continue;
    if (last_blame && i - *last_blame - 1 >= static_cast<std::size_t>(settings.clean_to_repair)) returned_fault = i;
    last_blame = i;
  }
  const std::size_t clean_since = runs.size() - *last_blame - 1;
  if (static_cast<int>(blamed_in_window.size()) >= settings.repeat_blames) {
    entry.state = "repeat offender";
    entry.why = fmt::format("blamed in {} of its last {} runs", blamed_in_window.size(), window);
    entry.rests_on = blamed_in_window;
    return;
  }
  std::vector<std::string> since;
  for (std::size_t i = *last_blame; i < runs.size(); ++i) since.push_back(runs[i].run_id);
  const bool repaired = clean_since >= static_cast<std::size_t>(settings.clean_to_repair);
  if (!repaired && returned_fault == last_blame) {
    entry.state = "repeat offender";
    entry.why = fmt::format("its fault came back in {} after it had been clean", runs[*returned_fault].run_id);
    entry.rests_on = since;
    return;
  }
  entry.rests_on = since;
  if (repaired) {
    entry.state = "repaired";
    entry.why = fmt::format("blamed in {}, clean in the {} runs since", runs[*last_blame].run_id, clean_since);
  } else {
    entry.state = "suspect";
    entry.why = clean_since == 0
                    ? fmt::format("blamed by the last run that exercised it, {}", runs.back().run_id)
                    : fmt::format("blamed in {}, clean in {} run{} since ({} needed)", runs[*last_blame].run_id,
                                  clean_since, clean_since == 1 ? "" : "s", settings.clean_to_repair);
  }
}

// Entries in the order people read them: the worst state first, then by name.
void order(std::vector<FabricEntry>& entries) {
  std::stable_sort(entries.begin(), entries.end(), [](const FabricEntry& a, const FabricEntry& b) {
    if (state_rank(a.state) != state_rank(b.state)) return state_rank(a.state) < state_rank(b.state);
    return a.name < b.name;
  });
}

}  // namespace

int state_rank(const std::string& state) {
  if (state == "repeat offender") return 0;
  if (state == "suspect") return 1;
  if (state == "repaired") return 2;
  return 3;
}

FabricRecord fabric_record(const std::vector<LinkTrendRow>& links, const std::vector<HostRunRow>& hosts,
                           const FabricSettings& settings) {
  FabricRecord record;
  std::set<std::string> seen_runs;
  const auto note_run = [&](const RunRow& run) {
    if (seen_runs.insert(run.run_id).second) record.runs.push_back(run.run_id);
  };
  // Rows arrive oldest run first; a link in several tests of one run is one run's word, blamed
  // where any test blamed it.
  std::map<std::string, std::size_t> link_at;
  for (const auto& [run, link] : links) {
    note_run(run);
    auto [at, added] = link_at.try_emplace(link.key, record.links.size());
    if (added) record.links.push_back({link.key, link.name, {}, 0, "", "", {}});
    FabricEntry& entry = record.links[at->second];
    if (link.role == "suspect" || entry.name == entry.key) entry.name = link.name;
    if (entry.runs.empty() || entry.runs.back().run_id != run.run_id) {
      entry.runs.push_back({run.run_id, run.started_ns, false, "", std::nullopt, "", 0, 0});
    }
    FabricRun& word = entry.runs.back();
    word.failing += link.failing_flows;
    word.of += link.flows;
    if (link.role == "suspect" && !word.blamed) {
      word.blamed = true;
      word.kind = link.kind;
      word.rate = link.rate;
      word.confidence = link.confidence;
    }
  }
  std::map<std::string, std::size_t> host_at;
  for (const auto& host : hosts) {
    note_run(host.run);
    auto [at, added] = host_at.try_emplace(host.agent, record.hosts.size());
    if (added) record.hosts.push_back({host.agent, host.agent, {}, 0, "", "", {}});
    record.hosts[at->second].runs.push_back(
        {host.run.run_id, host.run.started_ns, host.failing > 0, "", std::nullopt, "", host.failing, host.streams});
  }
  for (auto* entries : {&record.links, &record.hosts}) {
    for (auto& entry : *entries) judge(entry, settings);
    order(*entries);
  }
  return record;
}

}  // namespace tusk
