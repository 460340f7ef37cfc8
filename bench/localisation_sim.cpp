// How well localisation names the bad links when several fail at once: random fault sets on a
// modelled leaf-spine fabric (tests/support/leaf_spine_model.hpp), every host to every other with
// traced flows, each flow's frames and probes drawn at random through the faulty links it
// crosses; then localise() and a score of what it named against what was broken. Prints, per
// number of faults, precision and recall over all sets, the false suspects per run, how often the
// first k of what it ranked were exactly the k faults, and the time one localisation took.
//
//   localisation_sim [--leaves 4] [--spines 2] [--hosts 2] [--flows 4] [--faults 1,2,4,8]
//                    [--sets 100] [--seed 1] [--frames 100000]
//
// A fault is one directed link (fabric or a host's cable) losing or corrupting a share of what
// crosses it, drawn log-uniformly from 0.1 % to 5 %. A flow fails when it lost or damaged any
// frame. Localisation names suspects of medium or high confidence (a suspect is right when it or a
// link tied to it, which nothing tells apart from it, is broken) and hosts (right when the host's
// cable is broken in either direction); precision counts what it named, recall the broken links
// covered.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "controller/verdict/link_localisation.hpp"
#include "tests/support/leaf_spine_model.hpp"

namespace {

using namespace tusk;
using testing::LeafSpineShape;

struct LinkFault {
  std::string link;
  bool corrupts = false;  // else it loses
  double rate = 0;
};

std::vector<std::string> directed_links(const LeafSpineShape& shape) {
  std::vector<std::string> links;
  for (int i = 1; i <= shape.leaves; ++i) {
    for (int j = 1; j <= shape.spines; ++j) {
      links.push_back(testing::uplink(i, j));
      links.push_back(testing::downlink(i, j));
    }
    for (int h = 1; h <= shape.hosts; ++h) {
      links.push_back(testing::host_to_leaf(i, h));
      links.push_back(testing::leaf_to_host(i, h));
    }
  }
  return links;
}

std::uint64_t draw(std::mt19937_64& rng, std::uint64_t trials, double p) {
  if (trials == 0 || p <= 0) return 0;
  return std::binomial_distribution<std::uint64_t>(trials, std::min(p, 1.0))(rng);
}

// The streams of one run with `faults`: per ordered host pair, shape.flows flows, each hashed to
// a spine by its source port; the sender's stream carries the path trace, the receiver's the
// counts and the verdict.
std::vector<StreamVerdict> simulate_run(const LeafSpineShape& shape, const std::vector<LinkFault>& faults,
                                        std::uint64_t frames, std::mt19937_64& rng) {
  constexpr std::uint64_t kProbesPerTtl = 400;
  const auto hosts = testing::model_hosts(shape);
  std::vector<StreamVerdict> streams;
  for (const auto& src : hosts) {
    for (const auto& dst : hosts) {
      if (src.agent == dst.agent) continue;
      for (int k = 0; k < shape.flows; ++k) {
        const int port = 49152 + k;
        const testing::ModelPath path = testing::model_path(shape, src, dst, port);
        const auto& links = path.links;
        const auto& answers = path.answers;

        StreamVerdict sent;
        sent.agent = src.agent;
        proto::StreamCounters& tx = sent.stream;
        tx.set_kind("tx");
        tx.set_peer(dst.agent);
        tx.set_stream_id(fmt::format("tx:{}/{}", dst.agent, k + 1));
        tx.set_sender_stream_id(static_cast<std::uint32_t>(k + 1));
        auto& flow = *tx.mutable_flow();
        flow.set_src_address(testing::host_address(src.leaf, src.host));
        flow.set_dst_address(testing::host_address(dst.leaf, dst.host));
        flow.set_src_port(static_cast<std::uint32_t>(port));
        flow.set_dst_port(0x88B5);
        flow.set_protocol("udp");
        // A probe of TTL t crosses links 1..t; what it meets there decides its answer.
        double reach = 1, intact = 1;
        for (std::size_t ttl = 1; ttl <= links.size(); ++ttl) {
          for (const auto& fault : faults) {
            if (fault.link != links[ttl - 1]) continue;
            (fault.corrupts ? intact : reach) *= 1 - fault.rate;
          }
          auto& hop = *tx.add_path();
          hop.set_ttl(static_cast<std::uint32_t>(ttl));
          hop.set_address(answers[ttl - 1]);
          hop.set_probes(kProbesPerTtl);
          hop.set_answers(draw(rng, kProbesPerTtl, reach));
          hop.set_damaged(draw(rng, hop.answers(), 1 - intact));
          hop.set_destination(ttl == links.size());
        }
        streams.push_back(sent);

        const std::uint64_t lost = draw(rng, frames, 1 - reach);
        const std::uint64_t damaged = draw(rng, frames - lost, 1 - intact);
        StreamVerdict received;
        received.agent = dst.agent;
        received.stream.set_kind("rx");
        received.stream.set_peer(src.agent);
        received.stream.set_stream_id(fmt::format("rx:{}/{}", src.agent, k + 1));
        received.stream.set_sender_stream_id(static_cast<std::uint32_t>(k + 1));
        *received.stream.mutable_flow() = flow;
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
};

std::vector<Named> ranked_items(const Localisation& found, const LeafSpineShape& shape) {
  std::vector<Named> items;
  for (const auto& host : found.hosts) {
    for (const auto& port : testing::model_hosts(shape)) {
      if (port.agent != host.agent) continue;
      items.push_back(
          {{testing::host_to_leaf(port.leaf, port.host), testing::leaf_to_host(port.leaf, port.host)}, true});
    }
  }
  for (const auto& suspect : found.suspects) {
    Named item{{suspect.key}, suspect.confidence != Confidence::Low};
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
  double seconds = 0;
};

}  // namespace

int main(int argc, char** argv) {
  LeafSpineShape shape{4, 2, 2, 4};
  std::vector<int> fault_counts{1, 2, 4, 8};
  int sets = 100;
  std::uint64_t seed = 1, frames = 100'000;
  int show = 0;
  CLI::App app{"localisation_sim: random fault sets on a modelled leaf-spine fabric, scored"};
  app.add_option("--leaves", shape.leaves, "leaf switches")->check(CLI::Range(2, 64))->capture_default_str();
  app.add_option("--spines", shape.spines, "spine switches")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--hosts", shape.hosts, "hosts per leaf")->check(CLI::Range(1, 16))->capture_default_str();
  app.add_option("--flows", shape.flows, "flows per ordered host pair")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("--faults", fault_counts, "faulty links per set, one figure each")
      ->check(CLI::Range(0, 64))
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--sets", sets, "random fault sets per fault count")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  app.add_option("--seed", seed, "of the random draws")->capture_default_str();
  app.add_option("--frames", frames, "frames each flow sends")
      ->check(CLI::Range(1, 1'000'000'000))
      ->capture_default_str();
  app.add_option("--show", show, "print this many sets where a fault was missed or a healthy link named")
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  const FabricTopology topology = testing::lab_topology(shape);
  const auto links = directed_links(shape);
  const int host_count = shape.leaves * shape.hosts;
  fmt::print(
      "localisation_sim: {} leaves x {} spines, {} hosts, {} flows per host pair ({} flows), {} links, seed {}\n",
      shape.leaves, shape.spines, host_count, shape.flows, host_count * (host_count - 1) * shape.flows, links.size(),
      seed);
  fmt::print("{:>7} {:>6} {:>10} {:>8} {:>13} {:>14} {:>16}\n", "faults", "sets", "precision", "recall", "false/run",
             "top-k exact", "ms/localisation");
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
      for (const auto& link : chosen)
        faults.push_back({link, std::bernoulli_distribution(0.5)(rng), std::exp(log_rate(rng))});

      const auto streams = simulate_run(shape, faults, frames, rng);
      const auto began = std::chrono::steady_clock::now();
      const Localisation found = localise(streams, &topology);
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
      score.found += covered.size();
      if (show > 0 && (covered != broken || std::any_of(items.begin(), items.end(), [&](const Named& item) {
                         return item.named && !covers(item, broken);
                       }))) {
        --show;
        fmt::print("  set {} of {} faults:", set + 1, count);
        for (const auto& fault : faults) {
          fmt::print(" [{} {} {:.2g}]", fault.link, fault.corrupts ? "corrupts" : "loses", fault.rate);
        }
        fmt::print("\n    named:");
        for (const auto& host : found.hosts) fmt::print(" [host {}: {}]", host.agent, host.problem);
        for (const auto& suspect : found.suspects) {
          fmt::print(" [{} {}{}]", suspect.key, to_string(suspect.confidence),
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
    fmt::print("{:>7} {:>6} {:>10.3f} {:>8.3f} {:>13.2f} {:>14.3f} {:>16.1f}\n", count, score.sets,
               share(score.correct, score.named), share(score.found, score.faults),
               static_cast<double>(score.named - score.correct) / static_cast<double>(score.sets),
               share(score.exact_top_k, score.sets), 1e3 * score.seconds / static_cast<double>(score.sets));
  }
  return 0;
}
