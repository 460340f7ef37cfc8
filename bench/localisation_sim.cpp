// How well localisation names the bad links when several fail at once: random fault sets on a
// modelled leaf-spine fabric of two or three tiers (tests/support/leaf_spine_model.hpp), every host
// to every other (or to --peers of them, spread over the fabric) with traced flows, each flow's frames and probes drawn
// at random through the faulty links it crosses; then localise() and a score of what it named against what was broken.
// Prints, per number of faults, precision and recall over all sets, the false suspects per run, how often the first k
// of what it ranked were exactly the k faults, the time one localisation took and the process's peak RSS. With floors
// it exits 1 when a figure is under one: CI runs a small one.
//
//   localisation_sim [--leaves 4] [--spines 2] [--hosts 2] [--flows 4] [--faults 1,2,4,8]
//                    [--pods 1] [--cores 0] [--peers 0] [--coverage P] [--sets 100] [--seed 1]
//                    [--frames 100000] [--noise SHARE] [--windows 1] [--timing steady|mixed]
//                    [--min-windows-right S] [--policing P]
//                    [--min-precision P] [--min-recall R] [--larger-margin 0.03] [--max-noise-sets N] [--show N]
//
// A fault is one directed link (fabric or a host's cable) losing or corrupting a share of what
// crosses it, drawn log-uniformly from 0.1 % to 5 %. A flow fails when it lost or damaged any
// frame. Localisation names suspects of medium or high confidence (a suspect is right when it or a
// link tied to it, which nothing tells apart from it, is broken) and hosts (right when the host's
// cable is broken in either direction); precision counts what it named, recall the broken links
// covered. With --noise every link also loses and damages a little, under the noise floor (a healthy
// link's background); --faults 0 then counts the sets in which anything at all was named. With
// --windows the test is counted window by window and localised in time; --timing mixed makes some
// faults late or intermittent, and "windows right" is the share of those named with exactly the
// windows they were at fault in (the first, the last and how many). With --policing every router
// (and destination) answers each sender's probes at a share of its own, drawn from P to 1: ICMP
// policing per destination, which must never name a link.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <sys/resource.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "controller/engines/ecmp_coverage.hpp"
#include "controller/verdict/flow_windows.hpp"
#include "controller/verdict/link_localisation.hpp"
#include "tests/support/leaf_spine_model.hpp"

namespace {

using namespace tusk;
using testing::LeafSpineShape;

struct LinkFault {
  std::string link;
  bool corrupts = false;  // else it loses
  double rate = 0;
  std::vector<bool> on;  // the windows it is at fault in: all of them (steady), from one on (late), or some
  bool steady() const {
    return std::all_of(on.begin(), on.end(), [](bool b) { return b; });
  }
};

std::uint64_t draw(std::mt19937_64& rng, std::uint64_t trials, double p) {
  if (trials == 0 || p <= 0) return 0;
  return std::binomial_distribution<std::uint64_t>(trials, std::min(p, 1.0))(rng);
}

// The streams of one run with `faults`: per ordered host pair, shape.flows flows, each hashed to
// a spine by its source port; the sender's stream carries the path trace, the receiver's the
// counts and the verdict.
// Each host's peers: every other host, or `peers` of them spread over the fabric (host s sends to
// s + 1 + k * n / peers), as a plan that covers a large fabric in rounds sends in one round.
std::vector<std::vector<std::size_t>> peers_of(std::size_t hosts, int peers) {
  std::vector<std::vector<std::size_t>> out(hosts);
  for (std::size_t s = 0; s < hosts; ++s) {
    if (peers <= 0 || static_cast<std::size_t>(peers) >= hosts - 1) {
      for (std::size_t d = 0; d < hosts; ++d) {
        if (d != s) out[s].push_back(d);
      }
      continue;
    }
    const std::size_t step = std::max<std::size_t>(1, (hosts - 1) / static_cast<std::size_t>(peers));
    for (int k = 0; k < peers; ++k) out[s].push_back((s + 1 + static_cast<std::size_t>(k) * step) % hosts);
  }
  return out;
}

// What crosses each link meets: the share it loses and the share it damages (faults and noise).
using LinkRates = std::map<std::string, std::pair<double, double>>;

// Window by window.
std::vector<LinkRates> rates_of(const std::vector<LinkFault>& faults, const LinkRates& noise, std::size_t windows) {
  std::vector<LinkRates> rates(windows, noise);
  for (std::size_t w = 0; w < windows; ++w) {
    for (const auto& fault : faults) {
      if (!fault.on[w]) continue;
      auto& [loses, damages] = rates[w][fault.link];
      (fault.corrupts ? damages : loses) += fault.rate;
    }
  }
  return rates;
}

// When a fault is at fault: steady, or with `mixed` a third each steady, late (from a window on) and
// intermittent (each window with a chance of a fifth to a half, in one at least).
std::vector<bool> timing_of(std::size_t windows, bool mixed, std::mt19937_64& rng) {
  std::vector<bool> on(windows, true);
  if (!mixed || windows < 2) return on;
  const int kind = std::uniform_int_distribution<int>(0, 2)(rng);
  if (kind == 1) {
    const std::size_t from = std::uniform_int_distribution<std::size_t>(1, windows - 1)(rng);
    for (std::size_t w = 0; w < from; ++w) on[w] = false;
  } else if (kind == 2) {
    const double chance = std::uniform_real_distribution<double>(0.2, 0.5)(rng);
    for (std::size_t w = 0; w < windows; ++w) on[w] = std::bernoulli_distribution(chance)(rng);
    if (std::none_of(on.begin(), on.end(), [](bool b) { return b; }))
      on[std::uniform_int_distribution<std::size_t>(0, windows - 1)(rng)] = true;
    if (std::all_of(on.begin(), on.end(), [](bool b) { return b; })) on[0] = false;
  }
  return on;
}

// Whether `windows` are the fault's: the first and last it was at fault in, and how many.
bool windows_right(const std::optional<SuspectWindows>& windows, const LinkFault& fault) {
  if (!windows) return false;
  std::uint32_t first = 0, last = 0, count = 0;
  for (std::uint32_t w = 0; w < fault.on.size(); ++w) {
    if (!fault.on[w]) continue;
    if (count++ == 0) first = w;
    last = w;
  }
  return windows->first == first && windows->last == last && windows->count == count;
}

// With more than one window, each flow's frames are spread evenly over them, each window meets the
// rates it has, and `windows` gets every receiving stream's counts window by window.
std::vector<StreamVerdict> simulate_run(const LeafSpineShape& shape, int peers, const std::vector<LinkRates>& rates,
                                        std::uint64_t frames, double policing, std::mt19937_64& rng,
                                        FlowWindows* windows) {
  constexpr std::uint64_t kProbesPerTtl = 400;
  std::map<std::pair<std::string, std::string>, double> answered;  // by router address and sender
  const auto share_answered = [&](const std::string& router, const std::string& sender) {
    if (policing >= 1) return 1.0;
    const auto [it, added] = answered.try_emplace({router, sender}, 1.0);
    if (added) it->second = std::uniform_real_distribution<double>(policing, 1.0)(rng);
    return it->second;
  };
  const auto hosts = testing::model_hosts(shape);
  const auto peer_lists = peers_of(hosts.size(), peers);
  const std::size_t window_count = rates.size();
  if (windows) {
    *windows = {};
    for (std::size_t w = 0; w < window_count; ++w) {
      windows->start_ms.push_back(w * 1000);
      windows->end_ms.push_back((w + 1) * 1000);
    }
  }
  std::vector<StreamVerdict> streams;
  for (std::size_t s = 0; s < hosts.size(); ++s) {
    const auto& src = hosts[s];
    for (const std::size_t d : peer_lists[s]) {
      const auto& dst = hosts[d];
      for (int k = 0; k < shape.flows; ++k) {
        const int port = 49152 + k;
        const testing::ModelPath path = testing::model_path(shape, src, dst, port);
        const auto& links = path.links;
        const auto& answers = path.answers;

        auto [sent_counts, received_counts] = testing::model_flow_streams(src, dst, port, k + 1);
        StreamVerdict sent;
        sent.agent = src.agent;
        sent.stream = std::move(sent_counts);
        proto::StreamCounters& tx = sent.stream;
        // Per window, what a frame meets up to each hop: reach[w][t] after t + 1 links.
        std::vector<std::vector<double>> reach(window_count), intact(window_count);
        for (std::size_t w = 0; w < window_count; ++w) {
          double r = 1, i = 1;
          for (const auto& link : links) {
            if (const auto met = rates[w].find(link); met != rates[w].end()) {
              r *= 1 - met->second.first;
              i *= 1 - met->second.second;
            }
            reach[w].push_back(r);
            intact[w].push_back(i);
          }
        }
        // A probe of TTL t crosses links 1..t; what it meets there decides its answer (probes are
        // spread over the windows as the frames are).
        for (std::size_t ttl = 1; ttl <= links.size(); ++ttl) {
          double mean_reach = 0, mean_intact = 0;
          for (std::size_t w = 0; w < window_count; ++w) {
            mean_reach += reach[w][ttl - 1] / static_cast<double>(window_count);
            mean_intact += intact[w][ttl - 1] / static_cast<double>(window_count);
          }
          auto& hop = *tx.add_path();
          hop.set_ttl(static_cast<std::uint32_t>(ttl));
          hop.set_address(answers[ttl - 1]);
          hop.set_probes(kProbesPerTtl);
          hop.set_answers(draw(rng, kProbesPerTtl, mean_reach * share_answered(answers[ttl - 1], src.agent)));
          hop.set_damaged(draw(rng, hop.answers(), 1 - mean_intact));
          hop.set_destination(ttl == links.size());
        }
        streams.push_back(sent);

        std::uint64_t lost = 0, damaged = 0;
        std::vector<WindowCounts> counts;
        for (std::size_t w = 0; w < window_count; ++w) {
          const std::uint64_t sent_here = frames / window_count + (w + 1 == window_count ? frames % window_count : 0);
          WindowCounts in;
          in.lost = draw(rng, sent_here, 1 - reach[w].back());
          in.received = sent_here - in.lost;
          in.damaged = draw(rng, in.received, 1 - intact[w].back());
          lost += in.lost;
          damaged += in.damaged;
          counts.push_back(in);
        }
        if (windows) {
          windows->by_stream.resize(streams.size() + 1);
          windows->by_stream.back() = std::move(counts);
        }
        StreamVerdict received;
        received.agent = dst.agent;
        received.stream = std::move(received_counts);
        (*received.stream.mutable_counters())["rx_frames"] = frames - lost;
        (*received.stream.mutable_counters())["lost_frames"] = lost;
        (*received.stream.mutable_counters())["errored_frames"] = damaged;
        ThresholdCheck loss_check;
        loss_check.threshold.metric = "lost_frames";
        loss_check.measured = static_cast<double>(lost);
        loss_check.passed = lost == 0;
        ThresholdCheck damage_check;
        damage_check.threshold.metric = "errored_frames";
        damage_check.measured = static_cast<double>(damaged);
        damage_check.passed = damaged == 0;
        received.checks = {loss_check, damage_check};
        streams.push_back(received);
      }
    }
  }
  return streams;
}

// What localisation named, best first: the hosts it blamed (each for both directions of its
// cable), then its suspects in rank order (each with the links tied to it, which nothing tells
// apart from it). `named` says whether it names the item, rather than only ranking it.
struct Named {
  std::set<std::string> links;
  bool named = false;
  std::optional<SuspectWindows> windows;
};

std::vector<Named> ranked_items(const Localisation& found, const LeafSpineShape& shape) {
  std::vector<Named> items;
  for (const auto& host : found.hosts) {
    const auto cable = testing::host_cable(shape, host.agent);
    if (!cable.empty()) items.push_back({{cable.begin(), cable.end()}, true, host.windows});
  }
  for (const auto& suspect : found.suspects) {
    Named item{{suspect.key}, suspect.confidence != Confidence::Low, suspect.windows};
    item.links.insert(suspect.tied.begin(), suspect.tied.end());
    items.push_back(std::move(item));
  }
  return items;
}

bool covers(const Named& item, const std::set<std::string>& broken) {
  return std::any_of(item.links.begin(), item.links.end(), [&](const auto& link) { return broken.count(link) > 0; });
}

struct Score {
  std::uint64_t faults = 0, found = 0, named = 0, correct = 0, exact_top_k = 0, sets = 0;
  std::uint64_t sets_with_false_suspect = 0;       // any suspect or host, of any confidence, on no broken link
  std::uint64_t timed_found = 0, timed_right = 0;  // late or intermittent faults named, and with their windows
  double seconds = 0;
};

}  // namespace

int main(int argc, char** argv) {
  LeafSpineShape shape{4, 2, 2, 4};
  int peers = 0;
  double coverage = 0;
  std::vector<int> fault_counts{1, 2, 4, 8};
  int sets = 100;
  std::uint64_t seed = 1, frames = 100'000;
  int show = 0;
  double min_precision = 0, min_recall = 0, larger_margin = 0.03;
  double noise = 0;
  int max_noise_sets = -1;
  std::size_t window_count = 1;
  std::string timing = "steady";
  double min_windows_right = 0;
  double policing = 1;
  CLI::App app{"localisation_sim: random fault sets on a modelled leaf-spine fabric, scored"};
  app.add_option("--leaves", shape.leaves, "leaf switches")->check(CLI::Range(2, 64))->capture_default_str();
  app.add_option("--spines", shape.spines, "spine switches")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--hosts", shape.hosts, "hosts per leaf")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--pods", shape.pods, "pods of leaves and spines (more than 1 needs --cores)")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  app.add_option("--cores", shape.cores, "core switches above the spines, each cabled to every spine (0: two tiers)")
      ->check(CLI::Range(0, 16))
      ->capture_default_str();
  app.add_option("--coverage", coverage,
                 "flows per host pair as the planner picks them: enough that every equal-cost path between "
                 "two hosts carries one with this probability (overrides --flows)")
      ->check(CLI::Range(0.5, 0.999999));
  app.add_option("--peers", peers, "hosts each host sends to, spread over the fabric (0: every other host)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  app.add_option("--flows", shape.flows, "flows per ordered host pair")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--faults", fault_counts, "faulty links per set, one figure each (at most every link)")
      ->check(CLI::Range(0, 1'000'000))
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--sets", sets, "random fault sets per fault count")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--seed", seed, "of the random draws")->capture_default_str();
  app.add_option("--frames", frames, "frames each flow sends")
      ->check(CLI::Range(1, 1'000'000'000))
      ->capture_default_str();
  app.add_option("--noise", noise,
                 "every link also loses and damages frames at a healthy rate: each drawn from a tenth of this "
                 "share of the noise floor to this share (0: none)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--max-noise-sets", max_noise_sets,
                 "exit 1 when more sets of no fault (--faults 0) than this name any suspect or host, of any confidence")
      ->check(CLI::Range(0, 1'000'000));
  app.add_option("--windows", window_count,
                 "windows the test is counted in (each flow's frames spread evenly), localised each on its own "
                 "(1: the test as a whole only)")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--timing", timing,
                 "when faults are at fault: steady, or mixed (a third each steady, late and intermittent)")
      ->check(CLI::IsMember({"steady", "mixed"}))
      ->capture_default_str();
  app.add_option("--min-windows-right", min_windows_right,
                 "exit 1 when the share of late and intermittent faults named with exactly their windows is under this")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--show", show, "print this many sets where a fault was missed or a healthy link named")
      ->capture_default_str();
  app.add_option("--policing", policing,
                 "every router answers each sender's probes at a share of its own, drawn from this to 1 (1: all)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  app.add_option("--min-precision", min_precision, "exit 1 when precision with 1 or 2 faults is under this")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-recall", min_recall, "exit 1 when recall with 1 or 2 faults is under this")
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--larger-margin", larger_margin, "how far under the floors sets of more than 2 faults may fall")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  if (coverage > 0) {
    // Between pods a flow has spines × cores × spines paths; within a pod, spines.
    const auto paths =
        static_cast<std::uint32_t>(shape.pods > 1 ? shape.spines * shape.cores * shape.spines : shape.spines);
    shape.flows = static_cast<int>(flows_for_coverage(paths, coverage));
  }
  if (shape.pods > 1 && shape.cores == 0) {
    fmt::print(stderr, "localisation_sim: --pods {} needs --cores: pods reach each other only through cores\n",
               shape.pods);
    return 2;
  }

  const FabricTopology topology = testing::lab_topology(shape);
  const auto links = testing::directed_links(shape);
  const int host_count = shape.all_leaves() * shape.hosts;
  const int peer_count = peers > 0 && peers < host_count - 1 ? peers : host_count - 1;
  fmt::print(
      "localisation_sim: {} pod{} of {} leaves x {} spines{}, {} hosts, {} peers each, {} flows per host pair ({} "
      "flows), {} links, seed {}\n",
      shape.pods, shape.pods == 1 ? "" : "s", shape.leaves, shape.spines,
      shape.cores > 0 ? fmt::format(", {} cores", shape.cores) : "", host_count, peer_count, shape.flows,
      host_count * peer_count * shape.flows, links.size(), seed);
  if (noise > 0) {
    fmt::print("noise: every link loses {:.2g}..{:.2g} and damages {:.2g}..{:.2g} of its frames\n",
               NoiseFloor::kDefaultLoss * noise / 10, NoiseFloor::kDefaultLoss * noise,
               NoiseFloor::kDefaultDamage * noise / 10, NoiseFloor::kDefaultDamage * noise);
  }
  if (window_count > 1) fmt::print("windows: {}, faults {}\n", window_count, timing);
  if (policing < 1)
    fmt::print("policing: each router answers each sender {:.0f} % to 100 % of its probes\n", policing * 100);
  fmt::print("{:>7} {:>6} {:>10} {:>8} {:>10} {:>11} {:>12} {:>14} {:>16} {:>9}\n", "faults", "sets", "precision",
             "recall", "false/run", "false sets", "top-k exact", "windows right", "ms/localisation", "peak MiB");
  int below_floor = 0;
  std::mt19937_64 rng(seed);
  for (const int count : fault_counts) {
    if (static_cast<std::size_t>(count) > links.size()) continue;
    Score score;
    for (int set = 0; set < sets; ++set) {
      std::vector<std::string> chosen = links;
      std::shuffle(chosen.begin(), chosen.end(), rng);
      chosen.resize(static_cast<std::size_t>(count));
      std::vector<LinkFault> faults;
      std::uniform_real_distribution<double> log_rate(std::log(1e-3), std::log(5e-2));
      for (const auto& link : chosen) {
        faults.push_back({link, std::bernoulli_distribution(0.5)(rng), std::exp(log_rate(rng)),
                          timing_of(window_count, timing == "mixed", rng)});
      }

      LinkRates background;
      if (noise > 0) {
        // Each link at a healthy rate of its own, from a tenth of `noise` of the floor to `noise` of it.
        std::uniform_real_distribution<double> tenths(0.1, 1.0);
        for (const auto& link : links) {
          background[link] = {NoiseFloor::kDefaultLoss * noise * tenths(rng),
                              NoiseFloor::kDefaultDamage * noise * tenths(rng)};
        }
      }
      FlowWindows windows;
      const auto streams = simulate_run(shape, peers, rates_of(faults, background, window_count), frames, policing, rng,
                                        window_count > 1 ? &windows : nullptr);
      const auto began = std::chrono::steady_clock::now();
      const Localisation found = localise(streams, &topology, nullptr, {}, window_count > 1 ? &windows : nullptr);
      score.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();

      const std::set<std::string> broken(chosen.begin(), chosen.end());
      const auto items = ranked_items(found, shape);
      std::set<std::string> covered;  // broken links some named item covers
      for (const auto& item : items) {
        if (!item.named) continue;
        ++score.named;
        if (!covers(item, broken)) continue;
        ++score.correct;
        for (const auto& link : item.links) {
          if (broken.count(link)) covered.insert(link);
        }
      }
      std::set<std::string> top_covered;
      bool top_all_right = items.size() >= static_cast<std::size_t>(count);
      for (std::size_t i = 0; i < items.size() && i < static_cast<std::size_t>(count); ++i) {
        top_all_right = top_all_right && covers(items[i], broken);
        for (const auto& link : items[i].links) {
          if (broken.count(link)) top_covered.insert(link);
        }
      }
      score.exact_top_k += top_all_right && top_covered == broken;
      score.sets_with_false_suspect +=
          std::any_of(items.begin(), items.end(), [&](const Named& item) { return !covers(item, broken); });
      score.found += covered.size();
      for (const auto& fault : faults) {
        if (fault.steady() || !covered.contains(fault.link)) continue;
        ++score.timed_found;
        score.timed_right += std::any_of(items.begin(), items.end(), [&](const Named& item) {
          return item.named && item.links.contains(fault.link) && windows_right(item.windows, fault);
        });
      }
      if (show > 0 && (covered != broken || std::any_of(items.begin(), items.end(), [&](const Named& item) {
                         return item.named && !covers(item, broken);
                       }))) {
        --show;
        fmt::print("  set {} of {} faults:", set + 1, count);
        for (const auto& fault : faults) {
          std::string when;
          for (const bool on : fault.on) when += on ? '#' : '.';
          fmt::print(" [{} {} {:.2g}{}]", fault.link, fault.corrupts ? "corrupts" : "loses", fault.rate,
                     window_count > 1 ? " " + when : "");
        }
        fmt::print("\n    named:");
        for (const auto& host : found.hosts) fmt::print(" [host {}: {}]", host.agent, host.problem);
        for (const auto& suspect : found.suspects) {
          fmt::print(" [{} {} {} {:.2g} ({:.2g}..{:.2g}){}{}]", suspect.key, to_string(suspect.confidence),
                     to_string(suspect.kind), suspect.rate, suspect.rate_low, suspect.rate_high,
                     suspect.windows ? fmt::format(" windows {}..{} x{}", suspect.windows->first, suspect.windows->last,
                                                   suspect.windows->count)
                                     : "",
                     suspect.tied.empty() ? "" : fmt::format(", tied {}", fmt::join(suspect.tied, " + ")));
        }
        fmt::print("\n");
      }
      score.faults += broken.size();
      ++score.sets;
    }
    const auto share = [](std::uint64_t part, std::uint64_t whole) {
      return whole ? static_cast<double>(part) / static_cast<double>(whole) : 1.0;
    };
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const double precision = share(score.correct, score.named), recall = share(score.found, score.faults);
    const double windows_share = share(score.timed_right, score.timed_found);
    fmt::print("{:>7} {:>6} {:>10.3f} {:>8.3f} {:>10.2f} {:>11} {:>12.3f} {:>14} {:>16.1f} {:>9.0f}\n", count,
               score.sets, precision, recall,
               static_cast<double>(score.named - score.correct) / static_cast<double>(score.sets),
               score.sets_with_false_suspect, share(score.exact_top_k, score.sets),
               score.timed_found ? fmt::format("{:.3f} of {}", windows_share, score.timed_found) : "-",
               1e3 * score.seconds / static_cast<double>(score.sets), static_cast<double>(usage.ru_maxrss) / 1024.0);
    // The floors apply to sets of up to two faults in full and to larger sets less the margin the
    // issue allows them (0.98 and 0.95 by default).
    const double floor_of_count = count <= 2 ? 0 : larger_margin;
    if (precision < min_precision - floor_of_count || recall < min_recall - floor_of_count) {
      fmt::print(stderr, "localisation_sim: {} faults: precision {:.3f} or recall {:.3f} under the floor\n", count,
                 precision, recall);
      ++below_floor;
    }
    if (windows_share < min_windows_right) {
      fmt::print(stderr, "localisation_sim: {} faults: {:.3f} of the late and intermittent faults had their windows\n",
                 count, windows_share);
      ++below_floor;
    }
    if (count == 0 && max_noise_sets >= 0 &&
        score.sets_with_false_suspect > static_cast<std::uint64_t>(max_noise_sets)) {
      fmt::print(stderr, "localisation_sim: {} sets of no fault named a link or host (at most {})\n",
                 score.sets_with_false_suspect, max_noise_sets);
      ++below_floor;
    }
  }
  return below_floor > 0 ? 1 : 0;
}
