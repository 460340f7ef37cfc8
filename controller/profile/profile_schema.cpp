#include "controller/profile/profile_schema.hpp"

#include "controller/profile/localisation_keys.hpp"
#include "controller/profile/method_keys.hpp"
#include "controller/profile/shift_keys.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <chrono>
#include <utility>

#include "common/wire_bounds.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/profile/threshold_catalog.hpp"

namespace tusk::profile_schema {
namespace {

using namespace std::chrono_literals;

// The reader's names, short for the schema tables below.
using Value = YamlValue;
template <typename T>
using Range = YamlReader::Range<T>;

bool read_thresholds(ReadContext& context, const Value& value, TestDraft& draft) {
  YamlReader& read = context.read;
  const auto entries = read.mapping(value, "a mapping of thresholds (e.g. max_ber: 1e-12)");
  if (!entries) return false;
  std::vector<std::string_view> known{"window", "min_link_coverage"};
  for (const auto& kind : threshold_catalog()) known.push_back(kind.key);
  for (const auto& entry : *entries) {
    if (entry.key == "window") {
      if (const auto window = read.duration(entry.value, {1ms, 1000h})) {
        draft.spec.window = *window;
        draft.spec.window_pos = entry.value.pos;
      }
      continue;
    }
    // Judged on the test's flows together (link_coverage), not on each stream.
    if (entry.key == "min_link_coverage") {
      if (const auto share = read.ratio(entry.value)) draft.spec.min_link_coverage = *share;
      continue;
    }
    const ThresholdKind* kind = find_threshold(entry.key);
    if (!kind) {
      read.unknown_key(entry, known, known.size());  // the whole catalog: a reader picks from it
      continue;
    }
    if (context.engine && !engine_measures(*context.engine, entry.key)) {
      // A default threshold simply does not apply to tests of another engine.
      if (!context.from_defaults) {
        const EngineSlice* measuring = engine_measuring(entry.key);
        read.errors().add(
            entry.value.key_pos, entry.value.path,
            fmt::format("{} is {} threshold; this test's engine is {}", entry.key,
                        measuring ? with_article(measuring->name) : std::string("no engine's"), *context.engine));
      }
      continue;
    }
    std::optional<double> number;
    switch (kind->value) {
      case ThresholdKind::Value::Ratio:
        number = read.ratio(entry.value);
        break;
      case ThresholdKind::Value::Count:
        if (const auto count = read.with_units(entry.value, "a count like 1000", units::parse_count)) {
          number = static_cast<double>(*count);
        }
        break;
      case ThresholdKind::Value::BitRate:
        number = read.with_units(entry.value, "a bit rate like 90Gbps", units::parse_bit_rate);
        break;
      case ThresholdKind::Value::Duration:
        if (const auto ns = read.with_units(entry.value, "a duration like 10us", units::parse_duration)) {
          number = static_cast<double>(ns->count());
        }
        break;
    }
    if (!number) continue;
    Threshold threshold{entry.key, std::string(kind->metric), kind->bound, *number, entry.value.key_pos};
    // The test's own threshold replaces a default one with the same key.
    auto& thresholds = draft.spec.thresholds;
    const auto same =
        std::find_if(thresholds.begin(), thresholds.end(), [&](const Threshold& t) { return t.key == entry.key; });
    if (same != thresholds.end()) {
      *same = std::move(threshold);
    } else {
      thresholds.push_back(std::move(threshold));
    }
  }
  return true;
}

// The keys every engine's tests take.
const std::vector<TestKey>& common_keys() {
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
         return store(c.read.choice(v, engine_names()), d, [](D& t, auto s) { t.spec.engine = s; });
       }},
      {"duration", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {1ms, 1000h}), d, [](D& t, auto ms) { t.spec.duration = ms; });
       }},
      {"sample_interval", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.duration(v, {wire::kMinSampleInterval, wire::kMaxSampleInterval}), d,
                      [](D& t, auto ms) { t.spec.sample_interval = ms; });
       }},
      {"topology", "",
       [](R& c, const V& v, D& d) {
         return store(
             c.read.choice(v, {"loopback", "pairs", "ring", "mesh", "pipeline", "incast", "permutation", "shift"}), d,
             [](D& t, const std::string& s) {
               t.spec.topology = s == "loopback"   ? Topology::Loopback
                                 : s == "pairs"    ? Topology::Pairs
                                 : s == "ring"     ? Topology::Ring
                                 : s == "mesh"     ? Topology::Mesh
                                 : s == "pipeline" ? Topology::Pipeline
                                 : s == "incast"   ? Topology::Incast
                                 : s == "shift"    ? Topology::Shift
                                                   : Topology::Permutation;
             });
       }},
      // Both engines take a rate; which kinds each accepts is checked once the engine is known.
      {"rate", "",
       [](R& c, const V& v, D& d) { return store(c.read.rate(v), d, [](D& t, auto rate) { t.rate = rate; }); }},
      {"ecmp_paths", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {1, 64}), d, [](D& t, auto n) { t.ecmp_paths = n; });
       }},
      {"coverage", "",
       [](R& c, const V& v, D& d) {
         auto ratio = c.read.ratio(v);
         if (ratio && (*ratio <= 0 || *ratio >= 1)) {
           c.read.fail(v, fmt::format("coverage {} must be above 0 and below 1 (e.g. 99%)", v.text()));
           ratio.reset();
         }
         return store(ratio, d, [](D& t, double r) { t.coverage = r; });
       }},
      {"trace_rate", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.uint32(v, {0, wire::kMaxTraceRate}), d, [](D& t, auto n) { t.trace_rate = n; });
       }},
      {"outliers", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.choice(v, {"off", "warn", "fail"}), d, [](D& t, const std::string& s) {
           t.spec.outliers = s == "off" ? OutlierMode::Off : s == "warn" ? OutlierMode::Warn : OutlierMode::Fail;
         });
       }},
      {"outlier_k", "",
       [](R& c, const V& v, D& d) {
         return store(c.read.decimal(v, {2.0, 100.0}), d, [](D& t, double k) { t.spec.outlier_k = k; });
       }},
      {"shifts", "", shift_keys::read_shifts},
      {"step", "", shift_keys::read_step},
      {"group_by", "", shift_keys::read_group_by},
      {"scope", "", shift_keys::read_scope},
      {"localisation", "", localisation_keys::read_localisation},
      {"thresholds", "", read_thresholds},
      {"method", "", method_keys::read_method},
  };
  return keys;
}

// The common keys, then each engine's; made again when an engine was registered since.
const std::vector<TestKey>& test_keys() {
  static std::vector<TestKey> keys;
  static std::size_t engines_seen = 0;
  if (keys.empty() || engines_seen != engine_table().size()) {
    keys = common_keys();
    for (const EngineSlice* engine : engine_table())
      keys.insert(keys.end(), engine->keys().begin(), engine->keys().end());
    engines_seen = engine_table().size();
  }
  return keys;
}

}  // namespace

bool engine_measures(std::string_view engine, std::string_view threshold_key) {
  const EngineSlice* slice = find_engine(engine);
  return slice &&
         std::find(slice->thresholds.begin(), slice->thresholds.end(), threshold_key) != slice->thresholds.end();
}

const EngineSlice* engine_measuring(std::string_view threshold_key) {
  for (const EngineSlice* engine : engine_table()) {
    if (engine_measures(engine->name, threshold_key)) return engine;
  }
  return nullptr;
}

std::vector<std::string_view> engine_names() {
  std::vector<std::string_view> names;
  for (const EngineSlice* engine : engine_table()) names.push_back(engine->name);
  return names;
}

std::string with_article(std::string_view engine) {
  const EngineSlice* slice = find_engine(engine);
  return fmt::format("{} {}", slice ? slice->article : "a", engine);
}

const TestKey* find_test_key(std::string_view name) {
  const auto& keys = test_keys();
  const auto found = std::find_if(keys.begin(), keys.end(), [name](const TestKey& key) { return key.name == name; });
  return found == keys.end() ? nullptr : &*found;
}

std::vector<std::string_view> test_key_names() {
  std::vector<std::string_view> names;
  for (const auto& key : test_keys()) names.push_back(key.name);
  return names;
}

const Alternatives* alternatives_of(std::string_view key) {
  for (const EngineSlice* engine : engine_table()) {
    for (const auto& pair : engine->alternatives) {
      if (key == pair.single || key == pair.sweep) return &pair;
    }
  }
  return nullptr;
}

std::optional<std::string_view> alternative_of(std::string_view key) {
  const Alternatives* pair = alternatives_of(key);
  if (!pair) return std::nullopt;
  return key == pair->single ? pair->sweep : pair->single;
}

TestSpec default_test_spec(const std::optional<std::string>& engine) {
  TestSpec spec;
  if (const EngineSlice* slice = engine ? find_engine(*engine) : nullptr) slice->set_defaults(spec);
  return spec;
}

}  // namespace tusk::profile_schema
