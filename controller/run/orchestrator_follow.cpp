// While and after a test runs: following it to its end, checkpoints of the report, stopping every
// agent, and collecting what they sent into the test's outcome.
#include "controller/run/orchestrator.hpp"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <filesystem>
#include <set>
#include <thread>
#include <utility>

#include "common/clock.hpp"
#include "common/counter_names.hpp"
#include "common/heap.hpp"
#include "common/printable.hpp"
#include "common/rates.hpp"
#include "common/units.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/method/fabric_methods.hpp"
#include "controller/method/method_steps.hpp"
#include "controller/metrics/live_metrics.hpp"
#include "controller/plan/planner.hpp"
#include "controller/run/agent_registry.hpp"
#include "controller/run/clock_sync.hpp"
#include "controller/run/hook_command.hpp"
#include "controller/run/progress_line.hpp"
#include "controller/run/run_data.hpp"
#include "controller/run/switch_watch.hpp"
#include "controller/run/test_judgement.hpp"
#include "controller/series/series_file.hpp"
#include "controller/switches/host_lldp.hpp"
#include "controller/switches/switch_poller.hpp"
#include "controller/verdict/unreceived_frames.hpp"

namespace tusk::orchestration {

void Orchestrator::follow_test(int index, const TestSpec& spec, std::int64_t planned_start,
                               const std::vector<AgentPlan>& plans) {
  const std::int64_t end = planned_start + to_ns(spec.duration);
  // The run's first checkpoint as its first test starts (its agents, plans and what was asked),
  // so a controller killed within the first interval still leaves a report; then every interval.
  auto next_checkpoint =
      SteadyClock::now() + (checkpoint_written_ ? options_.checkpoint_every : std::chrono::milliseconds(0));
  // Results follow the end at once; allow for an agent that reconnects just then.
  const std::int64_t deadline = end + 2 * to_ns(options_.control.lease) + 5'000'000'000;
  while (true) {
    std::map<std::string, AgentLink> links;
    for (auto& link : registry_->links()) links.emplace(link.name, std::move(link));
    std::vector<std::string> pending;
    data_.with([&](RunState& s) {
      for (const auto& name : test_agents_) {
        auto& agent = s.tests[{index, name}];
        if (agent.result || agent.lost) continue;
        auto link = links.find(name);
        if (link != links.end() && !link->second.connected && link->second.away_for > options_.lost_after) {
          agent.lost = true;
          s.faults.push_back(
              {realtime_ns(), name, index,
               fmt::format("agent lost: disconnected for more than {}", units::format_duration(options_.lost_after))});
          continue;
        }
        pending.push_back(name);
      }
    });
    if (pending.empty()) return;
    const std::int64_t now = realtime_ns();
    if (now >= deadline || g_interrupted) {
      data_.with([&](RunState& s) {
        for (const auto& name : pending) {
          s.tests[{index, name}].lost = !g_interrupted;
          s.faults.push_back({now, name, index, g_interrupted ? "run interrupted" : "no result by the deadline"});
        }
      });
      return;
    }
    if (!timed_hook_ || !timed_hook_->failed) drive_timed_hook(planned_start, now);
    if (options_.progress_line) progress_.update(progress_text(index, spec, planned_start, links));
    if (options_.checkpoint && options_.checkpoint_every.count() > 0 && SteadyClock::now() >= next_checkpoint &&
        checkpoint_clear_of_hook(timed_hook_due(planned_start), realtime_ns())) {
      checkpoint(index, spec, planned_start, plans);
      next_checkpoint = SteadyClock::now() + options_.checkpoint_every;
    }
    std::this_thread::sleep_for(
        follow_sleep(follow_interval(test_agents_.size()), timed_hook_due(planned_start), realtime_ns()));
  }
}

// A checkpoint as the run begins, before any agent came: a controller killed while it waits for
// them still leaves a report.json that says so (and `report` draws it), not a series file alone.
void Orchestrator::write_start_checkpoint() {
  if (!options_.checkpoint) return;
  hand_over(std::nullopt, realtime_ns(), "no test had started");
}

// A snapshot of the run handed to RunOptions::checkpoint with what every checkpoint says: the
// agents and faults so far, and `where` the run was when it was taken. The finished tests are lent
// to it, not copied (a copy held every finished test twice while the checkpoint was written), and
// given back however the checkpoint ends.
void Orchestrator::hand_over(std::optional<TestOutcome> running, std::int64_t taken_ns, const std::string& where) {
  RunOutcome snapshot;
  {
    std::vector<TestOutcome> finished = std::exchange(outcome_.tests, {});
    snapshot = outcome_;
    snapshot.tests = std::move(finished);
  }
  struct GiveBack {
    RunOutcome& snapshot;
    std::vector<TestOutcome>& tests;
    std::size_t finished;
    ~GiveBack() {
      snapshot.tests.resize(finished);
      tests = std::move(snapshot.tests);
    }
  } give_back{snapshot, outcome_.tests, snapshot.tests.size()};
  if (method_under_way_) snapshot.tests.push_back(method_so_far());
  if (running) snapshot.tests.push_back(std::move(*running));
  snapshot.checkpoint_ns = taken_ns;
  snapshot.agents = registry_->agents();
  snapshot.faults = data_.with([](RunState& s) { return s.faults; });
  snapshot.series_file = series_ ? series_->path() : "";
  snapshot.finished_ns = snapshot.checkpoint_ns;
  snapshot.exit_code = kExitAgentsMissing;
  snapshot.conclusion = fmt::format(
      "incomplete: {} at this checkpoint ({}); no final report was written after it, so the controller was killed "
      "or its host went down",
      where, utc_iso_time(snapshot.checkpoint_ns));
  try {
    options_.checkpoint(snapshot);
  } catch (const std::exception& e) {
    spdlog::warn("checkpoint not written: {}", e.what());
  }
}

// The method test under way as its steps so far make it: their rows and outcomes, not copied (the
// snapshot is written and dropped before the next step is recorded), and incomplete.
TestOutcome Orchestrator::method_so_far() const {
  TestOutcome test;
  test.index = static_cast<int>(method_index_);
  test.spec = profile_.tests[method_index_];
  test.agents = agents_;
  for (const auto& name : agents_) test.per_agent[name] = AgentTestData{};  // its steps have the data
  test.verdict = TestVerdict::Incomplete;
  test.problems.push_back(
      fmt::format("under way: {} step(s) done at this checkpoint; the step running is the "
                  "test after this one",
                  method_under_way_->so_far().steps.size()));
  // Not owned: the method's own result, alive while the checkpoint is written.
  test.method =
      std::shared_ptr<const MethodResult>(std::shared_ptr<const MethodResult>(), &method_under_way_->so_far());
  return test;
}

// The run so far, with the test under way judged on its samples up to now: each agent that has
// no result yet stands in with one made of its streams' latest counters (not completed). The
// series file is committed first, so it holds every sample the checkpoint counts.
void Orchestrator::checkpoint(int index, const TestSpec& spec, std::int64_t planned_start,
                              const std::vector<AgentPlan>& plans) {
  if (series_) series_->flush();
  write_snapshot(index, spec, planned_start, plans);
  checkpoint_written_ = true;
  return_free_heap_pages();
}

void Orchestrator::write_snapshot(int index, const TestSpec& spec, std::int64_t planned_start,
                                  const std::vector<AgentPlan>& plans) {
  const std::int64_t taken_ns = realtime_ns();
  TestOutcome test = collect_data(index, spec, planned_start, plans, Collect::checkpoint);
  judge_test(test, options_.topology.get());
  publish_suspects(test);
  hand_over(std::move(test), taken_ns, fmt::format("still running test {} '{}'", index, spec.name));
}

std::string Orchestrator::progress_text(int index, const TestSpec& spec, std::int64_t planned_start,
                                        const std::map<std::string, AgentLink>& links) {
  const double elapsed = std::max<std::int64_t>(0, realtime_ns() - planned_start) / 1e9;
  const double total = spec.duration.count() / 1e3;
  double rate_bps = 0;
  std::uint64_t errors = 0;
  data_.with([&](RunState& s) {
    for (const auto& name : test_agents_) {
      for (const auto& [id, series] : s.tests[{index, name}].series) {
        rate_bps += series.latest_tx_bps();
        for (auto counter :
             {counters::kBitErrors, counters::kLostFrames, counters::kCompletionErrors, counters::kIntegrityErrors}) {
          errors += series.latest_counter(counter);
        }
      }
    }
  });
  const auto connected = std::count_if(test_agents_.begin(), test_agents_.end(), [&](const std::string& name) {
    auto link = links.find(name);
    return link != links.end() && link->second.connected;
  });
  return fmt::format("[{}/{} {}] {:.1f}/{:.1f} s  {}  errors {}  agents {}/{}{}", index + 1, profile_.tests.size(),
                     spec.name, std::min(elapsed, total), total, units::format_bit_rate(rate_bps), errors, connected,
                     test_agents_.size(), suspects_text_);
}

void Orchestrator::publish_suspects(const TestOutcome& test) {
  if (test.index != first_named_test_) {
    first_named_test_ = test.index;
    first_named_ms_.clear();
  }
  const std::int64_t now_ms = std::max<std::int64_t>(0, realtime_ns() - test.planned_start_ns) / 1'000'000;
  std::vector<LiveSuspect> suspects;
  const auto add = [&](std::string link, std::string kind, std::string confidence,
                       const std::optional<SuspectWindows>& windows) {
    const std::int64_t named_ms = first_named_ms_.try_emplace(link, now_ms).first->second;
    suspects.push_back({std::move(link), std::move(kind), std::move(confidence),
                        windows ? std::optional(static_cast<double>(windows->first_start_ms) / 1e3) : std::nullopt,
                        static_cast<double>(named_ms) / 1e3});
  };
  for (const LinkSuspect& suspect : test.localisation.suspects) {
    add(suspect.key, to_string(suspect.kind), to_string(suspect.confidence), suspect.windows);
  }
  for (const HostSuspect& host : test.localisation.hosts) add("host " + host.agent, host.problem, "", host.windows);
  // A delay is named only five standard errors above its flows' scatter and over the floor.
  for (const DelaySuspect& delay : test.localisation.delays) add(delay.key, "latency", "high", std::nullopt);
  // A link no longer named was a passing suspicion (a first window's start-up loss): named again,
  // it is named anew.
  std::erase_if(first_named_ms_, [&](const auto& named) {
    return std::none_of(suspects.begin(), suspects.end(), [&](const LiveSuspect& s) { return s.link == named.first; });
  });
  suspects_text_ = progress_suspects_text(suspects);
  if (options_.live_metrics) options_.live_metrics->set_suspects(test.index, std::move(suspects));
}

void Orchestrator::stop_all(int index, const std::string& reason) {
  proto::Envelope stop;
  stop.mutable_stop()->set_run_id(outcome_.run_id);
  stop.mutable_stop()->set_test_index(index);
  stop.mutable_stop()->set_reason(reason);
  for (const auto& name : test_agents_) {
    registry_->set_standing_orders(name, {});
    registry_->send(name, stop);
  }
}

TestOutcome Orchestrator::collect(int index, const TestSpec& spec, std::int64_t planned_start,
                                  const std::vector<AgentPlan>& plans, SwitchesRead switches) {
  TestOutcome test = collect_data(index, spec, planned_start, plans, Collect::take);
  test.switches_before = std::move(switches.before);
  test.switches_after = std::move(switches.after);
  test.switch_intervals = std::move(switches.intervals);
  judge_test(test, options_.topology.get());
  publish_suspects(test);
  spdlog::info("test {} '{}': {}{}", index, spec.name, to_string(test.verdict),
               test.start_skew_ns
                   ? ", start skew " + units::format_duration(std::chrono::nanoseconds(*test.start_skew_ns))
                   : "");
  return test;
}

TestOutcome Orchestrator::collect_data(int index, const TestSpec& spec, std::int64_t planned_start,
                                       const std::vector<AgentPlan>& plans, Collect how) {
  TestOutcome test;
  test.index = index;
  test.spec = spec;
  for (const auto& plan : plans) test.plans[plan.agent] = plan.plan;
  test.agents = test_agents_;
  test.planned_start_ns = planned_start;
  if (how == Collect::take) {
    test.per_agent = data_.take_test(index, test_agents_);
  } else {
    RunData::TestSoFar so_far = data_.test_so_far(index, test_agents_);
    test.per_agent = std::move(so_far.per_agent);
    test.lent_series = TestOutcome::LentSeries{so_far.widest_bins,
                                               [this, index](const std::string& agent, const std::string& stream_id) {
                                                 return data_.stream_now(index, agent, stream_id);
                                               }};
  }
  return test;
}

}  // namespace tusk::orchestration
