#include "controller/profile/profile_schema.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "controller/profile/threshold_catalog.hpp"

namespace tusk::profile_schema {
namespace {

using namespace std::chrono_literals;

// The reader's names, short for the schema tables below.
using Value = YamlValue;
template <typename T>
using Range = YamlReader::Range<T>;

const Range<std::uint64_t> kFrameRange{64, 9216, "64", "9216"};
const Range<std::uint64_t> kMessageRange{1, 2ULL << 30, "1", "2GiB"};

// IMIX by the classic 7:4:1 mix of 64-, 576- and 1500-byte frames, expanded so an agent sends the
// list round-robin.
std::vector<std::uint32_t> imix_frame_sizes() {
  std::vector<std::uint32_t> sizes(7, 64);
  sizes.insert(sizes.end(), 4, 576);
  sizes.push_back(1500);
  return sizes;
}

bool read_thresholds(ReadContext& context, const Value& value, TestDraft& draft) {
  YamlReader& read = context.read;
  const auto entries = read.mapping(value, "a mapping of thresholds (e.g. max_ber: 1e-12)");
  if (!entries) return false;
  std::vector<std::string_view> known;
  for (const auto& kind : threshold_catalog()) known.push_back(kind.key);
  for (const auto& entry : *entries) {
    const ThresholdKind* kind = find_threshold(entry.key);
    if (!kind) {
      read.unknown_key(entry, known, known.size());  // the whole catalog: a reader picks from it
      continue;
    }
    const bool engine_fits =
        !context.engine || std::find(kind->engines.begin(), kind->engines.end(), *context.engine) !=
                               kind->engines.end();
    if (!engine_fits) {
      // A default threshold simply does not apply to tests of another engine.
      if (!context.from_defaults) {
        read.errors().add(entry.value.key_pos, entry.value.path,
                          fmt::format("{} is {} threshold; this test's engine is {}", entry.key,
                                      with_article(kind->engines.front()), *context.engine));
      }
      continue;
    }
    std::optional<double> number;
    switch (kind->value) {
      case ThresholdKind::Value::Ratio:
        number = read.ratio(entry.value);
        break;
      case ThresholdKind::Value::Count:
        if (const auto count =
                read.with_units(entry.value, "a count like 1000", units::parse_count)) {
          number = static_cast<double>(*count);
        }
        break;
      case ThresholdKind::Value::BitRate:
        number = read.with_units(entry.value, "a bit rate like 90Gbps", units::parse_bit_rate);
        break;
      case ThresholdKind::Value::Duration:
        if (const auto ns =
                read.with_units(entry.value, "a duration like 10us", units::parse_duration)) {
          number = static_cast<double>(ns->count());
        }
        break;
    }
    if (!number) continue;
    Threshold threshold{entry.key, std::string(kind->metric), kind->bound, *number,
                        entry.value.key_pos};
    // The test's own threshold replaces a default one with the same key.
    auto& thresholds = draft.spec.thresholds;
    const auto same = std::find_if(thresholds.begin(), thresholds.end(),
                                   [&](const Threshold& t) { return t.key == entry.key; });
    if (same != thresholds.end()) {
      *same = std::move(threshold);
    } else {
      thresholds.push_back(std::move(threshold));
    }
  }
  return true;
}

// Stores the result of reading into the draft when there is one.
template <typename T, typename Store>
bool store(const std::optional<T>& value, TestDraft& draft, Store store_value) {
  if (!value) return false;
  store_value(draft, *value);
  return true;
}

const std::vector<TestKey>& test_keys() {
  using R = ReadContext;
  using V = Value;
  using D = TestDraft;
  static const std::vector<TestKey> keys{
      // ---- every engine
      {"name", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.non_empty_string(v), d, [](D& t, auto s) { t.spec.name = s; });
       }},
      {"engine", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, kEngines), d, [](D& t, auto s) { t.spec.engine = s; });
       }},
      {"duration", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {1ms, 1000h, "1ms", "1000h"}), d,
                      [](D& t, auto ms) { t.spec.duration = ms; });
       }},
      {"sample_interval", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {100ms, 60s, "100ms", "60s"}), d,
                      [](D& t, auto ms) { t.spec.sample_interval = ms; });
       }},
      {"topology", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"loopback", "pairs", "ring", "mesh", "pipeline", "incast", "permutation"}), d,
                      [](D& t, const std::string& s) {
                        t.spec.topology = s == "loopback"   ? Topology::Loopback
                                          : s == "pairs"    ? Topology::Pairs
                                          : s == "ring"     ? Topology::Ring
                                          : s == "mesh"     ? Topology::Mesh
                                          : s == "pipeline" ? Topology::Pipeline
                                          : s == "incast"   ? Topology::Incast
                                                            : Topology::Permutation;
                      });
       }},
      // Both engines take a rate; which kinds each accepts is checked once the engine is known.
      {"rate", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.rate(v), d, [](D& t, auto rate) { t.rate = rate; });
       }},
      {"thresholds", "", read_thresholds},
      // ---- dpdk
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
      // ---- rdma
      {"device", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.non_empty_string(v), d,
                      [](D& t, auto s) { t.spec.rdma.set_device(s); });
       }},
      {"ib_port", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 255, "1", "255"}), d,
                      [](D& t, auto n) { t.spec.rdma.set_port(n); });
       }},
      // ibv_global_route.sgid_index is 8 bits.
      {"gid_index", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, 255, "0", "255"}), d,
                      [](D& t, auto n) { t.spec.rdma.set_gid_index(n); });
       }},
      {"operation", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"write", "write_imm", "send", "read"}), d,
                      [](D& t, auto s) { t.spec.rdma.set_operation(s); });
       }},
      {"message_size", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.size(v, kMessageRange), d,
                      [](D& t, auto bytes) { t.spec.rdma.set_message_size(bytes); });
       }},
      {"message_sizes", "rdma",
       [](R& c, const V& v, D& d) {
         auto sizes =
             c.read.list(v, [&](const V& item) { return c.read.size(item, kMessageRange); });
         if (sizes && sizes->empty()) {
           c.read.fail(v, "message_sizes is empty: list at least one size, or leave it out");
           sizes.reset();
         }
         return store(sizes, d, [](D& t, const auto& list) {
           t.spec.rdma.mutable_message_sizes()->Assign(list.begin(), list.end());
         });
       }},
      {"qps_per_peer", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 1024, "1", "1024"}), d,
                      [](D& t, auto n) { t.spec.rdma.set_qps_per_peer(n); });
       }},
      {"outstanding", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 8192, "1", "8192"}), d,
                      [](D& t, auto n) { t.spec.rdma.set_outstanding(n); });
       }},
      {"signal_every", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 8192, "1", "8192"}), d,
                      [](D& t, auto n) { t.spec.rdma.set_signal_every(n); });
       }},
      {"inline_threshold", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.size(v, {0, 1024, "0", "1024"}), d, [](D& t, auto bytes) {
           t.spec.rdma.set_inline_threshold(static_cast<std::uint32_t>(bytes));
         });
       }},
      {"path_mtu", "rdma",
       [](R& c, const V& v, D& d) {
         auto mtu = c.read.uint32(v, {256, 4096, "256", "4096"});
         if (mtu && (*mtu & (*mtu - 1)) != 0) {
           c.read.fail(
               v, fmt::format("path_mtu {} is not one of 256, 512, 1024, 2048, 4096", v.text()));
           mtu.reset();
         }
         return store(mtu, d, [](D& t, auto n) { t.spec.rdma.set_path_mtu(n); });
       }},
      {"traffic_class", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, 255, "0", "255"}), d,
                      [](D& t, auto n) { t.spec.rdma.set_traffic_class(n); });
       }},
      {"burst_period", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {1ms, 60s, "1ms", "60s"}), d, [](D& t, auto ms) {
           t.spec.rdma.set_burst_period_ms(static_cast<std::uint32_t>(ms.count()));
         });
       }},
      {"burst_duty", "rdma",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && *ratio <= 0) {
           c.read.fail(v, fmt::format("burst_duty {} must be above 0 (e.g. 50%)", v.text()));
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { t.spec.rdma.set_burst_duty(r); });
       }},
      {"data_check", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.boolean(v), d, [](D& t, bool b) { t.spec.rdma.set_data_check(b); });
       }},
      // The QP's local ACK timeout is 4.096 us * 2^n; profiles give a time and get the smallest n
      // that covers it (a VM lab needs about 1 s, or a descheduled guest looks like a lost packet).
      {"ack_timeout", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {1ms, 8000s, "1ms", "8000s"}), d, [](D& t, auto ms) {
           std::uint32_t exponent = 1;
           while (exponent < 31 && 4.096e-3 * static_cast<double>(std::uint64_t{1} << exponent) < ms.count()) ++exponent;
           t.spec.rdma.set_ack_timeout(exponent);
         });
       }},
      {"stall_timeout", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {100ms, 3600s, "100ms", "3600s"}), d, [](D& t, auto ms) {
           t.spec.rdma.set_stall_timeout_ms(static_cast<std::uint32_t>(ms.count()));
         });
       }},
      // ---- rdma: training-step replay
      {"collective", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"all_reduce", "all_gather", "reduce_scatter", "all_to_all"}), d,
                      [](D& t, auto s) { t.spec.rdma.set_collective(std::string(s)); });
       }},
      {"collective_bytes", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.size(v, {1, std::uint64_t{1} << 40, "1", "1TiB"}), d,
                      [](D& t, auto bytes) { t.spec.rdma.set_collective_bytes(bytes); });
       }},
      {"steps", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 1'000'000, "1", "1000000"}), d,
                      [](D& t, auto n) { t.spec.rdma.set_steps(n); });
       }},
      {"step_period", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {1ms, 3600s, "1ms", "3600s"}), d, [](D& t, auto ms) {
           t.spec.rdma.set_step_period_ms(static_cast<std::uint32_t>(ms.count()));
         });
       }},
      {"compute_time", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {0ms, 3600s, "0s", "3600s"}), d, [](D& t, auto ms) {
           t.spec.rdma.set_compute_ms(static_cast<std::uint32_t>(ms.count()));
         });
       }},
      {"scale", "rdma",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && *ratio <= 0) {
           c.read.fail(v, fmt::format("scale {} must be above 0 (e.g. 1% to replay a job's pattern at a hundredth of its bytes)", v.text()));
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { t.spec.rdma.set_scale(r); });
       }},
      {"cm_port", "rdma",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 65535, "1", "65535"}), d,
                      [](D& t, auto n) { t.spec.rdma.set_cm_port(n); });
       }},
  };
  return keys;
}

const std::vector<Alternatives> kAlternatives{
    {"frame_size", "frame_sizes"},
    {"message_size", "message_sizes"},
};

}  // namespace

const std::vector<std::string_view> kEngines{"rdma", "dpdk"};

std::string with_article(std::string_view engine) {
  return fmt::format("{} {}", engine == "rdma" ? "an" : "a", engine);
}

const TestKey* find_test_key(std::string_view name) {
  const auto& keys = test_keys();
  const auto found = std::find_if(keys.begin(), keys.end(),
                                  [name](const TestKey& key) { return key.name == name; });
  return found == keys.end() ? nullptr : &*found;
}

std::vector<std::string_view> test_key_names() {
  std::vector<std::string_view> names;
  for (const auto& key : test_keys()) names.push_back(key.name);
  return names;
}

const Alternatives* alternatives_of(std::string_view key) {
  for (const auto& pair : kAlternatives) {
    if (key == pair.single || key == pair.sweep) return &pair;
  }
  return nullptr;
}

std::optional<std::string_view> alternative_of(std::string_view key) {
  const Alternatives* pair = alternatives_of(key);
  if (!pair) return std::nullopt;
  return key == pair->single ? pair->sweep : pair->single;
}

TestSpec default_test_spec() {
  TestSpec spec;
  spec.dpdk.set_frame_size(1500);
  spec.dpdk.set_pattern("prbs31");
  spec.dpdk.set_ethertype(0x88B5);
  spec.dpdk.set_mode("peer");
  spec.dpdk.set_confidence(0.95);
  spec.dpdk.set_target_ber(1e-12);
  spec.rdma.set_port(1);
  spec.rdma.set_operation("write");
  spec.rdma.set_message_size(64 * 1024);
  spec.rdma.set_qps_per_peer(1);
  spec.rdma.set_outstanding(16);
  spec.rdma.set_signal_every(1);
  spec.rdma.set_data_check(true);
  return spec;
}

}  // namespace tusk::profile_schema
