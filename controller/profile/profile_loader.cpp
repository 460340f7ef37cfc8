#include "controller/profile/profile_loader.hpp"

#include "controller/profile/method_keys.hpp"
#include "controller/profile/shift_keys.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <utility>

#include "common/units.hpp"
#include "common/wire_bounds.hpp"
#include "common/yaml_reader.hpp"
#include "controller/engines/engine_slice.hpp"
#include "controller/profile/profile_keys.hpp"
#include "controller/profile/profile_schema.hpp"
#include "controller/profile/threshold_catalog.hpp"

namespace tusk {
namespace {

using namespace std::chrono_literals;

using profile_schema::alternative_of;
using profile_schema::Alternatives;
using profile_schema::alternatives_of;
using profile_schema::default_test_spec;
using profile_schema::find_test_key;
using profile_schema::Origin;
using profile_schema::ReadContext;
using profile_schema::test_key_names;
using profile_schema::TestDraft;
using profile_schema::TestKey;
using profile_schema::with_article;

// The reader's names, short.
using Value = YamlValue;
using Entry = YamlEntry;

// ---- the profile -------------------------------------------------------------------------------

using profile_schema::ProfileContext;
using profile_schema::TestCheck;

class ProfileReader {
 public:
  explicit ProfileReader(YamlErrors& errors) : read_(errors) {}

  Profile read(const YAML::Node& node) {
    Profile profile;
    profile.file = read_.errors().file();
    const Value root = read_.root(node);
    if (node.IsNull()) {
      read_.fail(root, "the profile is empty: expected a mapping with name, agents and tests");
      return profile;
    }
    // A run's report.json is YAML too: said once, not as a wall of unknown keys.
    if (const YAML::Node& document = node;
        document.IsMap() && document["run_id"] && document["tests"] &&
        !(document["agents"] && document["agents"].IsMap())) {  // a missing key's node throws if asked IsMap()
      read_.fail(root, "this is a run's report (report.json), not a profile: tusk-controller report reads it");
      return profile;
    }
    const auto entries = read_.mapping(root, "a mapping of profile keys (name, agents, safety, defaults, tests)");
    if (!entries) return profile;

    const Value* agents = nullptr;
    const Value* safety = nullptr;
    const Value* defaults = nullptr;
    const Value* tests = nullptr;
    OpticsSettings optics;
    for (const auto& entry : *entries) {
      if (entry.key == "name") {
        if (auto name = read_.non_empty_string(entry.value)) profile.name = std::move(*name);
      } else if (entry.key == "description") {
        if (auto text = read_.string(entry.value)) profile.description = std::move(*text);
      } else if (entry.key == "agents") {
        agents = &entry.value;
      } else if (entry.key == "safety") {
        safety = &entry.value;
      } else if (entry.key == "cabling") {
        if (const auto mode = read_.choice(entry.value, {"off", "check", "enforce"})) {
          profile.cabling = *mode == "off"     ? CablingMode::Off
                            : *mode == "check" ? CablingMode::Check
                                               : CablingMode::Enforce;
        }
      } else if (entry.key == "optics") {
        optics = read_optics(entry.value);
      } else if (entry.key == "actions") {
        profile.actions = read_actions(entry.value);
      } else if (entry.key == "baseline") {
        if (auto baseline = read_.non_empty_string(entry.value)) profile.baseline = std::move(*baseline);
      } else if (entry.key == "baseline_fail") {
        if (const auto on = read_.boolean(entry.value)) profile.baseline_fail = *on;
        if (profile.baseline_fail && !has_key(*entries, "baseline")) {
          read_.fail(entry.value,
                     "baseline_fail fails the run on a regression against the baseline: set baseline: "
                     "too (last, or a run id)");
        }
      } else if (entry.key == "series") {
        profile.series = read_series(entry.value);
      } else if (entry.key == "defaults") {
        defaults = &entry.value;
      } else if (entry.key == "tests") {
        tests = &entry.value;
      } else {
        read_.unknown_key(entry, profile_keys::top_level());
      }
    }
    if (!has_key(*entries, "name")) read_.missing(root, "name");
    if (!has_key(*entries, "agents")) read_.missing(root, "agents");
    if (!has_key(*entries, "tests")) read_.missing(root, "tests");

    ProfileContext context;
    if (agents) read_agents(*agents, profile.agents, context);
    if (safety) read_safety(*safety, context);
    profile.safety = context.safety;
    std::vector<Entry> default_entries;
    if (defaults) default_entries = read_defaults(*defaults);
    if (tests) profile.tests = read_tests(*tests, default_entries, context);
    for (auto& test : profile.tests) test.optics = optics;
    return profile;
  }

 private:
  void read_agents(const Value& value, AgentSelector& agents, ProfileContext& context) {
    const auto entries = read_.mapping(value, "a mapping with hosts, patterns, count or wait");
    if (!entries) return;
    const Value* count_value = nullptr;
    bool unreadable = false;  // a selection key that is already reported as wrong
    for (const auto& entry : *entries) {
      const Value& v = entry.value;
      if (entry.key == "hosts") {
        auto hosts = read_unique_names(v);
        unreadable |= !hosts;
        if (hosts) agents.hosts = std::move(*hosts);
      } else if (entry.key == "patterns") {
        auto patterns = read_unique_names(v);
        unreadable |= !patterns;
        if (patterns) agents.patterns = std::move(*patterns);
      } else if (entry.key == "count") {
        count_value = &v;
        const auto count = read_.uint32(v, {1, 100'000});
        unreadable |= !count;
        if (count) agents.count = *count;
      } else if (entry.key == "wait") {
        if (auto wait = read_.duration(v, {0ms, 24h})) agents.wait = *wait;
      } else {
        read_.unknown_key(entry, profile_keys::agents());
      }
    }
    // An empty selection would mean every agent that happens to be connected: never guess that
    // for a traffic generator.
    if (!unreadable && agents.hosts.empty() && agents.patterns.empty() && !agents.count) {
      read_.fail(value, "needs at least one of hosts, patterns or count");
    }
    if (agents.count && agents.patterns.empty() && !agents.hosts.empty() && *agents.count > agents.hosts.size()) {
      read_.fail(*count_value,
                 fmt::format("count {} is more than the {} hosts listed", *agents.count, agents.hosts.size()));
    }
    if (agents.count) {
      context.agent_count = agents.count;
    } else if (agents.patterns.empty() && !agents.hosts.empty()) {
      context.agent_count = static_cast<std::uint32_t>(agents.hosts.size());
    }
  }

  std::optional<std::vector<std::string>> read_unique_names(const Value& value) {
    auto names = read_.list(value, [this](const Value& item) { return read_.non_empty_string(item); });
    if (!names) return std::nullopt;
    for (std::size_t i = 0; i < names->size(); ++i) {
      for (std::size_t first = 0; first < i; ++first) {
        if ((*names)[first] != (*names)[i]) continue;
        read_.fail(read_.element(value, value.node[i], i),
                   fmt::format("'{}' is already listed as {}[{}]", (*names)[i], value.name, first));
        break;
      }
    }
    return names;
  }

  SeriesRetention read_series(const Value& value) {
    SeriesRetention series;
    const auto entries = read_.mapping(value, "a mapping with full, margin or budget");
    if (!entries) return series;
    for (const auto& entry : *entries) {
      if (entry.key == "full") {
        if (const auto full = read_.duration(entry.value, {std::chrono::minutes(1), std::chrono::hours(24 * 7)})) {
          series.full = *full;
        }
      } else if (entry.key == "margin") {
        if (const auto margin = read_.duration(entry.value, {std::chrono::milliseconds(0), std::chrono::hours(1)})) {
          series.margin = *margin;
        }
      } else if (entry.key == "budget") {
        if (const auto budget = read_.size(entry.value, {std::uint64_t{64} << 20, std::uint64_t{1} << 50})) {
          series.budget = *budget;
        }
      } else {
        read_.unknown_key(entry, profile_keys::series());
      }
    }
    return series;
  }

  OpticsSettings read_optics(const Value& value) {
    OpticsSettings optics;
    const auto entries = read_.mapping(value, "a mapping with read, preset or optics thresholds");
    if (!entries) return optics;
    const Value* read_value = nullptr;
    const Value* first_threshold = nullptr;
    OpticsThresholds& own = optics.thresholds;
    // BERs from one error in 1e18 bits up to one in two; powers and temperatures as modules report them.
    const YamlReader::Range<double> ber{1e-18, 0.5};
    for (const auto& entry : *entries) {
      const Value& v = entry.value;
      std::optional<double>* threshold = nullptr;
      if (entry.key == "read") {
        read_value = &v;
        if (const auto read = read_.boolean(v)) optics.read = *read;
      } else if (entry.key == "interval") {
        // ethtool reads a module over a slow bus: at most once a second; a bare 0 turns it off.
        const auto interval = v.node.IsScalar() && v.node.Scalar() == "0"
                                  ? std::optional<std::chrono::milliseconds>(0)
                                  : read_.duration(v, {std::chrono::milliseconds(0), std::chrono::hours(24)});
        if (interval) {
          if (interval->count() > 0 && *interval < wire::kMinOpticsInterval) {
            read_.fail(v, "interval: at least 1s (ethtool reads the module over a slow bus), or 0 for none");
          }
          optics.interval = *interval;
        }
      } else if (entry.key == "preset") {
        if (const auto preset = read_.choice(v, {"none", "field-ber"})) {
          optics.preset = *preset == "field-ber" ? OpticsPreset::field_ber : OpticsPreset::none;
        }
      } else if (entry.key == "max_pre_fec_ber" || entry.key == "warn_pre_fec_ber" || entry.key == "max_symbol_ber" ||
                 entry.key == "warn_symbol_ber") {
        threshold = entry.key == "max_pre_fec_ber"    ? &own.max_pre_fec_ber
                    : entry.key == "warn_pre_fec_ber" ? &own.warn_pre_fec_ber
                    : entry.key == "max_symbol_ber"   ? &own.max_symbol_ber
                                                      : &own.warn_symbol_ber;
        *threshold = read_.decimal(v, ber);
      } else if (entry.key == "min_rx_power_dbm") {
        threshold = &own.min_rx_power_dbm;
        *threshold = read_.decimal(v, {-40.0, 10.0});
      } else if (entry.key == "max_module_temp_c") {
        threshold = &own.max_module_temp_c;
        *threshold = read_.decimal(v, {-40.0, 125.0});
      } else {
        read_.unknown_key(entry, profile_keys::optics());
      }
      if (threshold && !first_threshold) first_threshold = &v;
    }
    if (!optics.read && (first_threshold || optics.preset != OpticsPreset::none)) {
      read_.fail(first_threshold ? *first_threshold : *read_value,
                 "optics thresholds need the optics read: remove read: false, or the thresholds");
    }
    const auto warn_above = [&](const std::optional<double>& warn, const std::optional<double>& max,
                                std::string_view warn_key, std::string_view max_key) {
      if (!warn || !max || *warn <= *max) return;
      for (const auto& entry : *entries) {
        if (entry.key == warn_key) {
          read_.fail(entry.value, fmt::format("{} {:g} is above {} {:g}: a warning comes before the failure", warn_key,
                                              *warn, max_key, *max));
        }
      }
    };
    warn_above(own.warn_pre_fec_ber, own.max_pre_fec_ber, "warn_pre_fec_ber", "max_pre_fec_ber");
    warn_above(own.warn_symbol_ber, own.max_symbol_ber, "warn_symbol_ber", "max_symbol_ber");
    return optics;
  }

  ActionSettings read_actions(const Value& value) {
    ActionSettings actions;
    const auto entries = read_.mapping(value, "a mapping with slurm, kubernetes or exec");
    if (!entries) return actions;
    for (const auto& entry : *entries) {
      const Value& v = entry.value;
      if (entry.key == "slurm") {
        if (const auto on = read_.boolean(v)) actions.slurm = *on;
      } else if (entry.key == "kubernetes") {
        if (const auto on = read_.boolean(v)) actions.kubernetes = *on;
      } else if (entry.key == "exec") {
        if (auto command = read_.non_empty_string(v)) actions.exec = std::move(*command);
      } else if (entry.key == "exec_timeout") {
        if (const auto limit = read_.duration(v, {1s, 24h})) actions.exec_timeout = *limit;
      } else if (entry.key == "max_share") {
        if (const auto share = read_.ratio(v)) {
          if (*share <= 0) {
            read_.fail(v, "a share of the run's nodes above 0 (and at most 100%)");
          } else {
            actions.max_share = *share;
          }
        }
      } else if (entry.key == "dry_run") {
        if (const auto on = read_.boolean(v)) actions.dry_run = *on;
      } else {
        read_.unknown_key(entry, profile_keys::actions());
      }
    }
    if (!actions.any()) read_.fail(value, "say where to act: slurm: true, kubernetes: true or exec: COMMAND");
    return actions;
  }

  void read_safety(const Value& value, ProfileContext& context) {
    const auto entries = read_.mapping(value, "a mapping with max_rate or max_duration");
    if (!entries) return;
    for (const auto& entry : *entries) {
      const Value& v = entry.value;
      if (entry.key == "max_rate") {
        // A bare 0 reads naturally as "no cap" and needs no unit.
        const auto rate = v.node.IsScalar() && v.node.Scalar() == "0"
                              ? std::optional<double>(0)
                              : read_.with_units(v, "a bit rate like 100Gbps", units::parse_bit_rate);
        if (rate) {
          context.safety.max_rate_bps = *rate;
          context.max_rate_text = v.text();
        }
      } else if (entry.key == "max_duration") {
        if (auto duration = read_.duration(v, {1ms, 1000h})) {
          context.safety.max_duration = *duration;
          context.max_duration_text = v.text();
        }
      } else {
        read_.unknown_key(entry, profile_keys::safety());
      }
    }
  }

  // Checks `defaults` on its own, so a bad default is reported even when no test inherits it,
  // and returns its entries for the tests to inherit.
  std::vector<Entry> read_defaults(const Value& value) {
    const auto entries = read_.mapping(value, "a mapping of test keys (e.g. duration: 30s)");
    if (!entries) return {};
    std::vector<Entry> usable;
    TestDraft scratch;
    scratch.spec = default_test_spec(std::nullopt);
    ReadContext context{read_, std::nullopt, true};
    for (const auto& entry : *entries) {
      if (entry.key == "name") {
        read_.errors().add(entry.value.key_pos, entry.value.path,
                           "name cannot have a default: every test needs its own name");
        continue;
      }
      const TestKey* key = find_test_key(entry.key);
      if (!key) {
        read_.unknown_key(entry, test_key_names());
        continue;
      }
      check_alternatives(entry, *entries);
      key->apply(context, entry.value, scratch);
      usable.push_back(entry);
    }
    return usable;
  }

  // `entry` must be an element of `entries`.
  void check_alternatives(const Entry& entry, const std::vector<Entry>& entries) {
    const Alternatives* pair = alternatives_of(entry.key);
    if (!pair) return;
    const std::string_view other = *alternative_of(entry.key);
    const auto other_entry =
        std::find_if(entries.begin(), entries.end(), [&](const Entry& e) { return e.key == other; });
    // Report the clash once, at whichever of the two comes second.
    if (other_entry == entries.end() || &*other_entry > &entry) return;
    read_.errors().add(entry.value.key_pos, entry.value.path,
                       fmt::format("{} and {} cannot both be set: {} is one size, {} a sweep", pair->single,
                                   pair->sweep, pair->single, pair->sweep));
  }

  std::vector<TestSpec> read_tests(const Value& value, const std::vector<Entry>& defaults,
                                   const ProfileContext& context) {
    std::vector<TestSpec> tests;
    if (!value.node.IsSequence()) {
      read_.mismatch(value, "a list of tests");
      return tests;
    }
    if (value.node.size() == 0) {
      read_.fail(value, "tests is empty: a profile needs at least one test");
      return tests;
    }
    std::map<std::string, std::string, std::less<>> name_paths;  // test name → tests[i]
    for (std::size_t i = 0; i < value.node.size(); ++i) {
      const Value item = read_.element(value, value.node[i], i);
      auto test = read_test(item, defaults, context);
      if (!test) continue;
      const std::string& name = test->spec.name;
      if (const Origin* name_origin = test->origin("name")) {
        const auto [first, inserted] = name_paths.emplace(name, item.path);
        if (!inserted) {
          read_.errors().add(name_origin->pos, join_path(item.path, "name"),
                             fmt::format("test name '{}' is already used by {}", name, first->second));
        }
      }
      tests.push_back(std::move(test->spec));
    }
    return tests;
  }

  std::optional<TestDraft> read_test(const Value& value, const std::vector<Entry>& defaults,
                                     const ProfileContext& profile) {
    const auto entries = read_.mapping(value, "a mapping of test keys (name, engine, ...)");
    if (!entries) return std::nullopt;

    ReadContext context{read_, engine_of(*entries, defaults), false};
    TestDraft draft;
    draft.spec = default_test_spec(context.engine);
    draft.spec.pos = value.pos;

    // Defaults first, so that the test's own keys overwrite them.
    context.from_defaults = true;
    for (const auto& entry : defaults) {
      const TestKey* key = find_test_key(entry.key);
      const auto other = alternative_of(entry.key);
      const bool overridden = has_key(*entries, entry.key) && entry.key != "thresholds";
      const bool replaced = other && has_key(*entries, *other);
      if (overridden || replaced || !applies(*key, context.engine)) continue;
      apply(*key, context, entry, draft);
    }
    context.from_defaults = false;
    for (const auto& entry : *entries) {
      const TestKey* key = find_test_key(entry.key);
      if (!key) {
        read_.unknown_key(entry, test_key_names());
        continue;
      }
      if (!applies(*key, context.engine)) {
        read_.errors().add(entry.value.key_pos, entry.value.path,
                           fmt::format("{} is {} key; this test's engine is {}", entry.key, with_article(key->engine),
                                       *context.engine));
        continue;
      }
      check_alternatives(entry, *entries);
      apply(*key, context, entry, draft);
    }

    if (!has_key(*entries, "name")) read_.missing(value, "name");
    if (!has_key(*entries, "engine") && !has_key(defaults, "engine")) {
      read_.missing(value, "engine");
    }
    // A training-step replay's duration is its steps times its period.
    // A shift test's `step` is its duration (each step's).
    if (!has_key(*entries, "duration") && !has_key(defaults, "duration") && !has_key(*entries, "collective") &&
        !has_key(defaults, "collective") && !has_key(*entries, "step")) {
      read_.missing(value, "duration");
    }
    check_test(value, draft, profile);
    auto& thresholds = draft.spec.thresholds;
    for (auto& threshold : safe_default_thresholds(draft.spec.engine, thresholds, draft.spec.pos)) {
      thresholds.push_back(std::move(threshold));
    }
    return draft;
  }

  // The engine as the test (or defaults) names it, when that is a valid engine; other keys are
  // checked against it.
  static std::optional<std::string> engine_of(const std::vector<Entry>& entries, const std::vector<Entry>& defaults) {
    for (const auto* list : {&entries, &defaults}) {
      for (const auto& entry : *list) {
        if (entry.key != "engine") continue;
        if (!entry.value.node.IsScalar()) return std::nullopt;
        const std::string& engine = entry.value.node.Scalar();
        if (!tusk::find_engine(engine)) return std::nullopt;
        return engine;
      }
    }
    return std::nullopt;
  }

  static bool applies(const TestKey& key, const std::optional<std::string>& engine) {
    return key.engine.empty() || !engine || key.engine == *engine;
  }

  void apply(const TestKey& key, ReadContext& context, const Entry& entry, TestDraft& draft) {
    draft.written.insert(entry.key);
    if (key.apply(context, entry.value, draft)) {
      draft.origins[entry.key] = Origin{entry.value.pos, entry.value.text(), context.from_defaults};
    }
  }

  // ---- checks that involve more than one key

  // A window holds whole sample intervals (a sample's deltas belong to one window) and fits the test.
  void check_window(const Value& test, const TestSpec& spec, const std::string& interval_text,
                    const std::string& duration_text) {
    if (!spec.window) return;
    const auto window = *spec.window;
    const std::string path = join_path(join_path(test.path, "thresholds"), "window");
    if (window.count() % std::max<std::int64_t>(spec.sample_interval.count(), 1) != 0) {
      read_.errors().add(spec.window_pos, path,
                         fmt::format("window {} is not a whole number of sample intervals ({})",
                                     units::format_duration(window), interval_text));
    } else if (window > spec.duration) {
      read_.errors().add(spec.window_pos, path,
                         fmt::format("window {} is longer than the test's duration {}", units::format_duration(window),
                                     duration_text));
    }
  }

  // Errors about a value the test inherited name the test's field and point at the default.
  void fail_at(const Value& test, std::string_view key, const Origin* origin, std::string message) {
    if (origin && origin->from_defaults) message += " (set in defaults)";
    read_.errors().add(origin ? origin->pos : test.pos, join_path(test.path, key), std::move(message));
  }

  void check_test(const Value& test, TestDraft& draft, const ProfileContext& profile) {
    TestSpec& spec = draft.spec;
    const SafetyCaps& safety = profile.safety;

    if (const Origin* duration = draft.origin("duration")) {
      if (spec.duration > safety.max_duration) {
        fail_at(test, "duration", duration,
                fmt::format("duration {} is above safety.max_duration {}", duration->text, profile.max_duration_text));
      }
      const Origin* interval = draft.origin("sample_interval");
      if (spec.sample_interval > spec.duration) {
        fail_at(test, "sample_interval", interval ? interval : duration,
                fmt::format("sample_interval {} is longer than the test's duration {}",
                            interval ? interval->text : "1s (the default)", duration->text));
      }
      check_window(test, spec, interval ? interval->text : "1s (the default)", duration->text);
    }

    // An engine's own checks come first: a collective sets the topology (and maybe the duration)
    // that the topology check looks at.
    // The method goes first: it fills in sizes and fan-in that the engine's checks then hold to its framing.
    TestCheck check{draft, profile, [&](std::string_view key, const Origin* origin, std::string message) {
                      fail_at(test, key, origin, std::move(message));
                    }};
    shift_keys::check_shift(check);
    method_keys::check_method(check);
    if (const EngineSlice* engine = tusk::find_engine(spec.engine)) engine->check(check);
    check_topology(test, draft, profile);
  }

  void check_topology(const Value& test, const TestDraft& draft, const ProfileContext& profile) {
    if (!profile.agent_count) return;
    // A method that could not be read may have set the topology (incast): its error says enough.
    if (draft.written.count("method") && !draft.spec.method) return;
    const std::uint32_t agents = *profile.agent_count;
    const Topology topology = draft.spec.topology;
    const Origin* origin = draft.origin("topology");
    const std::string name = fmt::format("{} topology{}", to_string(topology), origin ? "" : " (the default)");
    if (topology == Topology::Pairs && agents % 2 != 0) {
      fail_at(test, "topology", origin,
              fmt::format("{} needs an even number of agents; agents selects {}", name, agents));
    } else if (topology == Topology::Permutation && agents % 2 != 0) {
      fail_at(test, "topology", origin,
              fmt::format("{} pairs each agent with the one n/2 away: it needs an even number of agents; agents "
                          "selects {}",
                          name, agents));
    } else if (topology != Topology::Loopback && topology != Topology::Pairs && agents < 2) {
      fail_at(test, "topology", origin, fmt::format("{} needs at least 2 agents; agents selects {}", name, agents));
    }
  }

  YamlReader read_;
};

}  // namespace

ProfileInvalid::ProfileInvalid(std::vector<ProfileError> errors)
    : std::runtime_error(join_errors(errors)), errors_(std::move(errors)) {}

Profile load_profile_text(std::string_view yaml_text, const std::string& file_name) {
  YamlErrors errors(file_name);
  const std::optional<YAML::Node> root = parse_yaml(yaml_text, errors);
  if (!root) throw ProfileInvalid(errors.take_sorted());
  ProfileReader reader(errors);
  Profile profile = reader.read(*root);
  if (!errors.empty()) throw ProfileInvalid(errors.take_sorted());
  profile.source = std::string(yaml_text);
  return profile;
}

Profile load_profile_file(const std::string& path) {
  YamlErrors errors(path);
  const auto text = read_input_file(errors, "the profile");
  if (!text) throw ProfileInvalid(errors.take_sorted());
  return load_profile_text(*text, path);
}

}  // namespace tusk
