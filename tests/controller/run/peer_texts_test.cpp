// Every string an agent can send, at every depth of the protocol, arrives cut and printable; one
// function does it where frames arrive, so a field added to tusk.proto is covered without a line.
#include "controller/run/peer_texts.hpp"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "common/printable.hpp"
#include "common/wire_bounds.hpp"
#include "controller/run/session_input.hpp"
#include "tests/support/raw_agent.hpp"
#include "tests/support/registry_fixture.hpp"

namespace tusk::testing {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

constexpr std::string_view kHostileStart =
    "x\n2026-01-01T00:00:00.000 tusk-controller info: test 0 't0': pass\x1b[2J\x01";

// A line of its own with the controller's verdict in it, a screen clear, a character that
// straddles the cut, and more than any bound: what a hostile agent writes in any text.
std::string hostile_text() {
  std::string text(kHostileStart);
  text.append(wire::kMaxPeerMessageBytes - 1 - text.size(), 'y');
  return text + "\xc3\xa9" + std::string(5000, 'z');
}

// One alternative of each oneof per element of a repeated field, so that a Record is filled as a
// sample, an event, a result and an optics sample.
constexpr int kOneofAlternatives = 4;

// Sets every string field of `message`, and of the messages it holds, `depth` levels down (of a
// oneof the `choice`th alternative; of a repeated message field one element per alternative);
// returns how many texts it set.
std::size_t fill_every_text(Message& message, int depth, int choice = 0) {
  std::size_t set = 0;
  const auto* reflection = message.GetReflection();
  const auto* descriptor = message.GetDescriptor();
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const FieldDescriptor* field = descriptor->field(i);
    if (const auto* oneof = field->containing_oneof();
        oneof && field->index_in_oneof() != choice % oneof->field_count()) {
      continue;
    }
    if (field->type() == FieldDescriptor::TYPE_STRING) {
      field->is_repeated() ? reflection->AddString(&message, field, hostile_text())
                           : reflection->SetString(&message, field, hostile_text());
      ++set;
    } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE && depth > 0) {
      if (!field->is_repeated()) {
        set += fill_every_text(*reflection->MutableMessage(&message, field), depth - 1);
        continue;
      }
      // Maps through their own API: reflection on a map field crashes a ThreadSanitizer build,
      // whose protobuf headers lay the map out unlike the library. Only a stream has maps.
      if (field->is_map()) continue;
      for (int alternative = 0; alternative < kOneofAlternatives; ++alternative)
        set += fill_every_text(*reflection->AddMessage(&message, field), depth - 1, alternative);
    }
  }
  if (descriptor == proto::StreamCounters::descriptor()) {
    auto& stream = static_cast<proto::StreamCounters&>(message);
    (*stream.mutable_counters())[hostile_text()] = 1;
    (*stream.mutable_gauges())[hostile_text()] = 1;
    set += 2;
  }
  return set;
}

// A map of any other message would be a text this test cannot fill: it says so.
void expect_maps_only_in_streams(const google::protobuf::Descriptor& descriptor, int depth) {
  for (int i = 0; i < descriptor.field_count(); ++i) {
    const FieldDescriptor* field = descriptor.field(i);
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE || depth == 0) continue;
    EXPECT_TRUE(!field->is_map() || &descriptor == proto::StreamCounters::descriptor())
        << field->full_name() << ": a map this test does not fill (give it a walk like a stream's)";
    expect_maps_only_in_streams(*field->message_type(), depth - 1);
  }
}

// Calls `check` with every string field's text, at every depth (a stream's map keys too).
void each_text(const Message& message, const std::function<void(const std::string&, const std::string&)>& check) {
  if (message.GetDescriptor() == proto::StreamCounters::descriptor()) {
    const auto& stream = static_cast<const proto::StreamCounters&>(message);
    for (const auto& [name, value] : stream.counters()) check("counters", name);
    for (const auto& [name, value] : stream.gauges()) check("gauges", name);
  }
  // Field by field, never touching a map through reflection (see fill_every_text).
  const auto* reflection = message.GetReflection();
  const auto* descriptor = message.GetDescriptor();
  for (int f = 0; f < descriptor->field_count(); ++f) {
    const FieldDescriptor* field = descriptor->field(f);
    if (field->is_map()) continue;
    const int count =
        field->is_repeated() ? reflection->FieldSize(message, field) : reflection->HasField(message, field);
    for (int i = 0; i < count; ++i) {
      if (field->type() == FieldDescriptor::TYPE_STRING) {
        check(field->full_name(), field->is_repeated() ? reflection->GetRepeatedString(message, field, i)
                                                       : reflection->GetString(message, field));
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        each_text(field->is_repeated() ? reflection->GetRepeatedMessage(message, field, i)
                                       : reflection->GetMessage(message, field),
                  check);
      }
    }
  }
}

// Before: each text was cut and escaped where one part of the controller stored it (records in
// RunData, errors in the session, inventory where it was printed), and the registry's own log
// line printed an agent's engines raw; a text no one had thought of went out as sent.
TEST(PeerTexts, EveryStringAnAgentCanSendAtEveryDepthArrivesCutOnACharacterAndPrintable) {
  // Each kind an Envelope can carry, filled to the bottom of the protocol.
  const auto* oneof = proto::Envelope::descriptor()->FindOneofByName("body");
  ASSERT_NE(oneof, nullptr);
  expect_maps_only_in_streams(*proto::Envelope::descriptor(), 8);
  for (int k = 0; k < oneof->field_count(); ++k) {
    proto::Envelope envelope;
    const FieldDescriptor* body = oneof->field(k);
    const std::size_t set = fill_every_text(*envelope.GetReflection()->MutableMessage(&envelope, body), 8);
    const PeerTextTally tally = make_peer_texts_safe(envelope);
    EXPECT_EQ(tally.cut, set) << body->name();
    EXPECT_EQ(tally.escaped, set) << body->name();
    std::size_t seen = 0;
    each_text(envelope, [&](const std::string& field, const std::string& text) {
      ++seen;
      EXPECT_EQ(text.find_first_of("\n\r\x1b\x01"), std::string::npos) << field;
      EXPECT_EQ(first_invalid_utf8(text), std::string::npos) << field;
      EXPECT_EQ(text.rfind(printable(kHostileStart), 0), 0u) << field << ": shown escaped, not dropped";
      EXPECT_LE(text.size(), wire::kMaxPeerMessageBytes + 64) << field;
      EXPECT_EQ(text.substr(text.size() - 3), "...") << field << ": marked as cut";
    });
    EXPECT_EQ(seen, set) << body->name();
  }
}

TEST(PeerTexts, AStreamsCounterNamesAreCutShorterThanItsTextsAndStayKeysOfItsMaps) {
  proto::Envelope envelope;
  auto* stream = envelope.mutable_records()->add_records()->mutable_sample()->add_streams();
  stream->set_stream_id("rx\x01");
  (*stream->mutable_counters())["evil\nname" + std::string(500, 'n')] = 3;
  (*stream->mutable_counters())["rx_frames"] = 7;
  const PeerTextTally tally = make_peer_texts_safe(envelope);
  EXPECT_EQ(tally.cut, 1u);
  EXPECT_EQ(tally.escaped, 2u);
  const auto& kept = envelope.records().records(0).sample().streams(0);
  EXPECT_EQ(kept.stream_id(), "rx\\x01");
  ASSERT_EQ(kept.counters().size(), 2u);
  EXPECT_EQ(kept.counters().at("rx_frames"), 7u);
  for (const auto& [name, value] : kept.counters()) {
    if (name == "rx_frames") continue;
    EXPECT_EQ(name.rfind("evil\\nname", 0), 0u);
    EXPECT_LE(name.size(), kMaxPeerNameBytes + 4);
    EXPECT_EQ(value, 3u);
  }
}

TEST(PeerTexts, PlainTextIsLeftAsItIsAndCountsNothing) {
  proto::Envelope envelope;
  auto* inventory = envelope.mutable_hello()->mutable_inventory();
  inventory->set_hostname("gpu01.example");
  inventory->add_notes("no RDMA device found: r\xc3\xa9seau");  // UTF-8 is text, not escaped
  const std::string before = envelope.SerializeAsString();
  EXPECT_FALSE(make_peer_texts_safe(envelope).any());
  EXPECT_EQ(envelope.SerializeAsString(), before);
}

// Through a real registry: the hello's inventory and a later error arrive escaped, the agent's
// tally counts them, and a name the controller would have to rewrite is refused instead.
TEST(PeerTexts, TheRegistryTakesAnAgentsTextsSafeAndCountsThem) {
  RegistryFixture fixture;
  {
    RawAgent agent(fixture.port());
    proto::Envelope hello;
    hello.mutable_hello()->set_protocol_version(kProtocolVersion);
    hello.mutable_hello()->set_agent_name("lab-a");
    hello.mutable_hello()->set_agent_instance(1);
    hello.mutable_hello()->mutable_state()->set_first_unacked_seq(1);
    hello.mutable_hello()->mutable_inventory()->add_engines("dpdk\x1b[2J");
    hello.mutable_hello()->mutable_inventory()->add_notes("fine\nresult: all 1 tests passed (exit 0)");
    agent.send(hello);
    ASSERT_TRUE(agent.next(proto::Envelope::kHelloAck));
    proto::Envelope error;
    error.mutable_error()->set_message("gone\x1b[2J" + std::string(4000, 'e'));
    agent.send(error);
    ASSERT_TRUE(fixture.eventually([&] { return !fixture.faults().empty(); }));
    const auto view = fixture.registry().agent("lab-a");
    ASSERT_TRUE(view);
    EXPECT_EQ(view->inventory.engines(0), "dpdk\\x1b[2J");
    EXPECT_EQ(view->inventory.notes(0), "fine\\nresult: all 1 tests passed (exit 0)");
    EXPECT_EQ(view->texts_escaped, 3u);
    EXPECT_EQ(view->texts_cut, 1u);
    const std::string fault = fixture.faults().front();
    EXPECT_EQ(fault.find('\x1b'), std::string::npos) << fault;
    EXPECT_LE(fault.size(), wire::kMaxPeerMessageBytes + 64);
  }
  for (const std::string& name : {std::string("lab\nb"), std::string("lab\\b"), std::string(254, 'a')}) {
    RawAgent agent(fixture.port());
    agent.hello(name, 2);
    const auto refused = agent.next(proto::Envelope::kError);
    ASSERT_TRUE(refused) << name;
    EXPECT_EQ(refused->error().code(), proto::Error::BAD_MESSAGE);
    EXPECT_NE(refused->error().message().find("is not one: at most 253 printable ASCII characters"), std::string::npos)
        << refused->error().message();
    EXPECT_EQ(refused->error().message().find('\n'), std::string::npos);
  }
}

}  // namespace
}  // namespace tusk::testing
