#include "controller/engines/dpdk/dpdk_slice.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <vector>

#include "common/units.hpp"

namespace tusk::dpdk {
namespace {

using profile_schema::ReadContext;
using profile_schema::store;
using profile_schema::TestDraft;
using profile_schema::TestKey;
using R = ReadContext;
using V = YamlValue;
using D = TestDraft;

const YamlReader::Range<std::uint64_t> kFrameRange{64, 9216, "64", "9216"};

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
         return store(c.read.non_empty_string(v), d, [](D& t, auto s) { t.spec.dpdk.set_port(s); });
       }},
      {"frame_size", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.size(v, kFrameRange), d, [](D& t, auto bytes) {
           t.spec.dpdk.set_frame_size(static_cast<std::uint32_t>(bytes));
         });
       }},
      {"frame_sizes", "dpdk",
       [](R& c, const V& v, D& d) {
         std::optional<std::vector<std::uint32_t>> sizes;
         if (v.node.IsScalar() && v.node.Scalar() == "imix") {
           sizes = imix_frame_sizes();
         } else if (v.node.IsScalar()) {
           c.read.fail(v,
                       fmt::format("expected a list of frame sizes or imix, got '{}'", v.text()));
         } else {
           sizes = c.read.list(v, [&](const V& item) -> std::optional<std::uint32_t> {
             const auto bytes = c.read.size(item, kFrameRange);
             if (!bytes) return std::nullopt;
             return static_cast<std::uint32_t>(*bytes);
           });
           if (sizes && sizes->empty()) {
             c.read.fail(v, "frame_sizes is empty: list at least one size, or leave it out");
             sizes.reset();
           }
         }
         return store(sizes, d, [](D& t, const auto& list) {
           t.spec.dpdk.mutable_frame_sizes()->Assign(list.begin(), list.end());
         });
       }},
      {"pattern", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"prbs7", "prbs9", "prbs11", "prbs15", "prbs23", "prbs31",
                                        "zeros", "ones", "alternating"}),
                      d, [](D& t, auto s) { t.spec.dpdk.set_pattern(s); });
       }},
      {"invert", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.boolean(v), d, [](D& t, bool b) { t.spec.dpdk.set_invert(b); });
       }},
      {"vlan", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, 4094, "0", "4094"}), d,
                      [](D& t, auto n) { t.spec.dpdk.set_vlan(n); });
       }},
      {"pcp", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, 7, "0", "7"}), d,
                      [](D& t, auto n) { t.spec.dpdk.set_pcp(n); });
       }},
      // Below 0x0600 the field is an 802.3 length, not an EtherType.
      {"ethertype", "dpdk",
       [](R& c, const V& v, D& d) {
         auto type = c.read.uint32(v, {0x0600, 0xFFFF, "0x0600", "0xFFFF"});
         // A tag type would make every switch on the path read the Tusk header as a VLAN tag.
         if (type && (*type == 0x8100 || *type == 0x88A8 || *type == 0x9100)) {
           c.read.fail(v, fmt::format("ethertype 0x{:04X} is a VLAN tag type; tag frames with vlan: and pcp:",
                                      *type));
           type.reset();
         }
         return store(type, d, [](D& t, auto n) { t.spec.dpdk.set_ethertype(n); });
       }},
      {"mode", "dpdk",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"loopback", "peer", "bidirectional"}), d,
                      [](D& t, auto s) { t.spec.dpdk.set_mode(s); });
       }},
      {"confidence", "dpdk",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && (*ratio <= 0 || *ratio >= 1)) {
           c.read.fail(
               v, fmt::format("confidence {} must be above 0 and below 1 (e.g. 95%)", v.text()));
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { t.spec.dpdk.set_confidence(r); });
       }},
      {"target_ber", "dpdk",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && *ratio <= 0) {
           c.read.fail(v, "target_ber must be above 0: no test can show a BER of exactly 0");
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { t.spec.dpdk.set_target_ber(r); });
       }},
  };
  return rows;
}

void set_defaults(TestSpec& spec) {
  spec.dpdk.set_frame_size(1500);
  spec.dpdk.set_pattern("prbs31");
  spec.dpdk.set_ethertype(0x88B5);
  spec.dpdk.set_mode("peer");
  spec.dpdk.set_confidence(0.95);
  spec.dpdk.set_target_ber(1e-12);
}

// The largest frame a stream sends: its size list replaces frame_size.
std::uint32_t largest_frame(const proto::DpdkTest& test) {
  if (test.frame_sizes().empty()) return test.frame_size();
  return *std::max_element(test.frame_sizes().begin(), test.frame_sizes().end());
}

// A rate is a packet or bit rate; a packet rate is held to the safety cap with the largest frame
// the stream sends, as the agent holds it.
void check(profile_schema::TestCheck& check) {
  TestSpec& spec = check.draft.spec;
  const auto* origin = check.draft.origin("rate");
  if (!check.draft.rate || !origin) return;
  const units::Rate& rate = *check.draft.rate;
  using Kind = units::Rate::Kind;
  if (rate.kind == Kind::PacketsPerSecond) spec.dpdk.set_rate_pps(rate.value);
  if (rate.kind == Kind::BitsPerSecond) spec.dpdk.set_rate_bps(rate.value);
  const double cap = check.profile.safety.max_rate_bps;
  if (cap <= 0 || rate.kind == Kind::Max) return;
  if (rate.kind == Kind::BitsPerSecond && rate.value > cap) {
    check.fail("rate", origin,
               fmt::format("rate {} is above safety.max_rate {}", origin->text, check.profile.max_rate_text));
  }
  if (rate.kind == Kind::PacketsPerSecond) {
    const std::uint32_t frame = largest_frame(spec.dpdk);
    const double bps = rate.value * frame * 8;
    if (bps > cap) {
      check.fail("rate", origin,
                 fmt::format("rate {} with {}-byte frames is {}, above safety.max_rate {}", origin->text, frame,
                             units::format_bit_rate(bps), check.profile.max_rate_text));
    }
  }
}

void complete_plan(const Profile& profile, const TestSpec& test, std::size_t, proto::Plan& plan) {
  *plan.mutable_dpdk() = test.dpdk;
  // "As fast as possible" under a safety cap means "at the cap".
  if (profile.safety.max_rate_bps > 0 && test.dpdk.rate_bps() == 0 && test.dpdk.rate_pps() == 0) {
    plan.mutable_dpdk()->set_rate_bps(profile.safety.max_rate_bps);
  }
}

std::string plan_line(const proto::Plan& plan) {
  const auto& d = plan.dpdk();
  std::string rate = "line rate";
  if (d.rate_pps() > 0) {
    const std::uint32_t frame = largest_frame(d);
    rate = fmt::format("{} ({} at {} B)", units::format_packet_rate(d.rate_pps()),
                       units::format_bit_rate(d.rate_pps() * frame * 8), frame);
  } else if (d.rate_bps() > 0) {
    rate = units::format_bit_rate(d.rate_bps());
  }
  return fmt::format("port {} | {} frames | {} | {}{} | mode {}", d.port().empty() ? "(agent default)" : d.port(),
                     d.frame_sizes_size() > 0 ? fmt::format("{} sizes", d.frame_sizes_size()) : fmt::format("{} B", d.frame_size()),
                     rate, d.pattern(), d.invert() ? " inverted" : "", d.mode());
}

// Frames go to the MAC of the peer's first DPDK port.
std::string data_plane_address(const proto::Inventory&, const proto::Inventory& to) {
  return to.dpdk_ports_size() > 0 ? to.dpdk_ports(0).mac() : "";
}

// Every frame's payload is compared bit by bit against the profile's confidence and target.
std::optional<BerTarget> ber_target(const TestSpec& spec) {
  return BerTarget{spec.dpdk.confidence(), spec.dpdk.target_ber()};
}

}  // namespace

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
      // The receiver checks every bit and counts every frame: judged on everything. Its "tx" and
      // "port" streams are informational.
      .stream_kinds = {{"rx", {}, true}},
      .thresholds = {"max_ber", "max_bit_errors", "max_loss", "max_errored_frames", "max_lost_frames", "max_flaps",
                     "max_traffic_gaps", "max_latency_p99", "min_throughput", "max_host_drops", "max_agents_lost"},
      .alternatives = {{"frame_size", "frame_sizes"}},
      .ber_target = ber_target,
  };
  return engine;
}

}  // namespace tusk::dpdk
