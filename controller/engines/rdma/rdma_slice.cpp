#include "controller/engines/rdma/rdma_slice.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <vector>

#include "common/counter_names.hpp"
#include "common/rates.hpp"
#include "common/rdma_limits.hpp"
#include "common/units.hpp"
#include "common/wire_bounds.hpp"
#include "controller/engines/ecmp_keys.hpp"
#include "controller/engines/rdma/collective.hpp"
#include "controller/engines/rdma/collective_report.hpp"
#include "controller/engines/rdma/rdma_check_load.hpp"
#include "controller/engines/rdma/rdma_reach.hpp"

namespace tusk::rdma {
namespace {

using rdma_limits::kMaxQpsPerPeer;
using rdma_limits::kMaxRails;

using namespace std::chrono_literals;
using profile_schema::ReadContext;
using profile_schema::store;
using profile_schema::TestDraft;
using profile_schema::TestKey;
using R = ReadContext;
using V = YamlValue;
using D = TestDraft;

const YamlReader::Range<std::uint64_t> kMessageRange{1, rdma_limits::kMaxMessageBytes, "1", "1GiB"};

// perftest's -a in a profile: "2..8MiB" is every power of two from 2 B to 8 MiB (FROM doubled
// until TO, and TO itself); or a list of sizes.
std::optional<std::vector<std::uint32_t>> read_message_sizes(YamlReader& read, const YamlValue& value) {
  constexpr std::size_t kMostSizes = 64;
  const std::string text = value.node.IsScalar() ? value.text() : "";
  if (const auto dots = text.find(".."); dots != std::string::npos) {
    std::uint64_t low = 0, high = 0;
    try {
      low = units::parse_size(text.substr(0, dots));
      high = units::parse_size(text.substr(dots + 2));
    } catch (const std::exception&) {
      low = high = 0;
    }
    if (low < kMessageRange.min || high < low || high > kMessageRange.max) {
      read.fail(value, fmt::format("message_sizes '{}': expected FROM..TO, e.g. 2..8MiB (every power of two between), "
                                   "with {} <= FROM <= TO <= {}",
                                   text, kMessageRange.min_text, kMessageRange.max_text));
      return std::nullopt;
    }
    std::vector<std::uint32_t> sizes;
    for (std::uint64_t size = low; size < high; size *= 2) sizes.push_back(static_cast<std::uint32_t>(size));
    sizes.push_back(static_cast<std::uint32_t>(high));
    return sizes;
  }
  auto sizes = read.list(value, [&](const YamlValue& item) -> std::optional<std::uint32_t> {
    const auto bytes = read.size(item, kMessageRange);
    if (!bytes) return std::nullopt;
    return static_cast<std::uint32_t>(*bytes);
  });
  if (sizes && sizes->empty()) {
    read.fail(value, "message_sizes is empty: list at least one size, or leave it out");
    return std::nullopt;
  }
  if (sizes && sizes->size() > kMostSizes) {
    read.fail(value, fmt::format("message_sizes lists {} sizes, more than {}", sizes->size(), kMostSizes));
    return std::nullopt;
  }
  return sizes;
}

const std::vector<TestKey>& keys() {
  static const std::vector<TestKey> rows{
      {"device", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.non_empty_string(v), d, [](D& t, auto s) { params(t.spec).set_device(s); });
       }},
      {"ib_port", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 255}), d, [](D& t, auto n) { params(t.spec).set_port(n); });
       }},
      // ibv_global_route.sgid_index is 8 bits.
      {"gid_index", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, 255}), d, [](D& t, auto n) { params(t.spec).set_gid_index(n); });
       }},
      {"operation", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"write", "write_imm", "send", "read"}), d,
                      [](D& t, auto s) { params(t.spec).set_operation(s); });
       }},
      {"message_size", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.size(v, kMessageRange), d,
                      [](D& t, auto bytes) { params(t.spec).set_message_size(bytes); });
       }},
      // A sweep, one step (an ordinary test) per size, as the method framework runs it.
      {"message_sizes", "rdma",
       [](R& c, const V& v, D& d) {
         auto sizes = read_message_sizes(c.read, v);
         return store(sizes, d, [&v](D& t, const auto& list) {
           MethodSpec sweep;
           sweep.kind = MethodKind::Sweep;
           sweep.frame_sizes = list;
           sweep.pos = v.key_pos;
           t.spec.method = std::move(sweep);
         });
       }},
      {"qps_per_peer", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, kMaxQpsPerPeer}), d,
                      [](D& t, auto n) { params(t.spec).set_qps_per_peer(n); });
       }},
      {"outstanding", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 8192}), d, [](D& t, auto n) { params(t.spec).set_outstanding(n); });
       }},
      {"signal_every", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 8192}), d, [](D& t, auto n) { params(t.spec).set_signal_every(n); });
       }},
      {"inline_threshold", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.size(v, {0, 1024}), d,
                      [](D& t, auto bytes) { params(t.spec).set_inline_threshold(static_cast<std::uint32_t>(bytes)); });
       }},
      {"path_mtu", "rdma",
       [](R& c, const V& v, D& d) {
         auto mtu = c.read.uint32(v, {256, 4096});
         if (mtu && (*mtu & (*mtu - 1)) != 0) {
           c.read.fail(v, fmt::format("path_mtu {} is not one of 256, 512, 1024, 2048, 4096", v.text()));
           mtu.reset();
         }
         return store(mtu, d, [](D& t, auto n) { params(t.spec).set_path_mtu(n); });
       }},
      {"traffic_class", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, 255}), d, [](D& t, auto n) { params(t.spec).set_traffic_class(n); });
       }},
      {"burst_period", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {1ms, 60s}), d, [](D& t, auto ms) {
           params(t.spec).set_burst_period_ms(static_cast<std::uint32_t>(ms.count()));
         });
       }},
      {"burst_duty", "rdma",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && *ratio <= 0) {
           c.read.fail(v, fmt::format("burst_duty {} must be above 0 (e.g. 50%)", v.text()));
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { params(t.spec).set_burst_duty(r); });
       }},
      {"data_check", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.boolean(v), d, [](D& t, bool b) { params(t.spec).set_data_check(b); });
       }},
      // Where one core cannot check every byte a port carries: the payload of every k-th message.
      {"check_every", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, rdma_limits::kMaxCheckEvery}), d,
                      [](D& t, auto n) { params(t.spec).set_check_every(n); });
       }},
      // The QP's local ACK timeout is 4.096 us * 2^n; profiles give a time and get the smallest n
      // that covers it (a VM lab needs about 1 s, or a descheduled guest looks like a lost packet).
      {"ack_timeout", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {1ms, 8000s}), d, [](D& t, auto ms) {
           std::uint32_t exponent = 1;
           while (exponent < 31 && 4.096e-3 * static_cast<double>(std::uint64_t{1} << exponent) < ms.count())
             ++exponent;
           params(t.spec).set_ack_timeout(exponent);
         });
       }},
      {"stall_timeout", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {100ms, 3600s}), d, [](D& t, auto ms) {
           params(t.spec).set_stall_timeout_ms(static_cast<std::uint32_t>(ms.count()));
         });
       }},
      // ---- rdma: training-step replay
      {"collective", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}), d,
                      [](D& t, auto s) { params(t.spec).set_collective(std::string(s)); });
       }},
      {"collective_bytes", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.size(v, {1, std::uint64_t{1} << 40, "1", "1TiB"}), d,
                      [](D& t, auto bytes) { params(t.spec).set_collective_bytes(bytes); });
       }},
      {"steps", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 1'000'000}), d, [](D& t, auto n) { params(t.spec).set_steps(n); });
       }},
      {"step_period", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {1ms, 3600s}), d,
                      [](D& t, auto ms) { params(t.spec).set_step_period_ms(static_cast<std::uint32_t>(ms.count())); });
       }},
      {"compute_time", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {0ms, 3600s}), d,
                      [](D& t, auto ms) { params(t.spec).set_compute_ms(static_cast<std::uint32_t>(ms.count())); });
       }},
      {"scale", "rdma",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && *ratio <= 0) {
           c.read.fail(
               v,
               fmt::format("scale {} must be above 0 (e.g. 1% to replay a job's pattern at a hundredth of its bytes)",
                           v.text()));
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { params(t.spec).set_scale(r); });
       }},
      // What a flow whose QP breaks does: stay down, or connect a new QP once its port is up.
      {"recovery", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"stop", "reconnect"}), d,
                      [](D& t, auto s) { params(t.spec).set_recovery(std::string(s)); });
       }},
      // One device per rail on every agent, rail-aligned: each QP goes from rail r to the peer's rail r.
      {"rails", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, kMaxRails}), d, [](D& t, auto n) { params(t.spec).set_rails(n); });
       }},
      {"pacing", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"auto", "hardware", "software"}), d,
                      [](D& t, auto s) { params(t.spec).set_pacing(std::string(s)); });
       }},
      {"cm_port", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 65535}), d, [](D& t, auto n) { params(t.spec).set_cm_port(n); });
       }},
  };
  return rows;
}

void set_defaults(TestSpec& spec) {
  auto& test = spec.params.emplace<proto::RdmaTest>();
  test.set_operation("write");
  test.set_message_size(64 * 1024);
  test.set_qps_per_peer(1);
  // Path-trace probes per second for the agent's QPs (UDP to 4791 with each QP's source port):
  // few enough for switches' CPU policers.
  test.set_trace_rate(wire::kDefaultTraceRate);
  test.set_outstanding(16);
  test.set_signal_every(1);
  test.set_data_check(true);
  test.set_check_every(1);
  test.set_recovery("stop");
  test.set_pacing("auto");
  test.set_cm_port(rdma_limits::kDefaultCmPort);
  test.set_stall_timeout_ms(rdma_limits::kDefaultStallTimeoutMs);
  test.set_scale(1);
}

// A training-step replay needs its bytes, steps and period; it sets the topology and fills the
// duration, which must hold every step.
void check_collective(profile_schema::TestCheck& check) {
  auto& draft = check.draft;
  TestSpec& spec = draft.spec;
  const auto* collective = draft.origin("collective");
  const std::string_view keys[] = {"collective_bytes", "steps", "step_period", "compute_time", "scale"};
  if (!collective) {
    for (auto key : keys) {
      if (const auto* origin = draft.origin(key)) {
        check.fail(key, origin, fmt::format("{} is for training-step replay: it needs collective", key));
      }
    }
    return;
  }
  for (auto key : {"collective_bytes", "steps", "step_period"}) {
    if (!draft.written.contains(key)) {
      check.fail("collective", collective, fmt::format("collective {} needs {}", collective->text, key));
    }
  }
  const auto& rdma = params(spec);
  if (const auto* compute = draft.origin("compute_time"); compute && rdma.compute_ms() >= rdma.step_period_ms()) {
    check.fail("compute_time", compute,
               fmt::format("compute_time {} leaves no time to communicate in a step_period of {} ms", compute->text,
                           rdma.step_period_ms()));
  }
  const Topology wanted = rdma.collective() == "all_to_all" ? Topology::Mesh : Topology::Ring;
  if (const auto* topology = draft.origin("topology"); topology && spec.topology != wanted) {
    check.fail("topology", topology,
               fmt::format("collective {} runs on a {}; remove topology or set it to {}", collective->text,
                           to_string(wanted), to_string(wanted)));
  }
  spec.topology = wanted;
  const auto steps_ms = std::chrono::milliseconds(std::uint64_t{rdma.steps()} * rdma.step_period_ms());
  if (const auto* duration = draft.origin("duration")) {
    if (spec.duration < steps_ms) {
      check.fail("duration", duration,
                 fmt::format("duration {} is shorter than {} steps of {} ms", duration->text, rdma.steps(),
                             rdma.step_period_ms()));
    }
  } else {
    spec.duration = steps_ms;
    if (spec.duration > check.profile.safety.max_duration) {
      check.fail("steps", draft.origin("steps"),
                 fmt::format("{} steps of {} ms last longer than safety.max_duration {}", rdma.steps(),
                             rdma.step_period_ms(), check.profile.max_duration_text));
    }
  }
}

void check(profile_schema::TestCheck& check) {
  auto& draft = check.draft;
  proto::RdmaTest& test = params(draft.spec);
  check_collective(check);
  // A checked message starts with its header: the agent refuses a smaller one, so validate says so.
  if (test.data_check()) {
    const auto& sweep = draft.spec.method;
    const bool sizes = draft.written.contains("message_sizes") && sweep && !sweep->frame_sizes.empty();
    const std::uint64_t smallest =
        sizes ? *std::min_element(sweep->frame_sizes.begin(), sweep->frame_sizes.end()) : test.message_size();
    if (smallest < rdma_limits::kCheckedMessageHeaderBytes) {
      const char* key = sizes ? "message_sizes" : "message_size";
      check.fail(key, draft.origin(key),
                 fmt::format("{} B cannot hold the {} B header of a checked message (data_check, on by default): "
                             "{}, or set data_check: false",
                             smallest, rdma_limits::kCheckedMessageHeaderBytes,
                             sizes ? "start the sweep at 32 B (e.g. 32..8MiB)" : "use 32 B or more"));
    }
  }
  if (const auto& method = draft.spec.method; method && method->kind != MethodKind::Incast) {
    if (const auto* written = draft.origin("method"); written && draft.written.contains("message_sizes")) {
      check.fail("message_sizes", draft.origin("message_sizes"),
                 "message_sizes is a sweep of its own: not with method:");
    } else if (written) {
      check.fail("method", written,
                 fmt::format("an rdma test sweeps message sizes with message_sizes: (a list, or FROM..TO such as "
                             "2..8MiB); method {} changes frame sizes and searches on lost frames, which are the "
                             "dpdk engine's",
                             to_string(method->kind)));
    }
  }
  if (draft.trace_rate) test.set_trace_rate(*draft.trace_rate);
  // Each QP gets its own UDP source port (from its flow label or QP numbers), so QPs cover paths.
  const auto paths = ecmp_keys::flows_for_paths(check, kMaxQpsPerPeer, "qps_per_peer");
  test.set_ecmp_paths(paths.paths);
  test.set_coverage(paths.coverage);
  if (paths.flows) test.set_qps_per_peer(*paths.flows);
  if (const auto* origin = draft.origin("rate"); origin && draft.rate) {
    const units::Rate& rate = *draft.rate;
    if (rate.kind == units::Rate::Kind::PacketsPerSecond) {
      check.fail("rate", origin, fmt::format("rdma rates are bit rates (e.g. 100Gbps) or max, got '{}'", origin->text));
    } else {
      test.set_rate_bps(rate.value);
      const double cap = check.profile.safety.max_rate_bps;
      if (cap > 0 && rate.kind == units::Rate::Kind::BitsPerSecond && rate.value > cap) {
        check.fail("rate", origin,
                   fmt::format("rate {} is above safety.max_rate {}", origin->text, check.profile.max_rate_text));
      }
    }
  }
  if (const auto* rails = draft.origin("rails"); rails && draft.written.contains("device")) {
    check.fail("device", draft.origin("device"),
               "device names one device for every flow; with rails each agent uses one device per rail (its first "
               "`rails` devices, in --rdma-device order): leave device out");
  }
  const auto* signal = draft.origin("signal_every");
  if (signal && test.signal_every() > test.outstanding()) {
    check.fail("signal_every", signal,
               fmt::format("signal_every {} is above outstanding {}", signal->text, test.outstanding()));
  }
  // Presence, not validity: a malformed burst_duty has been reported already.
  const bool period = draft.written.contains("burst_period");
  const bool duty = draft.written.contains("burst_duty");
  if (period && !duty)
    check.fail("burst_period", draft.origin("burst_period"), "burst_period needs burst_duty (e.g. 50%)");
  if (duty && !period)
    check.fail("burst_duty", draft.origin("burst_duty"), "burst_duty needs burst_period (e.g. 100ms)");
}

void complete_plan(const Profile& profile, const TestSpec& spec, std::size_t agents, proto::Plan& plan) {
  const proto::RdmaTest& test = params(spec);
  *plan.mutable_rdma() = test;
  if (!test.collective().empty()) {
    const std::uint64_t bytes = scaled_collective_bytes(test);
    plan.mutable_rdma()->set_collective_bytes(bytes);
    plan.mutable_rdma()->set_peer_bytes_per_step(peer_bytes_per_step(test.collective(), bytes, agents));
  }
  // "As fast as possible" under a safety cap means "at the cap".
  if (profile.safety.max_rate_bps > 0 && test.rate_bps() == 0) {
    plan.mutable_rdma()->set_rate_bps(profile.safety.max_rate_bps);
  }
}

// The rate's scope: it is the agent's, shared by every QP it sends on (the engine's pacing).
std::string rate_text(const proto::Plan& plan) {
  const auto& r = plan.rdma();
  if (r.rate_bps() <= 0) return "line rate";
  const std::size_t qps = static_cast<std::size_t>(std::max(plan.peers_size(), 1)) *
                          std::max<std::uint32_t>(r.qps_per_peer(), 1) * std::max<std::uint32_t>(r.rails(), 1);
  return fmt::format("{} per agent, shared by its {} sending QP{} ({} each)", units::format_bit_rate(r.rate_bps()), qps,
                     qps == 1 ? "" : "s", units::format_bit_rate(r.rate_bps() / static_cast<double>(qps)));
}

std::string plan_line(const proto::Plan& plan) {
  const auto& r = plan.rdma();
  std::string text = fmt::format(
      "device {} | {} {} messages | {} QPs/peer{}, {} outstanding | {}{}",
      r.device().empty() ? "(the route's)" : r.device(), r.operation(), units::format_size(r.message_size()),
      r.qps_per_peer(),
      r.ecmp_paths() > 0 ? fmt::format(" (cover {} paths at {:g}%)", r.ecmp_paths(), r.coverage() * 100) : "",
      r.outstanding(), rate_text(plan), r.data_check() ? " | data check" : "");
  if (r.rails() > 0) {
    std::vector<std::string> devices;
    for (const auto& rail : r.rail_endpoints()) devices.push_back(rail.device());
    text +=
        fmt::format(" | {} rails{}", r.rails(), devices.empty() ? "" : fmt::format(" ({})", fmt::join(devices, ", ")));
  }
  if (r.port() != 0 || r.gid_index() != 0 || r.path_mtu() != 0) {
    std::vector<std::string> route;
    if (r.port() != 0) route.push_back(fmt::format("ib_port {}", r.port()));
    if (r.gid_index() != 0) route.push_back(fmt::format("gid_index {}", r.gid_index()));
    if (r.path_mtu() != 0) route.push_back(fmt::format("path_mtu {}", r.path_mtu()));
    text += fmt::format(" | {} (checked against rdma_cm's route; a flow whose route differs is refused)",
                        fmt::join(route, ", "));
  }
  if (r.recovery() == "reconnect") text += " | reconnects broken flows";
  if (r.rate_bps() > 0 && r.pacing() != "auto" && !r.pacing().empty()) text += fmt::format(" | {} pacing", r.pacing());
  if (!r.collective().empty()) {
    // The step rhythm: silence, then exactly these bytes to every peer, step after step.
    const std::uint64_t per_step = r.peer_bytes_per_step() * static_cast<std::uint64_t>(plan.peers_size());
    text += fmt::format(
        "\n      {} of {} per rank: {} to each peer per step ({} in all); {} steps every {}: {} compute, then send",
        r.collective(), units::format_size(r.collective_bytes()), units::format_size(r.peer_bytes_per_step()),
        units::format_size(per_step), r.steps(), units::format_duration(std::chrono::milliseconds(r.step_period_ms())),
        units::format_duration(std::chrono::milliseconds(r.compute_ms())));
  }
  return text;
}

// A training replay's line in the summary: busbw, the slowest rank, each rank against the model.
std::any conclude(const TestOutcome& test) {
  auto collective = collective_result(test);
  return collective ? std::any(std::move(*collective)) : std::any();
}

std::string summary_extra(const TestOutcome& test) {
  std::string out;
  if (const auto* collective = std::any_cast<CollectiveResult>(&test.engine_result)) {
    out += fmt::format(
        "  {} over {} ranks{}, {} per step: {} per step (slowest rank {}), algbw {}, busbw {}\n",
        collective->collective, collective->ranks,
        collective->rails > 0 ? fmt::format(" on each of {} rails", collective->rails) : "",
        units::format_size(collective->bytes_per_step),
        units::format_duration(std::chrono::nanoseconds(static_cast<std::int64_t>(collective->time_per_step_s * 1e9))),
        collective->slowest_rank, units::format_bit_rate(bit_rate_of(collective->algbw_bytes_per_s, 1)),
        units::format_bit_rate(bit_rate_of(collective->busbw_bytes_per_s, 1)));
    for (const auto& rank : collective->per_rank) {
      out += fmt::format("    {}{} sent {} per step (model {}), {} steps\n", rank.agent,
                         rank.nic.empty() ? "" : " through " + rank.nic,
                         units::format_size(static_cast<std::uint64_t>(rank.bytes_per_step)),
                         units::format_size(static_cast<std::uint64_t>(rank.model_bytes_per_step)), rank.steps_done);
    }
  }
  return out;
}

// A training replay's block in report.json: per rank and per link, algbw and busbw.
void json_extra(const TestOutcome& test, nlohmann::ordered_json& out) {
  using json = nlohmann::ordered_json;
  if (const auto* collective = std::any_cast<CollectiveResult>(&test.engine_result)) {
    json ranks = json::array();
    for (const auto& rank : collective->per_rank) {
      ranks.push_back({{"agent", rank.agent},
                       {"nic", rank.nic},
                       {"bytes_per_step", rank.bytes_per_step},
                       {"model_bytes_per_step", rank.model_bytes_per_step},
                       {"steps_done", rank.steps_done},
                       {"step_time_mean_s", rank.step_time_mean_s},
                       {"step_time_max_s", rank.step_time_max_s}});
    }
    json links = json::array();
    for (const auto& link : collective->links) {
      links.push_back({{"from", link.from},
                       {"to", link.to},
                       {"nic", link.nic},
                       {"bytes_per_step", link.bytes_per_step},
                       {"rate_bps", link.rate_bps},
                       {"below_best_percent", link.below_best_percent}});
    }
    out["collective"] = {{"name", collective->collective},
                         {"ranks", collective->ranks},
                         {"rails", collective->rails},
                         {"bytes_per_step", collective->bytes_per_step},
                         {"steps", collective->steps},
                         {"time_per_step_s", collective->time_per_step_s},
                         {"slowest_rank", collective->slowest_rank},
                         {"algbw_bytes_per_s", collective->algbw_bytes_per_s},
                         {"busbw_bytes_per_s", collective->busbw_bytes_per_s},
                         {"per_rank", ranks},
                         {"links", links}};
  }
}

// A message_sizes sweep's step: one message size (a step's rate, where a method gives one, is a
// bit rate or a share of the test's).
void apply_step(TestSpec& spec, std::uint32_t message_size, const StepRate& rate) {
  proto::RdmaTest& test = params(spec);
  if (message_size > 0) test.set_message_size(message_size);
  test.clear_message_sizes();
  if (rate.bits_per_second) {
    test.set_rate_bps(*rate.bits_per_second);
  } else {
    test.set_rate_bps(test.rate_bps() * rate.fraction);
  }
}

// A stream per QP on each rail to each peer and from each sender, and a NIC's per rail; twice that,
// for flows a recovery reconnects under a new QP.
std::size_t most_streams(const proto::Plan& plan) {
  const std::size_t qps = std::max<std::size_t>(plan.rdma().qps_per_peer(), 1);
  const std::size_t rails = std::max<std::size_t>(plan.rdma().rails(), 1);
  const std::size_t parties =
      static_cast<std::size_t>(plan.peers_size()) + static_cast<std::size_t>(plan.senders_size()) + 1;
  return 2 * (parties * qps * rails + rails);
}

}  // namespace

const proto::RdmaTest& params(const TestSpec& spec) {
  return params_of<proto::RdmaTest>(spec);
}
proto::RdmaTest& params(TestSpec& spec) {
  return mutable_params_of<proto::RdmaTest>(spec);
}

const EngineSlice& slice() {
  static const EngineSlice engine{
      .name = "rdma",
      .article = "an",
      .keys = keys,
      .set_defaults = set_defaults,
      .check = check,
      .complete_plan = complete_plan,
      .plan_line = plan_line,
      .data_plane_address = data_plane_address,
      .bind_inventories = bind_inventories,
      // A sending QP ("flow"), a receiving one ("sink"), a READ initiator that checks what it pulled
      // ("read"), a READ target ("source"), and a port's NIC counters ("nic").
      .stream_kinds =
          {{"flow", {"throughput_bps", "completion_errors", "stalls", "connect_failures", "latency_p99_ns"}},
           {"sink", {"throughput_bps", "integrity_errors", "completion_errors", "connect_failures"}, false, true},
           {"read",
            {"throughput_bps", "integrity_errors", "completion_errors", "stalls", "connect_failures", "latency_p99_ns"},
            false,
            true},
           {"source", {"completion_errors", "connect_failures"}},
           {"nic",
            {"retransmits", "link_flaps", counters::kOutOfSequence, counters::kPacketSeqErr,
             counters::kLocalAckTimeoutErr, counters::kNpCnpSent, counters::kNpEcnMarkedRocePackets,
             counters::kSymbolError, counters::kPauseFrames, counters::kRxDiscards, "pre_fec_ber"},
            false,
            false,
            false}},
      .thresholds = {"max_flaps", "max_latency_p99", "max_completion_errors", "max_integrity_errors", "max_stalls",
                     "max_connect_failures", "max_retransmits", "min_throughput", "max_host_drops", "max_agents_lost",
                     "max_out_of_sequence", "max_packet_seq_errors", "max_ack_timeouts", "max_cnp",
                     "max_ecn_marked_packets", "max_symbol_errors", "max_pause_frames", "max_rx_discards",
                     "max_pre_fec_ber"},
      .alternatives = {{"message_size", "message_sizes"}},
      .conclude = conclude,
      .summary_extra = summary_extra,
      .json_extra = json_extra,
      .apply_step = apply_step,
      .most_streams = most_streams,
      .check_load = rdma_check_load,
  };
  return engine;
}

}  // namespace tusk::rdma
