// Everything the controller knows of one engine, registered in engine_table() the way testpmd
// registers its forwarding engines: the profile keys only it takes and their defaults, what it adds
// to each agent's plan, the line `plan` prints, how an agent reaches a peer with it, the stream
// kinds it reports and what each is judged on, and the thresholds it measures. Code outside
// controller/engines/<engine>/ reaches an engine through this table, never by its name.
#pragma once

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <any>
#include <cstddef>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "controller/profile/profile.hpp"
#include "controller/profile/profile_schema.hpp"
#include "tusk.pb.h"

namespace tusk {

struct TestOutcome;

// The confidence of a BER bound and the BER a test means to show.
struct BerTarget {
  double confidence = 0;
  double target_ber = 0;
};

// One kind of stream an engine reports (StreamCounters.kind) and the metrics it is judged on.
struct StreamKind {
  std::string_view kind;
  std::vector<std::string_view> judged_metrics;
  bool judged_on_everything = false;  // a receiver that checks every bit ("rx")
  // It counts what its peer sent (a receiver, a READ initiator): the reports draw it as the
  // peer -> agent pair; any other stream with a peer is agent -> peer.
  bool receives = false;
  // It counts one flow (a frame stream, a QP), not a port: flows between the same two hosts are
  // siblings, and some failing beside passing ones point at their paths (path_faults.hpp).
  bool per_flow = true;
};

struct EngineSlice {
  std::string_view name;     // as a profile's `engine:` writes it
  std::string_view article;  // "a" or "an", for messages: "frame_size is a dpdk key"
  // The test keys only this engine takes; each row's `engine` is `name`.
  const std::vector<profile_schema::TestKey>& (*keys)();
  // The defaults a test of this engine starts from, before any key is read.
  void (*set_defaults)(TestSpec& spec);
  // Checks that involve more than one key or the profile's caps; may resolve values (a rate into
  // the engine's parameters, a collective's topology and duration).
  void (*check)(profile_schema::TestCheck& check);
  // The engine's part of one agent's plan, every value resolved: `agents` is the test's agent count.
  void (*complete_plan)(const Profile& profile, const TestSpec& test, std::size_t agents, proto::Plan& plan);
  // What `tusk-controller plan` prints for one agent's plan.
  std::string (*plan_line)(const proto::Plan& plan);
  // The address an agent with inventory `from` uses to reach `to` with this engine ("" if none).
  std::string (*data_plane_address)(const proto::Inventory& from, const proto::Inventory& to);
  // Where it also needs the peer's IPv4 address beside that (DPDK frames that route), that address.
  std::string (*data_plane_ipv4)(const proto::Inventory& from, const proto::Inventory& to) = nullptr;
  // What else of the agents' inventories `agent`'s plan needs (an RDMA test's rails: its devices
  // and each peer's address on every rail), filled in; or why it cannot be ("" when it can).
  std::string (*bind_inventories)(proto::Plan& plan, const std::string& agent,
                                  const std::map<std::string, proto::Inventory>& inventories) = nullptr;
  // Stream kinds judged on something; any other kind it reports is informational (shown, not judged).
  std::vector<StreamKind> stream_kinds;
  std::vector<std::string_view> thresholds;  // threshold keys it measures (threshold_catalog)
  // Pairs of its keys of which a test may set only one (frame_size or frame_sizes).
  std::vector<profile_schema::Alternatives> alternatives;
  // What only this engine works out of a finished test (a training replay's busbw and slowest
  // rank): computed once, when the test is judged, and kept in TestOutcome::engine_result.
  std::any (*conclude)(const TestOutcome& test) = nullptr;
  // Report extras: views of engine_result beside the test's streams, as summary lines and as
  // members of the test's report.json object.
  std::string (*summary_extra)(const TestOutcome& test) = nullptr;
  void (*json_extra)(const TestOutcome& test, nlohmann::ordered_json& out) = nullptr;
  // A method's step (controller/method/): one frame size instead of the test's size or sizes (0:
  // keep them) and the rate `rate` says. nullptr: the engine has no size or rate a method can change.
  void (*apply_step)(TestSpec& spec, std::uint32_t frame_size, const StepRate& rate) = nullptr;
  // A burst_absorption step: the senders' traffic in trains of `frames` frames back to back, the
  // mean still the test's rate. nullptr: the engine cannot send trains.
  void (*apply_burst)(TestSpec& spec, std::uint32_t frames) = nullptr;
  // The BER its streams' compared bits are held to, when the engine compares bits.
  std::optional<BerTarget> (*ber_target)(const TestSpec& spec) = nullptr;
  // The most streams one sample or result of an agent with this plan can honestly hold (its flows
  // or QPs to and from each peer, its ports), with room to spare: the controller drops any beyond
  // it, so what an agent sends costs no more than what its plan made. nullptr: most_streams_of()'s
  // generic bound.
  std::size_t (*most_streams)(const proto::Plan& plan) = nullptr;
  // With the inventory of the agent `plan` is for and the test's plans of every agent (by name,
  // for what its senders ask of it): a warning when checking what the plan has it receive would
  // take kCheckLoadSaid (check_share.hpp) of the cores that check it or more, by the rates the
  // agent measured of its own cores (issue 61); "" when not, or when the inventory does not say.
  // nullptr: the engine checks nothing per byte.
  std::string (*check_load)(const proto::Plan& plan, const proto::Inventory& inventory,
                            const std::map<std::string, const proto::Plan*>& test_plans) = nullptr;
};

// The most streams an agent with `plan` may report per sample or result: its engine's most_streams,
// or, for an engine without one (or none known), 64 per peer and sender and 64 of its own.
std::size_t most_streams_of(const proto::Plan& plan);

// Every engine the controller knows, in the order profiles and help list them.
const std::vector<const EngineSlice*>& engine_table();
// nullptr for a name no engine has.
const EngineSlice* find_engine(std::string_view name);

// Adds an engine to the table after the built-in ones, for an engine that lives outside
// controller/engines/ (a test's, a plugin's). Throws std::invalid_argument for a name already in
// the table. Call it before any profile is read: the table is not locked.
void register_engine(const EngineSlice& engine);
// Takes a registered engine out of the table again; no-op for a name it does not hold.
void unregister_engine(std::string_view name);

// The parameters a slice keeps in TestSpec::params, as type Params. The const form throws
// std::logic_error for a test that holds another engine's; the other makes them when the test has
// none of that type yet (a test whose engine is missing still reads its keys, to report errors).
template <typename Params>
const Params& params_of(const TestSpec& spec) {
  if (const auto* params = std::any_cast<Params>(&spec.params)) return *params;
  throw std::logic_error(
      fmt::format("test '{}' (engine '{}') holds another engine's parameters", spec.name, spec.engine));
}
template <typename Params>
Params& mutable_params_of(TestSpec& spec) {
  if (auto* params = std::any_cast<Params>(&spec.params)) return *params;
  return spec.params.emplace<Params>();
}

}  // namespace tusk
