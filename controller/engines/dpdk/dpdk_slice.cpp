#include "controller/engines/dpdk/dpdk_slice.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "common/counter_names.hpp"
#include "common/rates.hpp"
#include "common/units.hpp"
#include "common/wire_bounds.hpp"
#include "controller/engines/dpdk/dpdk_check_load.hpp"
#include "controller/engines/ecmp_keys.hpp"
#include "controller/outcome/run_outcome.hpp"
#include "controller/profile/method_keys.hpp"

namespace tusk::dpdk {
namespace {

using profile_schema::ReadContext;
using profile_schema::store;
using profile_schema::TestDraft;
using profile_schema::TestKey;
using R = ReadContext;
using V = YamlValue;
using D = TestDraft;

// The keys that only IPv4/UDP frames have.
constexpr std::string_view kIpv4UdpKeys[] = {"dscp", "ecn", "ttl", "udp_port", "udp_source_port", "trace_rate"};

// IMIX by the classic 7:4:1 mix of 64-, 576- and 1500-byte frames, expanded so an agent sends the
// list round-robin.
std::vector<std::uint32_t> imix_frame_sizes() {
  std::vector<std::uint32_t> sizes(7, 64);
  sizes.insert(sizes.end(), 4, 576);
  sizes.push_back(1500);
  return sizes;
}

const std::vector<TestKey>& keys() {
  static const std::vector<TestKey> rows{
      {"port", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.non_empty_string(v), d, [](D& t, auto s) { params(t.spec).set_port(s); });
       }},
      {"frame_size", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(method_keys::read_frame_size(c.read, v), d,
                      [](D& t, auto bytes) { params(t.spec).set_frame_size(bytes); });
       }},
      {"frame_sizes", "dpdk",
       [](R& c, const V& v, D& d) {
         std::optional<std::vector<std::uint32_t>> sizes;
         if (v.node.IsScalar() && v.node.Scalar() == "imix") {
           sizes = imix_frame_sizes();
         } else if (v.node.IsScalar()) {
           c.read.fail(v, fmt::format("expected a list of frame sizes or imix, got '{}'", v.text()));
         } else {
           sizes = method_keys::read_frame_sizes(c.read, v);
         }
         return store(sizes, d, [](D& t, const auto& list) {
           params(t.spec).mutable_frame_sizes()->Assign(list.begin(), list.end());
         });
       }},
      {"pattern", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"prbs7", "prbs9", "prbs11", "prbs15", "prbs23", "prbs31", "zeros", "ones",
                                        "alternating"}),
                      d, [](D& t, auto s) { params(t.spec).set_pattern(s); });
       }},
      {"invert", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.boolean(v), d, [](D& t, bool b) { params(t.spec).set_invert(b); });
       }},
      {"vlan", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, 4094}), d, [](D& t, auto n) { params(t.spec).set_vlan(n); });
       }},
      {"pcp", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, 7}), d, [](D& t, auto n) { params(t.spec).set_pcp(n); });
       }},
      // Below 0x0600 the field is an 802.3 length, not an EtherType.
      {"ethertype", "dpdk",
       [](R& c, const V& v, D& d) {
         auto type = c.read.uint32(v, {0x0600, 0xFFFF, "0x0600", "0xFFFF"});
         // A tag type would make every switch on the path read the Tusk header as a VLAN tag.
         if (type && (*type == 0x8100 || *type == 0x88A8 || *type == 0x9100)) {
           c.read.fail(v, fmt::format("ethertype 0x{:04X} is a VLAN tag type; tag frames with vlan: and pcp:", *type));
           type.reset();
         }
         return store(type, d, [](D& t, auto n) { params(t.spec).set_ethertype(n); });
       }},
      {"encapsulation", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"ethernet", "ipv4_udp"}), d,
                      [](D& t, auto s) { params(t.spec).set_encapsulation(s); });
       }},
      {"dscp", "dpdk",
       [](R& c, const V& v, D& d) {
         if (!v.node.IsSequence()) {
           return store(c.read.uint32(v, {0, 63}), d, [](D& t, auto n) {
             params(t.spec).set_dscp(n);
             params(t.spec).clear_dscp_classes();
           });
         }
         // Several traffic classes: the flows to each peer take them in turn.
         auto classes = c.read.list(v, [&c](const V& item) { return c.read.uint32(item, {0, 63}); });
         if (classes && classes->empty()) {
           c.read.fail(v, "dscp: give one class, or a list of at least one");
           classes.reset();
         }
         for (std::size_t i = 0; classes && i < classes->size(); ++i) {
           if (std::find(classes->begin(), classes->begin() + static_cast<std::ptrdiff_t>(i), (*classes)[i]) !=
               classes->begin() + static_cast<std::ptrdiff_t>(i)) {
             c.read.fail(v, fmt::format("dscp: class {} is listed twice", (*classes)[i]));
             classes.reset();
           }
         }
         return store(classes, d, [](D& t, const std::vector<std::uint32_t>& list) {
           auto& test = params(t.spec);
           test.set_dscp(list.front());
           test.clear_dscp_classes();
           if (list.size() > 1) test.mutable_dscp_classes()->Add(list.begin(), list.end());
         });
       }},
      {"ecn", "dpdk",
       [](R& c, const V& v, D& d) {
         // RFC 3168's codepoints by name or number.
         static const std::vector<std::string_view> names{"not_ect", "ect1", "ect0", "ce"};
         std::optional<std::uint32_t> codepoint;
         if (!v.text().empty() && std::isalpha(static_cast<unsigned char>(v.text().front()))) {
           if (const auto name = c.read.choice(v, names)) {
             codepoint = static_cast<std::uint32_t>(std::find(names.begin(), names.end(), *name) - names.begin());
           }
         } else {
           codepoint = c.read.uint32(v, {0, 3});
         }
         return store(codepoint, d, [](D& t, auto n) { params(t.spec).set_ecn(n); });
       }},
      {"ttl", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 255}), d, [](D& t, auto n) { params(t.spec).set_ttl(n); });
       }},
      {"udp_port", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 65535}), d, [](D& t, auto n) { params(t.spec).set_udp_port(n); });
       }},
      {"udp_source_port", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 65535}), d, [](D& t, auto n) { params(t.spec).set_udp_source_port(n); });
       }},
      {"flows_per_peer", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, wire::kMaxDpdkFlowsPerPeer}), d,
                      [](D& t, auto n) { params(t.spec).set_flows_per_peer(n); });
       }},
      {"queues", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, wire::kMaxDpdkQueues}), d,
                      [](D& t, auto n) { params(t.spec).set_queues(n); });
       }},
      {"burst_frames", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, wire::kMaxBurstFrames}), d,
                      [](D& t, auto n) { params(t.spec).set_burst_frames(n); });
       }},
      {"mode", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"loopback", "peer", "bidirectional"}), d,
                      [](D& t, auto s) { params(t.spec).set_mode(s); });
       }},
      {"confidence", "dpdk",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && (*ratio <= 0 || *ratio >= 1)) {
           c.read.fail(v, fmt::format("confidence {} must be above 0 and below 1 (e.g. 95%)", v.text()));
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { params(t.spec).set_confidence(r); });
       }},
      {"target_ber", "dpdk",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && *ratio <= 0) {
           c.read.fail(v, "target_ber must be above 0: no test can show a BER of exactly 0");
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { params(t.spec).set_target_ber(r); });
       }},
  };
  return rows;
}

void set_defaults(TestSpec& spec) {
  auto& test = spec.params.emplace<proto::DpdkTest>();
  test.set_frame_size(1500);
  test.set_pattern("prbs31");
  test.set_ethertype(0x88B5);
  test.set_mode("peer");
  test.set_confidence(0.95);
  test.set_target_ber(1e-12);
  test.set_encapsulation("ethernet");
  test.set_ttl(64);
  test.set_udp_port(0x88B5);
  test.set_udp_source_port(49152);  // the first dynamic port
  test.set_flows_per_peer(1);
  test.set_burst_frames(1);
  test.set_trace_rate(wire::kDefaultTraceRate);  // used by ipv4_udp frames only
}

// Each DSCP class gets as many flows to each peer as every other: flows_per_peer is a multiple of
// the classes, rounded up when it was worked out from ecmp_paths, refused when written. The
// thresholds on the TOS byte read what only ipv4_udp frames carry.
void check_classes(profile_schema::TestCheck& check) {
  proto::DpdkTest& test = params(check.draft.spec);
  for (const auto& threshold : check.draft.spec.thresholds) {
    const bool reads_tos = threshold.metric == counters::kCeMarked || threshold.metric == counters::kDscpRewrites;
    if (reads_tos && test.encapsulation() != "ipv4_udp") {
      const profile_schema::Origin origin{threshold.pos, threshold.key, false};
      check.fail(threshold.key, &origin,
                 fmt::format("{} reads the IPv4 header's {}: set encapsulation: ipv4_udp", threshold.key,
                             threshold.metric == counters::kCeMarked ? "ECN field" : "DSCP"));
    }
  }
  const auto classes = static_cast<std::uint32_t>(test.dscp_classes_size());
  if (classes < 2 || test.flows_per_peer() % classes == 0) return;
  if (const auto* written = check.draft.origin("flows_per_peer")) {
    check.fail("flows_per_peer", written,
               fmt::format("{} flows per peer cannot carry {} DSCP classes evenly: give a multiple of {}",
                           test.flows_per_peer(), classes, classes));
    return;
  }
  const std::uint32_t flows = (test.flows_per_peer() + classes - 1) / classes * classes;
  if (flows > wire::kMaxDpdkFlowsPerPeer) {
    check.fail("dscp", check.draft.origin("dscp"),
               fmt::format("{} DSCP classes need {} flows per peer, more than {}", classes, flows,
                           wire::kMaxDpdkFlowsPerPeer));
    return;
  }
  test.set_flows_per_peer(flows);
}

// A method's own sizes replace the test's: RFC 2544's default list loses what the framing cannot
// hold (64 B for ipv4_udp), a size written in the method is refused.
void check_method_sizes(profile_schema::TestCheck& check, std::uint32_t least) {
  auto& method = check.draft.spec.method;
  if (!method || method->frame_sizes.empty()) return;
  auto& sizes = method->frame_sizes;
  if (method->default_sizes) {
    sizes.erase(std::remove_if(sizes.begin(), sizes.end(), [least](std::uint32_t size) { return size < least; }),
                sizes.end());
    return;
  }
  for (const auto size : sizes) {
    if (size < least) {
      check.fail("method", check.draft.origin("method"),
                 fmt::format("method frame size {} B cannot hold ipv4_udp headers: the least is {} B", size, least));
      return;
    }
  }
}

// The IPv4/UDP keys belong to ipv4_udp frames; the EtherType to ethernet ones; the flow count
// comes from the declared paths when there are some, and the flows' source ports must not wrap.
void check_encapsulation(profile_schema::TestCheck& check) {
  proto::DpdkTest& test = params(check.draft.spec);
  const bool ipv4 = test.encapsulation() == "ipv4_udp";
  for (const std::string_view key : kIpv4UdpKeys) {
    if (const auto* origin = check.draft.origin(key); origin && !ipv4) {
      check.fail(key, origin, fmt::format("{} is an IPv4/UDP field: set encapsulation: ipv4_udp", key));
    }
  }
  if (ipv4) {
    // Ethernet 14, a VLAN tag 4, IPv4 20, UDP 8 and the Tusk header 34: at least 76 bytes.
    const std::uint32_t least = 76 + (test.vlan() != 0 || test.pcp() != 0 ? 4 : 0);
    const SizeMix mix = size_mix(test.frame_size(), test.frame_sizes());
    const char* key = test.frame_sizes_size() > 0 ? "frame_sizes" : "frame_size";
    check_method_sizes(check, least);
    if (mix.smallest_bytes < least && !(check.draft.spec.method && !check.draft.spec.method->frame_sizes.empty())) {
      const auto* origin = check.draft.origin(key);
      check.fail(key, origin ? origin : check.draft.origin("encapsulation"),
                 fmt::format("{} B frames cannot hold ipv4_udp headers: the least is {} B{}", mix.smallest_bytes, least,
                             least > 76 ? " with a VLAN tag" : ""));
    }
  }
  if (const auto* origin = check.draft.origin("ethertype"); origin && ipv4) {
    check.fail("ethertype", origin,
               "ipv4_udp frames carry EtherType 0x0800: leave ethertype out, or use encapsulation: ethernet");
  }
  if (check.draft.trace_rate) test.set_trace_rate(*check.draft.trace_rate);
  const auto paths = ecmp_keys::flows_for_paths(check, wire::kMaxDpdkFlowsPerPeer, "flows_per_peer");
  test.set_ecmp_paths(paths.paths);
  test.set_coverage(paths.coverage);
  if (paths.flows) test.set_flows_per_peer(*paths.flows);
  check_classes(check);
  if (test.udp_source_port() + test.flows_per_peer() - 1 > 65535) {
    const auto* origin = check.draft.origin("udp_source_port");
    check.fail(
        "udp_source_port", origin ? origin : check.draft.origin("flows_per_peer"),
        fmt::format("{} flows from source port {} would pass 65535", test.flows_per_peer(), test.udp_source_port()));
  }
}

// The sizes a stream sends: its size list replaces frame_size.
SizeMix frame_mix(const proto::DpdkTest& test) {
  return size_mix(test.frame_size(), test.frame_sizes());
}

// A rate is a packet or bit rate; a packet rate is held to the safety cap with the largest frame
// the stream sends, as the agent holds it.
void check(profile_schema::TestCheck& check) {
  check_encapsulation(check);
  // Trains are spaced by the rate: at line rate every frame is already back to back.
  const bool bursts = params(check.draft.spec).burst_frames() > 1 ||
                      (check.draft.spec.method && check.draft.spec.method->kind == MethodKind::BurstAbsorption);
  if (bursts && (!check.draft.rate || check.draft.rate->kind == units::Rate::Kind::Max)) {
    check.fail("rate", check.draft.origin("rate"),
               "trains of frames (burst_frames, or method burst_absorption) are spaced so that the mean is the "
               "test's rate: give rate (a bit or packet rate, not max)");
  }
  const auto* origin = check.draft.origin("rate");
  if (!check.draft.rate || !origin) return;
  const units::Rate& rate = *check.draft.rate;
  using Kind = units::Rate::Kind;
  proto::DpdkTest& test = params(check.draft.spec);
  if (rate.kind == Kind::PacketsPerSecond) test.set_rate_pps(rate.value);
  if (rate.kind == Kind::BitsPerSecond) test.set_rate_bps(rate.value);
  const double cap = check.profile.safety.max_rate_bps;
  if (cap <= 0 || rate.kind == Kind::Max) return;
  const auto& method = check.draft.spec.method;
  const SizeMix mix = method && !method->frame_sizes.empty() ? size_mix(0, method->frame_sizes) : frame_mix(test);
  const OfferedRate offered = offered_rate(test.rate_pps(), test.rate_bps(), mix);
  if (offered.capped_bps <= cap) return;
  if (rate.kind == Kind::BitsPerSecond) {
    check.fail("rate", origin,
               fmt::format("rate {} is above safety.max_rate {}", origin->text, check.profile.max_rate_text));
  } else {
    check.fail("rate", origin,
               fmt::format("rate {} with {}-byte frames is {}, above safety.max_rate {}", origin->text,
                           mix.largest_bytes, units::format_bit_rate(offered.capped_bps), check.profile.max_rate_text));
  }
}

// Every value the agent, the printer and the reports need, resolved here once.
void complete_plan(const Profile& profile, const TestSpec& spec, std::size_t, proto::Plan& plan) {
  proto::DpdkTest& test = *plan.mutable_dpdk();
  test = params(spec);
  // "As fast as possible" under a safety cap means "at the cap".
  if (profile.safety.max_rate_bps > 0 && test.rate_bps() == 0 && test.rate_pps() == 0) {
    test.set_rate_bps(profile.safety.max_rate_bps);
  }
  const SizeMix mix = frame_mix(test);
  const OfferedRate offered = offered_rate(test.rate_pps(), test.rate_bps(), mix);
  test.set_mean_frame_bytes(mix.mean_bytes);
  test.set_largest_frame_bytes(static_cast<std::uint32_t>(mix.largest_bytes));
  test.set_offered_pps(offered.pps);
  test.set_offered_bps(offered.bps);
}

// A method's step: one size, and a share of the test's rate or a rate of its own.
void apply_step(TestSpec& spec, std::uint32_t frame_size, const StepRate& rate) {
  proto::DpdkTest& test = params(spec);
  if (frame_size > 0) {
    test.set_frame_size(frame_size);
    test.clear_frame_sizes();
  }
  if (rate.bits_per_second || rate.packets_per_second) {
    test.set_rate_bps(rate.bits_per_second.value_or(0));
    test.set_rate_pps(rate.packets_per_second.value_or(0));
  } else {
    test.set_rate_bps(test.rate_bps() * rate.fraction);
    test.set_rate_pps(test.rate_pps() * rate.fraction);
  }
}

// A burst_absorption step: trains of `frames` frames.
void apply_burst(TestSpec& spec, std::uint32_t frames) {
  params(spec).set_burst_frames(frames);
}

// "1500 B", or "mean 353.8 B" for a size mix.
std::string frame_text(const proto::DpdkTest& d) {
  return d.frame_sizes_size() > 0 ? fmt::format("mean {:.1f} B", d.mean_frame_bytes())
                                  : fmt::format("{} B", d.largest_frame_bytes());
}

std::string plan_line(const proto::Plan& plan) {
  const auto& d = plan.dpdk();
  std::string rate = "line rate";
  if (d.rate_pps() > 0) {
    rate = fmt::format("{} ({} at {})", units::format_packet_rate(d.offered_pps()),
                       units::format_bit_rate(d.offered_bps()), frame_text(d));
  } else if (d.rate_bps() > 0) {
    rate = fmt::format("{} ({} at {})", units::format_bit_rate(d.offered_bps()),
                       units::format_packet_rate(d.offered_pps()), frame_text(d));
  }
  // The rate's scope: the agent's port sends it, shared by every flow to every peer.
  if (d.rate_pps() > 0 || d.rate_bps() > 0) {
    const std::size_t flows =
        static_cast<std::size_t>(std::max(plan.peers_size(), 1)) * std::max<std::uint32_t>(d.flows_per_peer(), 1);
    rate += fmt::format(" per agent, shared by its {} flow{}", flows, flows == 1 ? "" : "s");
  }
  std::string framing;
  if (d.encapsulation() == "ipv4_udp") {
    const std::string dscp = d.dscp_classes_size() > 1 ? fmt::format("classes {}", fmt::join(d.dscp_classes(), ","))
                                                       : fmt::format("{}", d.dscp());
    framing = fmt::format(" | ipv4_udp dscp {} ecn {} ttl {} | {} flow{}/peer, udp {}->{}", dscp, d.ecn(), d.ttl(),
                          d.flows_per_peer(), d.flows_per_peer() == 1 ? "" : "s",
                          d.flows_per_peer() == 1
                              ? fmt::format("{}", d.udp_source_port())
                              : fmt::format("{}-{}", d.udp_source_port(), d.udp_source_port() + d.flows_per_peer() - 1),
                          d.udp_port());
    if (d.ecmp_paths() > 0) framing += fmt::format(" (covers {} paths at {:g}%)", d.ecmp_paths(), d.coverage() * 100);
  } else if (d.flows_per_peer() > 1) {
    framing = fmt::format(" | {} flows/peer", d.flows_per_peer());
  }
  if (d.queues() > 1) framing += fmt::format(" | {} queues", d.queues());
  return fmt::format(
      "port {} | {} frames | {} | {}{} | mode {}{}", d.port().empty() ? "(agent default)" : d.port(),
      d.frame_sizes_size() > 0 ? fmt::format("{} sizes", d.frame_sizes_size()) : fmt::format("{} B", d.frame_size()),
      rate, d.pattern(), d.invert() ? " inverted" : "", d.mode(), framing);
}

// Frames go to the MAC of the peer's first DPDK port.
std::string data_plane_address(const proto::Inventory&, const proto::Inventory& to) {
  return to.dpdk_ports_size() > 0 ? to.dpdk_ports(0).mac() : "";
}

// IPv4/UDP frames go to the address of the peer's first DPDK port ("192.168.101.10/24": the part
// before the prefix).
std::string data_plane_ipv4(const proto::Inventory&, const proto::Inventory& to) {
  if (to.dpdk_ports_size() == 0) return "";
  const std::string& cidr = to.dpdk_ports(0).ipv4();
  return cidr.substr(0, cidr.find('/'));
}

// Every frame's payload is compared bit by bit against the profile's confidence and target.
std::optional<BerTarget> ber_target(const TestSpec& spec) {
  const proto::DpdkTest& test = params(spec);
  return BerTarget{test.confidence(), test.target_ber()};
}

// The rate each agent's port offered, as the planner resolved it (one object per agent: a ring's
// or an incast's agents may differ in peers, not in rate).
void json_extra(const TestOutcome& test, nlohmann::ordered_json& out) {
  auto offered = nlohmann::ordered_json::object();
  for (const auto& [agent, plan] : test.plans) {
    const auto& d = plan.dpdk();
    offered[agent] = {{"pps", d.offered_pps()},
                      {"bps", d.offered_bps()},
                      {"mean_frame_bytes", d.mean_frame_bytes()},
                      {"largest_frame_bytes", d.largest_frame_bytes()}};
  }
  out["offered"] = std::move(offered);
}

// A "tx" stream per flow to each peer, an "rx" per flow from each sender (a loopback test is its own
// peer), and the port's; twice that, so a receiver that tells a stray sender's frames apart keeps them.
std::size_t most_streams(const proto::Plan& plan) {
  const std::size_t flows = std::max<std::size_t>(plan.dpdk().flows_per_peer(), 1);
  const std::size_t parties =
      static_cast<std::size_t>(plan.peers_size()) + static_cast<std::size_t>(plan.senders_size()) + 1;
  return 2 * (parties * flows + 1);
}

}  // namespace

const proto::DpdkTest& params(const TestSpec& spec) {
  return params_of<proto::DpdkTest>(spec);
}
proto::DpdkTest& params(TestSpec& spec) {
  return mutable_params_of<proto::DpdkTest>(spec);
}

const EngineSlice& slice() {
  static const EngineSlice engine{
      .name = "dpdk",
      .article = "a",
      .keys = keys,
      .set_defaults = set_defaults,
      .check = check,
      .complete_plan = complete_plan,
      .plan_line = plan_line,
      .data_plane_address = data_plane_address,
      .data_plane_ipv4 = data_plane_ipv4,
      // The receiver checks every bit and counts every frame: judged on everything. Its "tx" and
      // "port" streams are informational.
      .stream_kinds = {{"rx", {}, true, true}},
      .thresholds = {"max_ber", "max_bit_errors", "max_loss", "max_errored_frames", "max_lost_frames", "max_flaps",
                     "max_traffic_gaps", "max_latency_p99", "min_throughput", "max_host_drops", "max_agents_lost",
                     "max_ce_marked", "min_ce_marked", "max_dscp_rewrites"},
      .alternatives = {{"frame_size", "frame_sizes"}},
      .json_extra = json_extra,
      .apply_step = apply_step,
      .apply_burst = apply_burst,
      .ber_target = ber_target,
      .most_streams = most_streams,
      .check_load = dpdk_check_load,
  };
  return engine;
}

}  // namespace tusk::dpdk
